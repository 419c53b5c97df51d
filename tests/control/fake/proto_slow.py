#!/usr/bin/python3
"""proto_slow.py N EVERY CKPT_S [STEP_S [START_S]] — a workload that speaks the protocol (docs/protocol.md),
for the stop tests (tests/control/run_stop.sh): N steps of STEP_S seconds (default 0.05) after a
START_S start-up (default 1), a checkpoint every EVERY steps that takes CKPT_S seconds, and on SIGUSR1 or SIGTERM
a checkpoint at the next step boundary, an end record "stopped" and exit 0. It resumes from
PITSTOP_RESUME (a file holding the step). Markers on stderr (the generation's log) let a test
send a signal in a phase: "starting", "step K", "checkpointing at K", "checkpoint done"."""
import json, os, signal, sys, time

n, every, ckpt_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
step_s = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
start_s = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
t0 = time.monotonic()
asked = []
signal.signal(signal.SIGUSR1, lambda s, f: asked.append("SIGUSR1"))
signal.signal(signal.SIGTERM, lambda s, f: asked.append("SIGTERM"))
run, gen, cdir = os.environ["PITSTOP_RUN"], int(os.environ["PITSTOP_GEN"]), os.environ["PITSTOP_CHECKPOINT_DIR"]
resume = os.environ.get("PITSTOP_RESUME", "")
step = int(open(resume).read()) if resume else 0


def rec(**r):
    print("PITSTOP " + json.dumps({"run": run, "gen": gen, "t": time.monotonic() - t0, **r}), flush=True)


def say(s):
    print(s, file=sys.stderr, flush=True)


def checkpoint():
    say(f"checkpointing at {step}")
    c0 = time.monotonic()
    time.sleep(ckpt_s)
    path = os.path.join(cdir, f"ckpt-{step}.txt")
    with open(path + ".tmp", "w") as f:
        f.write(str(step))
    os.rename(path + ".tmp", path)
    rec(type="checkpoint", step=step, path=path, bytes=len(str(step)), ckpt_s=time.monotonic() - c0)
    say("checkpoint done")


say("starting")
time.sleep(start_s)
rec(type="init", init_s=time.monotonic() - t0, ranks=1, nodes=1, config={"model": "proto_slow", "batch": 4, "planned_iters": n})
while step < n:
    s0 = time.monotonic()
    time.sleep(step_s)
    rec(type="iter", epoch=0, iter=step, step=step, batch=4, step_s=time.monotonic() - s0, loss=1.0)
    step += 1
    say(f"step {step}")
    if asked:
        checkpoint()
        rec(type="end", status="stopped", stop=asked[0], total_s=time.monotonic() - t0)
        sys.exit(0)
    if every and step % every == 0:
        checkpoint()
rec(type="end", status="done", total_s=time.monotonic() - t0)
