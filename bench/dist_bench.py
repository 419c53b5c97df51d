"""dist_bench.py — shared by bench/scaling and bench/hetero: run `pitstop train`
alone or under mpirun (this machine's MPI settings), and read throughput and
per-rank compute/wait shares from its iter records.

Throughput = samples of the iterations after the first `skip` (warm-up) divided
by the wall time they took (difference of the records' `t`, rank 0's clock), so
time outside step_s (data, records, CPU-quota throttling between steps) counts.
Shares: sum(compute_s[r]) / sum(step_s) and sum(wait_s[r]) / sum(step_s) over
the same records.
"""
import contextlib
import json
import os
import subprocess
import sys
import tempfile

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_oob_tcp_if_include": "lo", "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}
NICE = 0  # set by the scripts' --nice: run everything at this niceness (e.g. -10 on a busy machine)
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"]


def find_pitstop(arg):
    here = os.path.dirname(os.path.abspath(__file__))
    for p in [arg, os.environ.get("PITSTOP"), os.path.join(here, "..", "build", "pitstop")]:
        if p and os.access(p, os.X_OK):
            return os.path.abspath(p)
    sys.exit("pitstop binary not found: pass --pitstop PATH or set PITSTOP")


def env():
    e = dict(os.environ)
    e.pop("OPENBLAS_CORETYPE", None)   # holds OpenBLAS to AVX2 (BENCHMARKING.md)
    e.update(MPI_ENV)
    return e


def train(pitstop, args, ranks=1, wrap=None, timeout=900):
    """Runs pitstop train with args; ranks > 1 under mpirun -np ranks. wrap: a
    command prefix put before pitstop (inside mpirun). Returns the records."""
    with tempfile.TemporaryDirectory() as tmp:
        ev = os.path.join(tmp, "ev.jsonl")
        cmd = (wrap or []) + [pitstop, "train"] + args + ["--events", ev, "--quiet"]
        if ranks > 1:
            cmd = MPIRUN + ["-np", str(ranks)] + cmd
        if NICE:
            cmd = ["nice", "-n", str(NICE)] + cmd
        p = subprocess.run(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, cwd=tmp)  # GAN sample grids land in tmp
        if p.returncode != 0:
            sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-3000:]))
        return [json.loads(l) for l in open(ev) if l.strip()]


def summarise(recs, skip):
    it = [r for r in recs if r.get("type") == "iter"]
    if len(it) < skip + 2:
        sys.exit("%d iter records: too few after %d warm-up iterations" % (len(it), skip))
    wall = it[-1]["t"] - it[skip]["t"]
    it = it[skip + 1:]
    step = sum(r["step_s"] for r in it)
    n = len(it[0]["compute_s"])
    comp = [sum(r["compute_s"][k] or 0 for r in it) / step for k in range(n)]
    wait = [sum(r["wait_s"][k] or 0 for r in it) / step for k in range(n)]
    return {"ips": sum(r["batch"] for r in it) / wall, "iters": len(it), "compute": comp,
            "wait": wait, "step_s": step / len(it)}


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def pct(v):
    return "/".join("%.0f%%" % (100 * x) for x in v)


CGROUP_CPU = "/sys/fs/cgroup/cpu"


def can_make_cgroups():
    """True when this process may create cgroup v1 cpu groups (root, controller mounted)."""
    return os.geteuid() == 0 and os.access(os.path.join(CGROUP_CPU, "cpu.cfs_quota_us"), os.W_OK)


@contextlib.contextmanager
def quota_cgroups(prefix, count, quota, period_us=5000, shares=65536, burst=True):
    """Makes `count` cgroups (v1 cpu controller) named PREFIX-PID.rK, each an
    emulated node or a reserved slice of this shared machine: a CPU quota of
    `quota` cores (quota × period_us µs per period), a high cpu.shares (the v1
    name of cpu.weight; other processes count 1024 each) so that whenever a
    group has work within its quota the scheduler runs it ahead of the
    machine's other load — the quota is the speed, the shares make it a
    guarantee as long as the quotas add up to less than the CPUs — and with
    burst, cpu.cfs_burst_us = the quota: time a group left unused while its
    process slept (waiting for another rank) may be spent in the next period,
    so a rank that waited is not throttled the moment it has work again.
    Yields the groups' paths; removes them afterwards."""
    base = os.path.join(CGROUP_CPU, f"{prefix}-{os.getpid()}")
    made = []
    try:
        for k in range(count):
            d = f"{base}.r{k}"
            os.mkdir(d)
            made.append(d)
            q = max(1000, int(period_us * quota)) if quota > 0 else -1  # quota <= 0: shares only
            for name, v in (("cpu.cfs_period_us", period_us), ("cpu.cfs_quota_us", q), ("cpu.shares", shares),
                            ("cpu.cfs_burst_us", q if burst and q > 0 else 0)):
                if name == "cpu.cfs_burst_us" and not os.path.exists(os.path.join(d, name)):
                    continue
                with open(os.path.join(d, name), "w") as f:
                    f.write(str(v))
        yield made
    finally:
        for d in made:
            try:
                os.rmdir(d)
            except OSError as ex:
                print(f"could not remove {d}: {ex}", file=sys.stderr)


def cgroup_wrap(pitstop, path, cpus=None):
    """The command prefix that runs a process inside cgroup `path` (pitstop node-exec),
    pinned to the CPU list `cpus` ("1", "0-1") when given."""
    return [pitstop, "node-exec"] + (["--cpus", cpus] if cpus else []) + ["--cgroup", path, "--"]
