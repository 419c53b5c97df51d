#!/usr/bin/python3
"""bench/fault-soak/soak.py — a live fault soak of `pitstop run` on the local provider (issue 28).

  soak.py [--trials N] [--seed S] [--steps N] [--nodes N] [--build-dir DIR] [--keep]
  soak.py --replay SEED [...]      one trial, the plan of SEED again (what a failing trial prints)

A reference run (no fault) first: cnn on synthetic data, resized 1 -> 2 -> 1 nodes by a schedule
(or, with --nodes N, on N nodes throughout: a membership that never changes, so every finished
trial must end with parameters bit-identical to the reference's).
Then N trials, trial k with seed S+k: a plan of 1-4 faults drawn from random.Random(seed), each
fired when the run's events file holds a checkpoint at or past a drawn step (plus a drawn delay):

  kill-controller   SIGKILL of the controller, then the same command again
  kill-ckpt         the same, and between the kill and the restart the checkpoint it would resume
                    from truncated or bit-flipped (or, one time in four, every checkpoint)
  kill-rank         SIGKILL of one rank
  stop-rank         SIGSTOP of one rank, SIGCONT a drawn 0.5-3 s later
  kill-mpirun       SIGKILL of the generation's mpirun

Each trial is checked against the reference: every step exactly once in the events file, the
reference's sample digest at every step, final parameters within 1e-4 of the reference's (and
whether they are bit-identical: a trial whose ranks were the reference's at every step must be;
under load a schedule's resize can be agreed a step later than the reference's, which is printed),
nothing left behind (processes tagged PITSTOP_RUN, cgroups pitstop.RUN.*, node files, the run's
lock held), no hang (a controller not done within --timeout seconds of its start). A trial that ends in an
error must name its cause (a `pitstop: ` line that says more than the exit status). A failing
trial prints its replay command. The summary ends with the figures.
Exit 0 when every trial passed.
"""
import argparse
import fcntl
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CKPT = os.path.join(SRC, "tests", "train", "ckpt.py")
NUMPY_PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable  # ckpt.py needs numpy
CATALOG = """itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
"""
KINDS = ["kill-controller", "kill-ckpt", "kill-rank", "stop-rank", "kill-mpirun"]


def train_args(steps):
    return ["--model", "cnn", "--data", "synthetic", "--batch-size", "32", "--threads", "1", "--seed", "5",
            "--lr", "0.01", "--lr-schedule", "constant", "--no-validation", "--limit", "400", "--epochs", "0",
            "--backend", "ref", "--max-iters", str(steps), "--checkpoint-every", "20"]


def run_cmd(pitstop, cat, d, run, steps, nodes=0):
    a, b = steps // 3, 2 * steps // 3
    members = ["--nodes", str(nodes)] if nodes else ["--schedule", f"{a}:2,{b}:1"]
    return [pitstop, "run", "--catalog", cat, "--checkpoint-dir", d, "--run", run, "--quiet",
            "--start-timeout", "120"] + members + train_args(steps)


