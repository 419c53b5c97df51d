#!/usr/bin/python3
"""proto_scale.py N STEP_S SIGMA [KAPPA] — a protocol workload (docs/protocol.md) for the per-node launcher whose
step time follows a scaling law over the generation's node count K = $PITSTOP_NUM_NODES: a step of
STEP_S × (1 + SIGMA × (K − 1) + KAPPA × K × (K − 1)) / K seconds (the universal scalability law; KAPPA
0, the default, is Amdahl's law with serial fraction SIGMA; both 0: linear speed-up), slept, so the law holds whatever the host's load (tests/control/run_grow.sh).
Node 0 (PITSTOP_NODE_RANK 0) writes the records: an init after 0.2 s, N steps in all with the
global batch 64 (strong scaling), each of its K ranks computing STEP_S / K of the step (compute_s) and
waiting the rest (wait_s: the serial part and the crosstalk, as a collective would), a checkpoint (the step, in a file) on SIGUSR1 or SIGTERM at the next step
boundary, then an end record. It resumes from PITSTOP_RESUME. The other nodes do nothing but wait:
they exit 0 when node 0 has written $PITSTOP_CHECKPOINT_DIR/gen-G.over or on SIGUSR1/SIGTERM."""
import json, os, signal, sys, time

n, step_s, sigma = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
kappa = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
k = int(os.environ.get("PITSTOP_NUM_NODES", "1"))
me = int(os.environ.get("PITSTOP_NODE_RANK", "0"))
run, gen, cdir = os.environ["PITSTOP_RUN"], int(os.environ["PITSTOP_GEN"]), os.environ["PITSTOP_CHECKPOINT_DIR"]
over = os.path.join(cdir, f"gen-{gen}.over")
asked = []
signal.signal(signal.SIGUSR1, lambda s, f: asked.append("SIGUSR1"))
signal.signal(signal.SIGTERM, lambda s, f: asked.append("SIGTERM"))
if me != 0:
    while not asked and not os.path.exists(over):
        time.sleep(0.02)
    sys.exit(0)
t0 = time.monotonic()
resume = os.environ.get("PITSTOP_RESUME", "")
step = int(open(resume).read()) if resume else 0


def rec(**r):
    print("PITSTOP " + json.dumps({"run": run, "gen": gen, "t": time.monotonic() - t0, **r}), flush=True)


def finish(status, **more):
    open(over, "w").close()
    rec(type="end", status=status, total_s=time.monotonic() - t0, **more)
    sys.exit(0)


time.sleep(0.2)
rec(type="init", init_s=time.monotonic() - t0, ranks=k, nodes=k,
    config={"model": "proto_scale", "batch": 64, "planned_iters": n})
per = step_s * (1 + sigma * (k - 1) + kappa * k * (k - 1)) / k
while step < n:
    s0 = time.monotonic()
    time.sleep(per)
    took = time.monotonic() - s0
    comp = took * (step_s / k) / per  # the parallel part; the rest (serial, crosstalk) is the collective's wait
    rec(type="iter", epoch=0, iter=step, step=step, batch=64, step_s=took, compute_s=[comp] * k,
        wait_s=[took - comp] * k, loss=1.0)
    step += 1
    if asked:
        path = os.path.join(cdir, f"ckpt-{step}.txt")
        with open(path + ".tmp", "w") as f:
            f.write(str(step))
        os.rename(path + ".tmp", path)
        rec(type="checkpoint", step=step, path=path, bytes=len(str(step)), ckpt_s=0.0)
        finish("stopped", stop=asked[0])
finish("done")
