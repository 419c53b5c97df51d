#!/usr/bin/python3
"""dcgan_log.py N [INFO] | dcgan_log.py --niter N [--outf D] [--lr X] — a foreign workload for the control tests: prints N iteration
lines in the course DCGAN runs' shape ("Rank: 0, Epoch: 0, iteration: i/N, It. time: ...",
which pitstop reads), 10 ms apart. With INFO it first writes one line to that file: the cgroup
v1 `cpu` group it runs in, that group's cfs quota, period and shares, and the CPUs it may run
on (tests/control/local_cgroup.sh). The option form (its other options ignored) is a user's
script whose length is an option: tests/control/run_prior.sh."""
import os, sys, time

if sys.argv[1] == "--niter":
    n = int(sys.argv[2])
    sys.argv = sys.argv[:1]  # no INFO
else:
    n = int(sys.argv[1])
if len(sys.argv) > 2:
    cg = [l.split(":", 2)[2].strip() for l in open("/proc/self/cgroup") if l.split(":")[1] in ("cpu", "cpu,cpuacct")][0]
    d = "/sys/fs/cgroup/cpu" + cg
    with open(sys.argv[2], "w") as f:
        f.write("%s %s %s %s %s\n" % (cg, open(d + "/cpu.cfs_quota_us").read().strip(),
                open(d + "/cpu.cfs_period_us").read().strip(), open(d + "/cpu.shares").read().strip(),
                ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))))
t0 = time.monotonic()
for i in range(n):
    time.sleep(0.01)
    print(f"Rank: 0, Epoch: 0, iteration: {i}/{n}, It. time: 0.0101s, Elapsed time: {time.monotonic() - t0:.4f} s",
          flush=True)
