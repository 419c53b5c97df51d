"""job_test.py — pitstop.Job (python/pitstop.py) on real gloo process groups, each rank a process
started as torchrun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), running job_worker.py:

  uninterrupted  1 rank, 24 steps: records, epoch-end checkpoints, end "done", planned_iters
  resize         1 → 2 → 1 ranks (SIGUSR1 to rank 0, then to rank 1 ONLY): every step once, each
                 step's global batch the sampler's, every sample once per epoch (indices and
                 digests), both ranks stop after the same step, final parameters equal to the
                 uninterrupted run's (the gradient weighing: B=7 splits 4/3 over two ranks)
  ddp            2 ranks as plain torchrun starts them (no PITSTOP_*), the model in
                 DistributedDataParallel: no records, and the comm hook's weighing gives the
                 uninterrupted run's parameters too (DDP's own averaging would not: slices of 4 and 3)
  sigterm        SIGTERM to rank 0 of 2: agreed stop reported as SIGTERM, checkpoint after it
  last           a stop asked at the last step: the job is done ("done", no "stopped")
  plain          no PITSTOP_* at all: no records, no handlers, no checkpoint; same parameters
  restart        outside pitstop with checkpoint_dir: a stopped run started again resumes
  refused        a short last batch leaving a rank empty, a changed global batch, an untracked
                 state in the checkpoint: exit 2 with one line naming it
  atomic         a checkpoint save made to fail at its fsync, its rename: the previous checkpoint
                 stays the newest valid one, LATEST names it, no temp file is left
Run by tests/python/job.sh."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

import pitstop

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
T = tempfile.mkdtemp(prefix="pit-job-")
N, B, EPOCHS = 52, 7, 3
IPE = -(-N // B)
TOTAL = EPOCHS * IPE
CLEAN = {k: v for k, v in os.environ.items()
         if not k.startswith("PITSTOP_") and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world, out, args=(), pitstop_env=None):
    """world ranks of job_worker.py; returns [(rc, stdout, stderr)] by rank."""
    port, procs = free_port(), []
    for r in range(world):
        env = dict(CLEAN, OMP_NUM_THREADS="1")
        if world > 1 or pitstop_env is not None:
            env.update(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port))
        env.update(pitstop_env or {})
        procs.append(subprocess.Popen([PY, os.path.join(HERE, "job_worker.py"), "--out", out, *args], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    res = []
    for p in procs:
        o, e = p.communicate(timeout=300)
        res.append((p.returncode, o, e))
    return res


def records(stdout):
    return [json.loads(l[8:]) for l in stdout.splitlines() if l.startswith("PITSTOP ")]


def steps_of(out, world_max=2):
    got = {}
    for r in range(world_max):
        path = f"{out}.rank{r}.jsonl"
        if os.path.exists(path):
            for l in open(path):
                x = json.loads(l)
                got.setdefault(x["step"], []).append(x)
    return got


def params(out):
    return json.load(open(f"{out}.params.json"))


def flat(ps):
    v = []
    for p in ps:
        v += flat(p) if isinstance(p, list) else [p]
    return v


def close(a, b, rel):
    fa, fb = flat(a), flat(b)
    worst = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(fa, fb))
    assert len(fa) == len(fb) and worst <= rel, f"parameters differ: worst relative difference {worst:.3g}"
    return worst


def ok(rs, what):
    for r, (rc, o, e) in enumerate(rs):
        assert rc == 0, f"{what}: rank {r} exit {rc}: {e[-2000:]}"


def penv(run, gen, ck, resume=""):
    return {"PITSTOP_RUN": run, "PITSTOP_GEN": str(gen), "PITSTOP_CHECKPOINT_DIR": ck, "PITSTOP_RESUME": resume}


def check_steps(out, first, last):
    """Steps first..last each run once (all ranks of it), each its sampler batch; returns the steps."""
    smp = pitstop.GlobalSampler(N, B, 11)
    got = steps_of(out)
    assert sorted(got) == list(range(first, last + 1)), f"steps {sorted(got)}"
    for st, xs in got.items():
        world = xs[0]["world"]
        assert len(xs) == world and sorted(x["rank"] for x in xs) == list(range(world)), f"step {st}: {xs}"
        union = sum((x["idx"] for x in sorted(xs, key=lambda x: x["rank"])), [])
        assert union == smp.batch_at(st)[2], f"step {st}: samples {union}, sampler {smp.batch_at(st)[2]}"
    return got


def uninterrupted():
    out, ck = f"{T}/u", f"{T}/u-ck"
    rs = launch(1, out, pitstop_env=penv("u", 0, ck))
    ok(rs, "uninterrupted")
    recs = records(rs[0][1])
    its = [x for x in recs if x["type"] == "iter"]
    assert [x["step"] for x in its] == list(range(TOTAL))
    init = [x for x in recs if x["type"] == "init"]
    assert len(init) == 1 and init[0]["config"]["planned_iters"] == TOTAL and init[0]["config"]["samples"] == N \
        and init[0]["config"]["batch"] == B and init[0]["ranks"] == 1, init
    assert [x["step"] for x in recs if x["type"] == "checkpoint"] == [8, 16, 24]
    assert [x["epoch"] for x in recs if x["type"] == "epoch"] == [0, 1, 2]
    assert recs[-1]["type"] == "end" and recs[-1]["status"] == "done"
    assert all(isinstance(x["loss"], float) and len(x["compute_s"]) == 1 for x in its)
    check_steps(out, 0, TOTAL - 1)
    print(f"uninterrupted: {TOTAL} steps, checkpoints at 8/16/24, end done, planned_iters {TOTAL}")
    return params(out)


def resize(ref):
    out, ck = f"{T}/r", f"{T}/r-ck"
    gens = []
    rs = launch(1, out, ["--stop-at", "5", "--stop-rank", "0"], penv("r", 0, ck))
    ok(rs, "gen 0")
    gens.append(records(rs[0][1]))
    rs = launch(2, out, ["--stop-at", "12", "--stop-rank", "1"], penv("r", 1, ck, f"{ck}/ckpt-0000000006.pt"))
    ok(rs, "gen 1")
    gens.append(records(rs[0][1]))
    assert records(rs[1][1]) == [], "rank 1 wrote records"
    for r in (0, 1):
        assert f"rank {r} stopped with 13 steps done (SIGUSR1)" in rs[r][2], rs[r][2]
    rs = launch(1, out, [], penv("r", 2, ck, ck))  # a directory: its newest valid checkpoint
    ok(rs, "gen 2")
    gens.append(records(rs[0][1]))
    got = check_steps(out, 0, TOTAL - 1)
    worlds = [got[s][0]["world"] for s in range(TOTAL)]
    assert worlds == [1] * 6 + [2] * 7 + [1] * 11, worlds
    assert sorted(len(x["idx"]) for x in got[6]) == [3, 4]  # unequal slices in gen 1
    for e in range(EPOCHS):
        used = sorted(i for s in range(e * IPE, (e + 1) * IPE) for x in got[s] for i in x["idx"])
        assert used == list(range(N)), f"epoch {e}: samples {used}"
        digs = [x["samples_digest"] for g in gens for x in g if x["type"] == "iter" and x["epoch"] == e]
        assert pitstop.add_digests(digs) == pitstop.epoch_digest(N), f"epoch {e}: digests"
    ends = [g[-1] for g in gens]
    assert [(x["type"], x["status"], x.get("stop")) for x in ends] == \
        [("end", "stopped", "SIGUSR1"), ("end", "stopped", "SIGUSR1"), ("end", "done", None)], ends
    cks = [[x["step"] for x in g if x["type"] == "checkpoint"] for g in gens]
    assert cks == [[6], [8, 13], [16, 24]], cks
    inits = [[x for x in g if x["type"] == "init"][0] for g in gens]
    assert [(x["ranks"], x["config"]["start_step"]) for x in inits] == [(1, 0), (2, 6), (1, 13)], inits
    it1 = [x for x in gens[1] if x["type"] == "iter"]
    assert all(len(x["compute_s"]) == 2 and len(x["wait_s"]) == 2 for x in it1)
    worst = close(params(out), ref, 1e-9)
    print(f"resize 1->2->1: steps 0-{TOTAL - 1} once (6 + 7 + 11), every sample once in each of {EPOCHS} epochs "
          f"(indices and digests), rank 1 alone signalled and both stopped after step 12, checkpoints {cks}, "
          f"parameters within {worst:.2g} of the uninterrupted run")


def ddp(ref):
    out = f"{T}/d"
    rs = launch(2, out, ["--ddp"])
    ok(rs, "ddp")
    assert not any("PITSTOP" in o for _, o, _ in rs), "records outside pitstop run"
    check_steps(out, 0, TOTAL - 1)
    worst = close(params(out), ref, 1e-9)
    print(f"ddp: 2 ranks under plain torchrun's environment, DistributedDataParallel, no records, parameters "
          f"within {worst:.2g} of the 1-rank run")


def sigterm():
    out, ck = f"{T}/t", f"{T}/t-ck"
    rs = launch(2, out, ["--stop-at", "3", "--stop-rank", "0", "--signal", "TERM"], penv("t", 0, ck))
    ok(rs, "sigterm")
    recs = records(rs[0][1])
    assert recs[-1]["type"] == "end" and recs[-1]["stop"] == "SIGTERM", recs[-1]
    assert [x["step"] for x in recs if x["type"] == "checkpoint"] == [4]
    got = steps_of(out)
    assert sorted(got) == [0, 1, 2, 3] and all(len(v) == 2 for v in got.values()), sorted(got)
    print("sigterm: SIGTERM to rank 0 of 2, both stopped after step 3, checkpoint at 4, stop SIGTERM")


def last():
    rs = launch(1, f"{T}/l", ["--stop-at", str(TOTAL - 1)], penv("l", 0, f"{T}/l-ck"))
    ok(rs, "last")
    recs = records(rs[0][1])
    ends = [(x["status"], x.get("stop")) for x in recs if x["type"] == "end"]
    assert ends == [("done", None)], ends
    assert [x["step"] for x in recs if x["type"] == "checkpoint"] == [8, 16, 24]
    print(f"last: SIGUSR1 at step {TOTAL - 1} of {TOTAL}: end done, checkpoints at 8/16/24")


def plain(ref):
    out = f"{T}/p"
    rs = launch(1, out)
    ok(rs, "plain")
    assert "PITSTOP" not in rs[0][1], rs[0][1][:300]
    worst = close(params(out), ref, 0.0)
    check_steps(out, 0, TOTAL - 1)
    print(f"plain (no pitstop run): no records, no checkpoint, the same {TOTAL} steps, parameters identical "
          f"(worst {worst:.2g})")


def restart(ref):
    out, ck = f"{T}/s", f"{T}/s-ck"
    ok(launch(1, out, ["--stop-at", "10", "--checkpoint-dir", ck]), "restart, first run")
    assert pitstop.Checkpoints(ck).steps()[-1] == 11, pitstop.Checkpoints(ck).steps()
    rs = launch(1, out, ["--checkpoint-dir", ck])
    ok(rs, "restart, second run")
    assert "resuming from" in rs[0][2] and "PITSTOP" not in rs[0][1], rs[0]
    check_steps(out, 0, TOTAL - 1)
    worst = close(params(out), ref, 1e-12)
    print(f"restart outside pitstop (checkpoint_dir=): stopped after step 10, started again at 11, parameters "
          f"within {worst:.2g}")


def refused():
    rs = launch(2, f"{T}/x", ["--n", "50"])
    for rc, o, e in rs:
        assert rc == 2 and "drop_last=True" in e and "Traceback" not in e, (rc, e)
    u = f"{T}/u-ck/ckpt-0000000016.pt"
    rc, o, e = launch(1, f"{T}/y", ["--batch", "8"], penv("y", 1, f"{T}/y-ck", u))[0]
    assert rc == 2 and "batch=7, this run batch=8" in e, (rc, e)
    rc, o, e = launch(1, f"{T}/z", ["--track", "model"], penv("z", 1, f"{T}/z-ck", u))[0]
    assert rc == 2 and "holds opt, which job.track() was not given" in e, (rc, e)
    print("refused (exit 2, one line): an empty slice for a rank, a changed global batch, an untracked state")


class Boom(Exception):
    pass


def atomic():
    import torch
    ck = f"{T}/a-ck"
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PITSTOP_")}

    class Ds(torch.utils.data.Dataset):
        def __len__(self):
            return 20

        def __getitem__(self, i):
            return torch.tensor([float(i)])

    def run(epochs):
        job = pitstop.Job(Ds(), 5, seed=1, checkpoint_dir=ck)
        w = torch.nn.Linear(1, 1)
        job.track(w=w)
        for _ in job.epochs(epochs):
            for x in job.loader:
                w.weight.data += x.sum()
        return job

    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    run(1)
    assert pitstop.Checkpoints(ck).steps() == [4]
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL  # handlers put back at the end
    for name in ("fsync", "replace"):
        real = getattr(os, name)
        calls = [0]

        def failing(*a, _real=real, **kw):
            calls[0] += 1
            if calls[0] == 1:
                raise Boom(name)
            return _real(*a, **kw)
        setattr(os, name, failing)
        try:
            run(2)
            raise AssertionError(f"a failed {name} went unnoticed")
        except Boom:
            pass
        finally:
            setattr(os, name, real)
        c = pitstop.Checkpoints(ck)
        assert c.steps() == [4], (name, c.steps())
        payload, path = c.newest_valid()
        assert payload["pitstop"]["step"] == 4 and path.endswith("ckpt-0000000004.pt")
        assert open(f"{ck}/LATEST").read().strip() == "ckpt-0000000004.pt"
        assert not [f for f in os.listdir(ck) if f.startswith(".tmp-")], os.listdir(ck)
    job = run(2)   # and then it goes on from step 4
    assert job.step == 8 and pitstop.Checkpoints(ck).steps() == [4, 8]
    plain_job = pitstop.Job(Ds(), 5)
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL and plain_job.s.ckpt is None
    os.environ.update(saved)
    print("atomic: a save failed at its fsync, then at its rename: step 4's checkpoint stays the newest valid, "
          "LATEST names it, no temp file; the next run resumes from it")


if __name__ == "__main__":
    try:
        ref = uninterrupted()
        resize(ref)
        ddp(ref)
        sigterm()
        last()
        plain(ref)
        restart(ref)
        refused()
        atomic()
    finally:
        if os.environ.get("KEEP"):
            print("kept", T)
        else:
            subprocess.run(["rm", "-rf", T])