def records(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def computed_iters(d):
    """Every iteration the workload computed in run directory d, redone ones included: the
    events file keeps the first record of a step (the held-record rule), while a step done
    again after a fallback to an older checkpoint may run on another membership (the
    schedule's for that step); each generation's log (gen-N.log) holds its own records."""
    out = []
    for g in sorted(glob.glob(os.path.join(d, "gen-*.log"))):
        with open(g, errors="replace") as f:
            for line in f:
                i = line.find("{")
                if i < 0 or '"iter"' not in line:
                    continue
                try:
                    x = json.loads(line[i:])
                except ValueError:
                    continue
                if x.get("type") == "iter":
                    out.append(x)
    return out


def last_ckpt_step(path):
    s = -1
    for x in records(path):
        if x.get("type") == "checkpoint":
            s = max(s, x.get("step", -1))
    return s


def procs_of(run):
    """pids tagged PITSTOP_RUN=run in their environment, with their comm"""
    out = []
    for e in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(e, "rb") as f:
                env = f.read().split(b"\0")
            if f"PITSTOP_RUN={run}".encode() in env:
                pid = int(e.split("/")[2])
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                if st[st.rindex(")") + 2] == "Z":
                    continue
                with open(f"/proc/{pid}/comm") as f:
                    out.append((pid, f.read().strip()))
        except (OSError, ValueError):
            pass
    return out


def ranks_of(run):
    return [p for p, c in procs_of(run) if c == "pitstop"]


def mpirun_of(run):
    return [p for p, c in procs_of(run) if c in ("mpirun", "orterun", "prterun")]


def leftovers(run, d):
    left = []
    ps = procs_of(run)
    if ps:
        left.append(f"processes {ps}")
    cgs = glob.glob(f"/sys/fs/cgroup/cpu/pitstop.{run}.*") + glob.glob(f"/sys/fs/cgroup/pitstop.{run}.*")
    if cgs:
        left.append(f"cgroups {cgs}")
    nodes = glob.glob(os.path.join(d, "nodes", "*"))
    if nodes:
        left.append(f"node files {nodes}")
    try:
        fd = os.open(os.path.join(d, "lock"), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            left.append("the run's lock held")
        finally:
            os.close(fd)
    except OSError:
        pass
    return left


def damage(path, how):
    n = os.path.getsize(path)
    if how == "truncate":
        os.truncate(path, n // 2)
    else:
        with open(path, "r+b") as f:
            f.seek(n // 2)
            b = f.read(1)
            f.seek(n // 2)
            f.write(bytes([b[0] ^ 0xFF]))


def resume_target(d):
    """the held link a restarted controller of d resumes from (newer of the state's and events')"""
    step = 0
    try:
        for line in open(os.path.join(d, "state")):
            if line.startswith("step "):
                step = int(line.split()[1])
    except OSError:
        pass
    step = max(step, last_ckpt_step(os.path.join(d, "events.jsonl")))
    p = os.path.join(d, "held-%012d.ckpt" % step)
    return p if os.path.exists(p) else None


def plan_of(seed, steps):
    rng = random.Random(seed)
    n = rng.randint(1, 4)
    plan = []
    for _ in range(n):
        kind = rng.choice(KINDS)
        f = {"kind": kind, "at": rng.randrange(10, steps - 10), "delay": round(rng.uniform(0, 1.0), 2)}
        if kind == "kill-ckpt":
            f["how"] = rng.choice(["truncate", "flip"])
            f["all"] = rng.random() < 0.25
        if kind == "stop-rank":
            f["pause"] = round(rng.uniform(0.5, 3.0), 2)
        if kind in ("kill-rank", "stop-rank"):
            f["pick"] = rng.random()
        plan.append(f)
    plan.sort(key=lambda f: f["at"])
    return plan


def start(cmd, d, k):
    err = open(os.path.join(d + f".ctl{k}.err"), "w")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err), err.name


def cause_of(errfile):
    lines = [l.strip() for l in open(errfile) if l.startswith("pitstop: ") and "hint:" not in l]
    return lines[-1] if lines else ""


def drive(res, ctl, timeout, reached, fire):
    """One trial's faults against a running controller: each fault of res["plan"], in order, fires
    once reached(f) holds, after its delay, through fire(f, ctl), which returns (the controller now
    running: a new one after a controller kill, the kind that fired), or None when nothing could be
    fired; res["fired"] lists the kinds. A controller not done within timeout s of its start is a
    hang (killed; said in res["why"]). Returns the last controller's exit status."""
    t_inv = time.monotonic()
    pending = list(res["plan"])
    while True:
        rc = ctl.poll()
        if rc is not None:
            return rc
        if time.monotonic() - t_inv > timeout:
            res["why"].append(f"hang: not done after {timeout} s")
            ctl.kill()
            ctl.wait()
            return -9
        if pending and reached(pending[0]):
            f = pending.pop(0)
            time.sleep(f["delay"])
            if ctl.poll() is None:
                got = fire(f, ctl)
                if got is not None:
                    if got[0] is not ctl:
                        t_inv = time.monotonic()
                    ctl = got[0]
                    res["fired"].append(got[1])
        time.sleep(0.05)


def reap(res, run, d):
    """What a trial left behind (after a moment for the last processes to be reaped): said in
    res["why"], its processes killed and its cgroups removed."""
    left = []
    for _ in range(40):
        left = leftovers(run, d)
        if not left:
            break
        time.sleep(0.25)
    if left:
        res["why"].append("left behind: " + "; ".join(left))
        for p, _ in procs_of(run):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        for cg in glob.glob(f"/sys/fs/cgroup/cpu/pitstop.{run}.*"):
            try:
                os.rmdir(cg)
            except OSError:
                pass


def trial(args, seed, ref, pitstop, cat, tmp):
    run = f"soak{seed}"
    d = os.path.join(tmp, run)
    cmd = run_cmd(pitstop, cat, d, run, args.steps, args.nodes)
    plan = plan_of(seed, args.steps)
    res = {"seed": seed, "plan": plan, "fired": [], "restarts": 0, "ok": True, "why": [], "errors": []}
    errfiles = []

    def launch():
        ctl, errf = start(cmd, d, len(errfiles))
        errfiles.append(errf)
        return ctl

    t0 = time.monotonic()
    ev = os.path.join(d, "events.jsonl")

    def fire(f, ctl):
        kind = f["kind"]
        if kind in ("kill-controller", "kill-ckpt"):
            ctl.kill()
            ctl.wait()
            finished = "end done" in open(os.path.join(d, "state")).read() if os.path.exists(
                os.path.join(d, "state")) else False
            if kind == "kill-ckpt" and finished:
                kind = "kill-controller"  # the job is done: its final checkpoint is the result, not a resume
            if kind == "kill-ckpt":
                # the workload the killed controller left is stopped first (as the restarted
                # controller would), so the damage is not overwritten by its next checkpoint
                for p, _ in procs_of(run):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.3)
                if f["all"]:
                    seen = set()
                    for p in glob.glob(os.path.join(d, "held-*.ckpt")) + glob.glob(
                            os.path.join(d, "checkpoints", "checkpoint-*.pit")):
                        st = os.stat(p)
                        if (st.st_dev, st.st_ino) not in seen:
                            seen.add((st.st_dev, st.st_ino))
                            damage(p, f["how"])
                else:
                    t = resume_target(d)
                    if t:
                        damage(t, f["how"])
            res["restarts"] += 1
            return launch(), kind
        try:
            if kind in ("kill-rank", "stop-rank"):
                rs = ranks_of(run)
                if not rs:
                    return None
                p = rs[int(f["pick"] * len(rs)) % len(rs)]
                if kind == "kill-rank":
                    os.kill(p, signal.SIGKILL)
                else:
                    os.kill(p, signal.SIGSTOP)
                    time.sleep(f["pause"])
                    os.kill(p, signal.SIGCONT)
            elif kind == "kill-mpirun":
                ms = mpirun_of(run)
                if not ms:
                    return None
                os.kill(ms[0], signal.SIGKILL)
        except OSError:
            return None
        return ctl, kind

    rc = drive(res, launch(), args.timeout, lambda f: last_ckpt_step(ev) >= f["at"], fire)
    res["s"] = round(time.monotonic() - t0, 1)
    res["rc"] = rc
    if rc != 0:
        c = cause_of(errfiles[-1])
        res["errors"].append(c or f"exit {rc}, no message")
        # an error must name its cause: more than "the workload exited with status N"
        if not c or ("said:" not in c and "damaged" not in c and "last words" not in c):
            res["why"].append(f"error without its cause: {c!r}")
        else:
            res["why"].append(f"ended in error: {c}")
    r = records(ev)
    it = [x for x in r if x.get("type") == "iter"]
    steps = [x["step"] for x in it]
    if rc == 0 and steps != list(range(args.steps)):
        dup = len(steps) - len(set(steps))
        res["why"].append(f"steps not each once: {len(steps)} records, {len(set(steps))} distinct, {dup} repeated")
    if rc == 0:
        # the same ranks at every step as the reference (a resize's agreed step can differ by one)
        # over every computation of a step, the ones done again (in the generations' logs only) too
        other = sorted({x["step"] for x in it + computed_iters(d)
                        if ref["ranks"].get(x["step"]) != len(x.get("compute_s", []))})
        res["same_ranks"] = not other
        if other:  # where the membership differed: the resize agreed a step or more from the reference's
            res["ranks_differ_at"] = other[:4]
        bad = [x["step"] for x in it if ref["digests"].get(x["step"]) != x.get("samples_digest")]
        if bad:
            res["why"].append(f"{len(bad)} steps with other samples than the reference (first {bad[0]})")
        cks = [x for x in r if x.get("type") == "checkpoint"]
        last = cks[-1]["path"] if cks else None
        if not last or not os.path.exists(last):
            res["why"].append("no final checkpoint")
        else:
            out = subprocess.run([NUMPY_PY, CKPT, "compare", ref["final"], last, "1e-4"], capture_output=True,
                                 text=True)
            res["param_diff"] = (out.stdout + out.stderr).strip().splitlines()[-1:] if out.stdout or out.stderr else []
            if out.returncode != 0:
                res["why"].append(f"parameters differ from the reference: {res['param_diff']}")
            same = subprocess.run([NUMPY_PY, CKPT, "same", ref["final"], last], capture_output=True)
            res["identical"] = same.returncode == 0
            if res.get("same_ranks") and not res["identical"]:
                res["why"].append("the reference's ranks at every step, yet parameters not bit-identical")
    reap(res, run, d)
    failed = [w for w in res["why"] if not w.startswith("ended in error")]
    res["ok"] = not failed
    res["errfiles"] = errfiles
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--replay", type=int, default=None, help="one trial with this seed")
    ap.add_argument("--steps", type=int, default=180)
    ap.add_argument("--nodes", type=int, default=0, help="N nodes throughout, no schedule (bit-identical expected)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--keep", action="store_true", help="keep the runs' directories")
    ap.add_argument("--json", default=None, help="write every trial's result here")
    args = ap.parse_args()
    pitstop = os.path.join(os.path.abspath(args.build_dir), "pitstop")
    if not os.access(pitstop, os.X_OK):
        sys.exit(f"soak.py: no pitstop in {args.build_dir}")
    os.environ.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                       "OMPI_MCA_oob_tcp_if_include": "lo", "OMPI_MCA_btl_tcp_if_include": "lo",
                       "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
                       "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    tmp = tempfile.mkdtemp(prefix="fault-soak.")
    os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "xdg")
    cat = os.path.join(tmp, "cat.tsv")
    with open(cat, "w") as f:
        f.write(CATALOG)
    t_start = time.monotonic()
    # the reference: the same command, no fault
    refd = os.path.join(tmp, "ref")
    p = subprocess.run(run_cmd(pitstop, cat, refd, "soakref", args.steps, args.nodes), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"soak.py: the reference run failed: {p.stderr[-2000:]}")
    r = records(os.path.join(refd, "events.jsonl"))
    ref = {"digests": {x["step"]: x["samples_digest"] for x in r if x["type"] == "iter"},
           "ranks": {x["step"]: len(x["compute_s"]) for x in r if x["type"] == "iter"},
           "final": [x for x in r if x["type"] == "checkpoint"][-1]["path"]}
    seeds = [args.replay] if args.replay is not None else [args.seed + i for i in range(args.trials)]
    results = []
    for s in seeds:
        res = trial(args, s, ref, pitstop, cat, tmp)
        results.append(res)
        tag = "ok  " if res["ok"] else "FAIL"
        print(f"{tag} seed {s:4d} {res['s']:6.1f} s  faults {','.join(res['fired']) or '-':50s} "
              f"identical={res.get('identical', '-')}"
              f"{' (ranks differ from the reference at steps %s)' % res['ranks_differ_at'] if res.get('ranks_differ_at') else ''}"
              f" {'; '.join(res['why'])}", flush=True)
        if not res["ok"]:
            print(f"     replay: {sys.argv[0]} --replay {s} --steps {args.steps} --build-dir {args.build_dir} --keep"
                  f"   (plan {json.dumps(res['plan'])}; stderr of each controller: {' '.join(res['errfiles'])})",
                  flush=True)
        if res["ok"] and not args.keep:
            shutil.rmtree(os.path.join(tmp, f"soak{s}"), ignore_errors=True)
    n = len(results)
    nf = sum(len(x["fired"]) for x in results)
    kinds = {}
    for x in results:
        for f in x["fired"]:
            kinds[f] = kinds.get(f, 0) + 1
    passed = sum(x["ok"] for x in results)
    done = [x for x in results if x["rc"] == 0]
    ident = sum(1 for x in done if x.get("identical"))
    same = [x for x in done if x.get("same_ranks")]
    diffs = []
    for x in done:
        for w in (x.get("param_diff") or []):
            if w.startswith("max_rel_diff="):
                diffs.append(float(w.split()[0].split("=")[1]))
    errs = [x for x in results if x["rc"] != 0]
    print(f"\n{n} trials, {nf} faults fired ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), "
          f"{sum(x['restarts'] for x in results)} controller restarts, {time.monotonic() - t_start:.0f} s")
    print(f"passed {passed}/{n}; finished {len(done)}/{n}, of them bit-identical parameters {ident}/{len(done)}; "
          f"ended in error {len(errs)} (each with its cause: {sum(1 for x in errs if not any(w.startswith('error without') for w in x['why']))})")
    print(f"parameters: max relative difference to the reference {max(diffs) if diffs else float('nan'):.3g} "
          f"(tolerance 1e-4); the reference's ranks at every step in {len(same)} finished trials, of them "
          f"bit-identical {sum(1 for x in same if x.get('identical'))}")
    for x in errs:
        print(f"  seed {x['seed']}: {x['errors'][0]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if not args.keep and passed == n:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"runs kept in {tmp}")
    sys.exit(0 if passed == n else 1)


if __name__ == "__main__":
    main()
