#!/usr/bin/python3
"""bench/fault-soak/own.py — a live fault soak of `pitstop run` driving a user's own PyTorch script,
unchanged, under torchrun (docs/own-script.md, level 3: resizable by restart).

  own.py [--trials N] [--seed S] [--epochs E] [--build-dir DIR] [--keep] [--timeout S]
  own.py --replay SEED [...]      one trial, the plan of SEED again (what a failing trial prints)
  own.py --kinds K,K --faults N    only these kinds of fault, N of them in each trial
  own-ssh.sh [own.py's options]    the same on two ssh hosts (network namespaces with their own sshd,
                                   as tests/control/run_ssh_torch.sh): own.py --hostfile F --prefix JSON
  own.py --cloud [...]             the same on nodes of the fake cloud (tests/control/fake: `clapp`,
                                   each node at its own loopback address) reached through a user's
                                   ssh wrap (fake_ssh.py), with two more kinds of fault, below
  own-slurm.sh [own.py's options]  the same on a Slurm of its own (tests/control/slurm_up.bash: munged,
                                   slurmctld, slurmd n1 and n2), each node a one-node allocation:
                                   own.py --slurm (SLURM_CONF set), two more kinds of fault, below

The job: examples/pytorch/ddp_snapshot.py (the DDP tutorial's snapshot pattern: a snapshot after every
epoch, resumed from when started again) on 2 nodes (local ones, ssh hosts, cloud nodes or Slurm
allocations) through the per-node launcher, one torchrun per node, `--resume-by-restart`. Trial k (seed S+k) draws a plan of 1-3 faults from
random.Random(seed), each fired once the run's events file holds a drawn number of steps (plus a
drawn delay):

  kill-controller   SIGKILL of `pitstop run`, then the same command again
  kill-worker       SIGKILL of one node's training process (the script)
  kill-agent        SIGKILL of one node's torchrun
  stop-worker       SIGSTOP of one node's training process, SIGCONT a drawn 0.5-3 s later

(own-ssh.sh also: flap, the second host's link down for a drawn 2-30 s, then up: under ssh's
ServerAlive 15 s nothing is noticed, past it the ssh session is lost and the generation restarts,
not counted against --max-restarts when a snapshot of its own was saved)

(at most two of the kinds that fail a generation, kill-worker and kill-agent: pitstop restarts a
failed generation 3 times, then gives up, and says so). With --cloud also:

  vanish            a node of the run goes without notice (what ran on it dies with it)
  reclaim           a node of the run gets a reclaim notice and goes 10 s later

(not limited: a node lost after a checkpoint of its generation spends no restart). With --slurm
also (a node lost, not limited either):

  scancel           one of the run's allocations cancelled (scancel ID)
  down              the Slurm node of one of the run's allocations set DOWN: Slurm ends that
                    allocation (NODE_FAIL) and what runs in it; the node is resumed a drawn 1-5 s
                    later (slurm_up's ReturnToService=2 often takes it back sooner, once its slurmd
                    registers again)

(a job requeue is not a fault here: Slurm requeues only batch jobs, and an allocation is not one.)

Each trial is checked:
- the last command exits 0, or ends with an error that names its cause (more than an exit status;
  never torchrun's "error_file: <N/A>");
- the script's snapshot says every epoch done;
- the events file records every step of the job exactly once (a step is recorded when its epoch's
  snapshot line arrives, so nothing recorded is redone);
- nothing is left behind (processes tagged PITSTOP_RUN, node files, the run's lock held; with
  --cloud, a node of the run the fake cloud still runs; with --slurm, an allocation of the run
  squeue still lists, an srun or salloc of this Slurm still running);
- no hang (a controller not done within --timeout seconds of its start).
A failing trial prints its replay command. Exit 0 when every trial passed.
Skips (exit 77) without Debian's python3-torch.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import CATALOG, SRC, drive, procs_of, reap, records  # noqa: E402

TORCH_PY = "/usr/bin/python3"
SCRIPT = os.path.join(SRC, "examples", "pytorch", "ddp_snapshot.py")
KINDS = ["kill-controller", "kill-worker", "kill-agent", "stop-worker"]
CLOUD_KINDS = ["vanish", "reclaim"]
SLURM_KINDS = ["scancel", "down"]
SSH_KINDS = ["flap"]
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(SRC, "tests", "control", "fake")
FAILING = ("kill-worker", "kill-agent")
STEPS_PER_EPOCH = 16  # 1024 samples, batch 32 per process, 2 processes


def run_cmd(pitstop, cat, d, run, epochs, hostfile=None, prefix=(), cloud=None, slurm=False):
    where = ["--provider", "ssh", "--hostfile", hostfile, "--itype", "host"] if hostfile else []
    if cloud:
        where = ["--provider", "command", "--provider-config", cloud, "--itype", "c5.large"]
    if slurm:
        where = ["--provider", "slurm", "--itype", "node"]
    return list(prefix) + [pitstop, "run", "--catalog", cat, "--checkpoint-dir", d, "--run", run, "--quiet"] + where + [
            "--launcher", "per-node", "--nodes", "2", "--resume-by-restart", "--epochs", str(epochs), "--",
            TORCH_PY, "-m", "torch.distributed.run", "--nnodes=$PITSTOP_NUM_NODES", "--node_rank=$PITSTOP_NODE_RANK",
            "--nproc_per_node=1", "--master_addr=$PITSTOP_MASTER_ADDR", "--master_port=$PITSTOP_MASTER_PORT",
            "--redirects", "2", "--tee", "2", SCRIPT, "--epochs", str(epochs), "--save-every", "1",
            "--snapshot", os.path.join(d + ".snap", "snap.pt"), "--step-sleep", "0.03"]


def plan_of(seed, total, kinds=KINDS, nfaults=0):
    rng = random.Random(seed)
    plan, failing = [], 0
    for _ in range(nfaults or rng.randint(1, 3)):
        kind = rng.choice(kinds)
        if kind in FAILING:
            if failing == 2:
                kind = "stop-worker"
            failing += kind in FAILING
        f = {"kind": kind, "at": rng.randrange(STEPS_PER_EPOCH, total - STEPS_PER_EPOCH),
             "delay": round(rng.uniform(0, 2.0), 2), "pick": rng.random()}
        if kind == "stop-worker":
            f["pause"] = round(rng.uniform(0.5, 3.0), 2)
        if kind == "down":
            f["pause"] = round(rng.uniform(1.0, 5.0), 2)
        if kind == "flap":  # under ssh's ServerAlive 15 s (unnoticed), or past it (the session lost)
            f["pause"] = round(rng.uniform(2.0, 30.0), 1)
        plan.append(f)
    plan.sort(key=lambda f: f["at"])
    return plan


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def workers(run):
    """the training processes (the script under torchrun) and the torchrun agents of the run"""
    w, a = [], []
    for p, _ in procs_of(run):
        c = cmdline(p)
        if "torch.distributed.run" in c:
            a.append(p)
        elif "ddp_snapshot.py" in c:
            w.append(p)
    return sorted(w), sorted(a)


def steps_recorded(ev):
    return sum(1 for x in records(ev) if x.get("type") == "iter")


def snapshot_epochs(path):
    if not os.path.exists(path):
        return None
    out = subprocess.run([TORCH_PY, "-c", "import sys, torch; print(torch.load(sys.argv[1])['epochs_done'])", path],
                         capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 else None


def said_of(errfile):
    lines = [l.strip() for l in open(errfile) if l.startswith("pitstop: ") and "hint:" not in l]
    return lines


def cloud_setup(tmp, seed):
    """the fake cloud of one trial: its directory, the provider config, the environment"""
    fc = os.path.join(tmp, f"cloud{seed}")
    os.makedirs(os.path.join(tmp, "bin"), exist_ok=True)
    link = os.path.join(tmp, "bin", "ssh")
    if not os.path.exists(link):
        os.symlink(os.path.join(FAKE, "fake_ssh.py"), link)
    os.makedirs(fc, exist_ok=True)
    for name, text in (("ip_per_node", "1"), ("boot_s", "1"), ("grace_s", "10")):
        with open(os.path.join(fc, name), "w") as f:
            f.write(text)
    cfg = os.path.join(tmp, f"cloud{seed}.json")
    with open(cfg, "w") as f:
        json.dump({"preset": "clap", "poll_s": 0.5, "retry_wait_s": 0.2, "start_timeout_s": 20, "grace_s": 10,
                   "wrap": [link, "{host}"]}, f)
    env = dict(os.environ, FAKE_CLOUD=fc, PATH=FAKE + ":" + os.environ["PATH"])
    return fc, cfg, env


def cloud_nodes(fc, run, noticed=True):
    """the run's nodes the fake cloud still runs (ids); without those under a reclaim notice
    when not noticed (a fault's target)"""
    try:
        db = json.load(open(os.path.join(fc, "nodes.json")))
    except (OSError, ValueError):
        return []
    now = time.time()
    return [n["id"] for n in db["nodes"] if n["tags"].get("pitstop-run") == run and
            not (n.get("gone_at") and n["gone_at"] <= now) and (noticed or not n.get("notice_at"))]


def slurm_jobname(run, d):
    """the run's Slurm job name: pitstop-RUN-TAG, TAG the CRC-32 of its directory's real path (pit_run_tag)"""
    return "pitstop-%s-%08x" % (run, zlib.crc32(os.path.realpath(d).encode()))


def slurm_allocs(name):
    """the allocations squeue lists under job name name: (job id, Slurm node, state)"""
    out = subprocess.run(["squeue", "-h", f"--name={name}", "-o", "%i %N %T"], capture_output=True, text=True)
    return [tuple((l.split() + ["", ""])[:3]) for l in out.stdout.splitlines() if l.strip()]


def slurm_clients():
    """srun and salloc processes of this Slurm (SLURM_CONF theirs)"""
    conf = f"SLURM_CONF={os.environ['SLURM_CONF']}".encode()
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/comm") as f:
                comm = f.read().strip()
            if comm in ("srun", "salloc"):
                with open(f"/proc/{p}/environ", "rb") as f:
                    if conf in f.read().split(b"\0"):
                        out.append(f"{p} {cmdline(p)}")
        except OSError:
            pass
    return out


def slurm_idle():
    """every node of this Slurm back to idle (a down fault's node resumed); what sinfo says"""
    for n in ("n1", "n2"):
        st = subprocess.run(["sinfo", "-h", "-n", n, "-o", "%t"], capture_output=True, text=True).stdout.strip()
        if st.startswith("down") or st.startswith("drain"):
            subprocess.run(["scontrol", "update", f"nodename={n}", "state=resume"], capture_output=True)
    for _ in range(100):
        st = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True).stdout.split()
        if set(st) == {"idle"}:
            break
        time.sleep(0.1)
    return " ".join(st)


