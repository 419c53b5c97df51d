# faults_common.bash — sourced by tests/control/run_ckpt_lost.sh, run_finish.sh and
# bench/fault-soak: the local catalog, the train options of a small cnn job, and the
# helpers that kill a controller at a checkpoint, freeze what it left, damage files
# and check the events file.
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"

# write_catalog FILE: local-1 (a full CPU) and local-0.4 (a 40% cgroup quota)
write_catalog() {
  cat > "$1" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
local-0.4  1      1     40%        0.10     1          0
CAT
}
common=(--model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant
        --no-validation --limit 400 --epochs 0 --backend ref)

# wait_ckpt EVENTS STEP [TRIES]: until EVENTS holds a checkpoint record at STEP or later
wait_ckpt() {
  local tries=${3:-1200}
  for _ in $(seq 1 "$tries"); do
    if [ -f "$1" ] && $PY -c '
import json, sys
n = 0
for l in open(sys.argv[1]):
    try:
        x = json.loads(l)
    except ValueError:
        continue
    if x.get("type") == "checkpoint" and x.get("step", -1) >= int(sys.argv[2]):
        sys.exit(0)
sys.exit(1)' "$1" "$2"; then return 0; fi
    sleep 0.1
  done
  fail "timed out waiting for a checkpoint at step $2 in $1"
}

# freeze DIR RUN: SIGKILL to the process groups DIR/state names and to every process
# tagged PITSTOP_RUN=RUN (the workload a killed controller left: mpirun, its ranks), so
# no checkpoint is written after the controller's death
freeze() {
  local g f
  for g in $(sed -n 's/^pgids//p' "$1/state" 2> /dev/null); do kill -9 -- "-$g" 2> /dev/null || true; done
  for f in $(grep -lzx "PITSTOP_RUN=$2" /proc/[0-9]*/environ 2> /dev/null); do
    f=${f#/proc/}
    kill -9 "${f%/environ}" 2> /dev/null || true
  done
  sleep 0.3
}

# resume_target DIR: the checkpoint a restarted controller of DIR would resume from (the
# held link of the newer of the state's step and the events file's last checkpoint)
resume_target() {
  $PY - "$1" << 'PYEOF'
import json, os, re, sys
d = sys.argv[1]
st = open(os.path.join(d, "state")).read()
step = int(re.search(r"^step (\d+)", st, re.M).group(1))
for l in open(os.path.join(d, "events.jsonl")):
    x = json.loads(l)
    if x["type"] == "checkpoint":
        step = max(step, x["step"])
print(os.path.join(d, "held-%012d.ckpt" % step))
PYEOF
}

# damage truncate|flip FILE...: half of each file gone, or one byte in its middle inverted;
# a file of several names (a held link) is damaged once
damage() {
  $PY - "$@" << 'PYEOF'
import os, sys
how, seen = sys.argv[1], set()
for p in sys.argv[2:]:
    if not os.path.exists(p):
        continue
    st = os.stat(p)
    if (st.st_dev, st.st_ino) in seen:
        continue
    seen.add((st.st_dev, st.st_ino))
    n = st.st_size
    if how == "truncate":
        os.truncate(p, n // 2)
    else:
        with open(p, "r+b") as f:
            f.seek(n // 2)
            b = f.read(1)
            f.seek(n // 2)
            f.write(bytes([b[0] ^ 0xFF]))
PYEOF
}

# once EVENTS N WHAT: the events file's iterations are steps 0..N-1, each exactly once
once() {
  $PY - "$@" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(int(sys.argv[2]))), \
    f"steps not each once {sys.argv[3]}: {len(steps)} iteration records, {len(set(steps))} distinct"
print(f"{len(steps)} steps each once {sys.argv[3]}")
PYEOF
}
