#!/usr/bin/python3
"""bench/resize-cpu/ab.py [ITERS [REPS]] — A/B (issue 29 item 6): is local-1:1 after a resize (pair -> local-1:1 at step 20, the node on CPU 1) slower than a
fixed local-1:1 run, and is it the CPU (0 vs 1)? Interleaved reps; median step_s of steps > 100 of the
last generation; prints that generation's cpus, threads and quota. The runs stay in a temporary folder (printed
at the end)."""
import json, os, statistics, subprocess, sys, tempfile, time
PIT = os.environ.get("PITSTOP") or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "pitstop")
T = tempfile.mkdtemp(prefix="resize-cpu.")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_oob_tcp_if_include="lo", OMPI_MCA_btl_tcp_if_include="lo",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1")
JOB = ["--model", "cnn-wide", "--data", "synthetic", "--batch-size", "64", "--no-validation", "--max-iters", sys.argv[1] if len(sys.argv) > 1 else "1500"]
cases = {
    "fixed_cpu0": (["taskset", "-c", "0"], ["--nodes", "local-1:1", "--policy", "fixed"]),
    "fixed_cpu1": (["taskset", "-c", "1"], ["--nodes", "local-1:1", "--policy", "fixed"]),
    "resized": ([], ["--nodes", "local-0.4:1+local-1:1", "--policy", "schedule", "--schedule", "20:local-1:1"]),
}
res = {k: [] for k in cases}
for rep in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
    for k, (pre, opts) in cases.items():
        name = "%s-%d" % (k, rep)
        d = os.path.join(T, name)
        subprocess.run(["rm", "-rf", d])
        t0 = time.monotonic()
        p = subprocess.run(pre + [PIT, "run", "--quiet", "--run", name, "--checkpoint-dir", d] + opts + JOB, env=env,
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stdout + p.stderr)
        it, g, cfg = [], None, None
        for l in open(d + "/events.jsonl"):
            r = json.loads(l)
            if r["type"] == "init":
                g, cfg, it = r["gen"], r["config"], []
            if r["type"] == "iter" and r["gen"] == g and r["step"] > 100:
                it.append(r["step_s"])
        m = statistics.median(it)
        res[k].append(m)
        print("%-12s rep %d cpus %s threads %s quota %s: %d steps, median %.5f mean %.5f (wall %.1f s, load %s)" % (
            k, rep, cfg.get("cpus"), cfg.get("threads"), cfg.get("cpu_quota"), len(it), m, statistics.mean(it),
            time.monotonic() - t0, open("/proc/loadavg").read().split()[0]), flush=True)
for k, v in res.items():
    print("%-12s medians %s -> median of medians %.5f" % (k, " ".join("%.5f" % x for x in v), statistics.median(v)))
print("runs in", T)