def trial(args, seed, pitstop, cat, tmp):
    run = f"own{seed}"
    d = os.path.join(tmp, run)
    os.makedirs(d + ".snap", exist_ok=True)
    total = args.epochs * STEPS_PER_EPOCH
    fc, cfg, env = cloud_setup(tmp, seed) if args.cloud else (None, None, None)
    cmd = run_cmd(pitstop, cat, d, run, args.epochs, args.hostfile, json.loads(args.prefix) if args.prefix else (),
                  cfg, args.slurm)
    kinds = args.kinds.split(",") if args.kinds else KINDS + extra_kinds(args)
    plan = plan_of(seed, total, kinds, args.faults)
    res = {"seed": seed, "plan": plan, "fired": [], "ok": True, "why": [], "errors": []}
    errfiles = []

    def start():
        err = open(os.path.join(tmp, f"{run}.ctl{len(errfiles)}.err"), "w")
        errfiles.append(err.name)
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)

    t0 = time.monotonic()
    ev = os.path.join(d, "events.jsonl")

    def fire(f, ctl):
        kind = f["kind"]
        if kind == "kill-controller":
            ctl.kill()
            ctl.wait()
            return start(), kind
        if kind in CLOUD_KINDS:
            live = cloud_nodes(fc, run, noticed=False)
            if not live:
                return None
            with open(os.path.join(fc, kind), "w") as fh:
                fh.write(live[int(f["pick"] * len(live)) % len(live)])
            return ctl, kind
        if kind in SLURM_KINDS:
            live = [a for a in slurm_allocs(slurm_jobname(run, d)) if a[2] == "RUNNING"]
            if not live:
                return None
            job, node, _ = live[int(f["pick"] * len(live)) % len(live)]
            if kind == "scancel":
                subprocess.run(["scancel", job], check=True)
                return ctl, kind
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=down", "reason=soak"], check=True)
            time.sleep(f["pause"])
            # ReturnToService=2 may have taken it back already (then Slurm refuses the resume)
            subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], capture_output=True)
            return ctl, kind
        if kind == "flap":
            ns, dev = args.link.split(":")
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "down"], check=True)
            try:
                time.sleep(f["pause"])
            finally:
                subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
            return ctl, kind
        w, a = workers(run)
        ps = a if kind == "kill-agent" else w
        if not ps:
            return None
        p = ps[int(f["pick"] * len(ps)) % len(ps)]
        try:
            if kind == "stop-worker":
                os.kill(p, signal.SIGSTOP)
                time.sleep(f["pause"])
                os.kill(p, signal.SIGCONT)
            else:
                os.kill(p, signal.SIGKILL)
        except OSError:
            return None
        return ctl, kind

    rc = drive(res, start(), args.timeout, lambda f: steps_recorded(ev) >= f["at"], fire)
    res["s"] = round(time.monotonic() - t0, 1)
    res["rc"] = rc
    said = [l for e in errfiles for l in said_of(e)]
    res["said"] = [l for l in said if "failed" in l]
    if any("error_file" in l for l in said):
        res["why"].append("a message quotes torchrun's error_file field: " + [l for l in said if "error_file" in l][0])
    if rc != 0:
        last = said_of(errfiles[-1])
        c = last[-1] if last else ""
        res["errors"].append(c or f"exit {rc}, no message")
        if not c or ("said:" not in c and "last words" not in c and "gave up" not in c):
            res["why"].append(f"error without its cause: {c!r}")
        else:
            res["why"].append(f"ended in error: {c}")
    if rc == 0:
        steps = [x["step"] for x in records(ev) if x.get("type") == "iter"]
        if steps != list(range(total)):
            res["why"].append(f"steps not each once: {len(steps)} records, {len(set(steps))} distinct of {total}")
        e = snapshot_epochs(os.path.join(d + ".snap", "snap.pt"))
        if e != args.epochs:
            res["why"].append(f"the snapshot says {e} epochs done, not {args.epochs}")
    if args.cloud:
        time.sleep(1)  # the stop's list call takes the node away
        left = cloud_nodes(fc, run)
        if left:
            res["why"].append("nodes the cloud still runs: " + " ".join(left))
    if args.slurm:
        for _ in range(40):  # a moment for a cancelled allocation to leave squeue
            left = slurm_allocs(slurm_jobname(run, d))
            clients = slurm_clients()
            if not left and not clients:
                break
            time.sleep(0.25)
        if left:
            res["why"].append("allocations squeue still lists: " + ", ".join(" ".join(a) for a in left))
            subprocess.run(["scancel"] + [a[0] for a in left], capture_output=True)
        if clients:
            res["why"].append("srun/salloc still running: " + "; ".join(clients))
            for c in clients:
                try:
                    os.kill(int(c.split()[0]), signal.SIGKILL)
                except OSError:
                    pass
        st = slurm_idle()
        if set(st.split()) != {"idle"}:
            res["why"].append(f"Slurm nodes not idle after the trial: {st}")
    reap(res, run, d)
    res["ok"] = not [w for w in res["why"] if not w.startswith("ended in error")]
    res["errfiles"] = errfiles
    return res


def extra_kinds(args):
    return CLOUD_KINDS if args.cloud else SLURM_KINDS if args.slurm else SSH_KINDS if args.link else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--keep", action="store_true", help="keep the trials' directories")
    ap.add_argument("--replay", type=int, help="one trial with this seed")
    ap.add_argument("--hostfile", help="the ssh provider on these hosts (own-ssh.sh sets them up)")
    ap.add_argument("--prefix", help="a JSON list: the argv prefix `pitstop run` runs under (a host's namespace)")
    ap.add_argument("--link", help="NS:DEV, the second host's network namespace and link (own-ssh.sh): flap "
                    "faults too")
    ap.add_argument("--kinds", help="the kinds of fault drawn, comma-separated (default: every kind)")
    ap.add_argument("--faults", type=int, default=0, help="faults per trial (default: 1-3 drawn)")
    ap.add_argument("--cloud", action="store_true", help="nodes of the fake cloud through an ssh wrap, vanish "
                    "and reclaim faults too")
    ap.add_argument("--slurm", action="store_true", help="nodes are allocations of the Slurm SLURM_CONF names "
                    "(own-slurm.sh starts one), scancel and down faults too")
    args = ap.parse_args()
    if subprocess.run([TORCH_PY, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: no python3-torch at /usr/bin/python3")
        return 77
    if args.slurm and not os.environ.get("SLURM_CONF"):
        print("own.py --slurm: SLURM_CONF names no Slurm (bench/fault-soak/own-slurm.sh starts one)")
        return 2
    pitstop = os.path.join(os.path.abspath(args.build_dir), "pitstop")
    tmp = tempfile.mkdtemp(prefix="pit-own-soak-")
    cat = os.path.join(tmp, "cat.tsv")
    with open(cat, "w") as f:
        f.write(CATALOG + ("host       1      1     -          0.10     1          0\n" if args.hostfile else "") +
                ("c5.large   2      2     -          0.085    1          0\n" if args.cloud else "") +
                ("node       1      1     -          0.10     1          0\n" if args.slurm else ""))
    seeds = [args.replay] if args.replay is not None else [args.seed + k for k in range(args.trials)]
    # what replays a trial: its mode (own-slurm.sh for --slurm) and whatever changes its plan
    replay = (os.path.join(HERE, "own-slurm.sh") if args.slurm else os.path.join(HERE, "own-ssh.sh") if args.link
              else sys.argv[0] + " --cloud" * args.cloud)
    replay += f" --kinds {args.kinds}" * bool(args.kinds) + f" --faults {args.faults}" * bool(args.faults)
    results = []
    for s in seeds:
        r = trial(args, s, pitstop, cat, tmp)
        results.append(r)
        tag = "ok  " if r["ok"] else "FAIL"
        fired = ",".join(r["fired"]) or "none fired"
        print(f"{tag} seed {s}: {fired}; {r['s']} s; exit {r['rc']}" +
              (f"; {r['why'][0]}" if r["why"] else "") +
              (f"\n     said: {r['said'][0]}" if r["said"] else ""), flush=True)
        if not r["ok"]:
            print(f"     plan {json.dumps(r['plan'])}\n     replay: {replay} --replay {s}"
                  f" --epochs {args.epochs} --keep; logs {' '.join(r['errfiles'])}", flush=True)
    passed = sum(r["ok"] for r in results)
    fired = [k for r in results for k in r["fired"]]
    counts = {k: fired.count(k) for k in KINDS + extra_kinds(args)}
    errors = sum(1 for r in results if r["rc"] != 0)
    print(f"{passed}/{len(results)} trials passed; faults fired {len(fired)} ({counts}); "
          f"{errors} ended in a named error; wall {sum(r['s'] for r in results):.0f} s")
    if args.keep or passed != len(results):
        print(f"trial directories kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
