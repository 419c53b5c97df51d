# command_common.bash — sourced by tests/control/command_*.sh: the fake cloud
# (tests/control/fake: fake `aws` and `clapp` first in PATH, every call recorded), a
# catalog, the train options, and the checks both tests make.
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
export FAKE_CLOUD=$T/cloud PATH="$PIT_SOURCE_DIR/tests/control/fake:$PATH"
mkdir -p "$FAKE_CLOUD"
echo 1 > "$FAKE_CLOUD/boot_s"
echo 30 > "$FAKE_CLOUD/grace_s"
# this test's processes only: other checkouts may run the same tests (same run names) meanwhile
leftovers() { { pgrep -af -- "--run $RUNP[0-9]" || true; } | grep -F -- "$T/" | grep -v pgrep || true; }
cleanup() {
  pkill -9 -f -- "--run $RUNP[0-9].* $T/" 2> /dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  price_h  spot_price_h  billing_s  min_s
c5.large   2      0.085    0.035         1          60
m5.large   2      0.096    0.040         1          60
CAT
common=(--model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant
        --no-validation --limit 400 --epochs 0 --backend ref)

# live_nodes: nodes the fake cloud still runs (any run)
live_nodes() {
  $PY - "$FAKE_CLOUD/nodes.json" << 'PYEOF'
import json, sys, time, os
if not os.path.exists(sys.argv[1]):
    sys.exit(0)
now = time.time()
for n in json.load(open(sys.argv[1]))["nodes"]:
    if not (n.get("gone_at") and n["gone_at"] <= now):
        print(n["id"])
PYEOF
}

# check_run EVENTS NITERS RUN GRACE: contiguous steps, every sample of each whole epoch once,
# a reclaim decision followed by a checkpoint within GRACE s (GRACE 0: a node gone without
# notice, no reclaim decision), every node started was stopped, NLOST of them lost (5th argument,
# default 1)
check_run() {
  $PY - "$@" << 'PYEOF'
import json, os, sys
r = [json.loads(l) for l in open(sys.argv[1])]
niters, run, grace = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
nlost = int(sys.argv[5]) if len(sys.argv) > 5 else 1
ri = [x for x in r if x["type"] == "iter"]
steps = [x["step"] for x in ri]
assert steps == list(range(niters)), f"steps not contiguous: {len(steps)} {steps[:3]}..{steps[-3:]}"
assert all(x["run"] == run for x in r)
sys.path.insert(0, os.path.join(os.environ["PIT_SOURCE_DIR"], "python"))
import pitstop  # the protocol's reference: samples digests (docs/protocol.md)
whole = pitstop.epoch_digest(400)
by = {}
for x in ri:
    by.setdefault(x["epoch"], []).append(x)
full = [ep for ep, xs in by.items() if len(xs) == 13]
for ep in full:
    assert pitstop.add_digests(x["samples_digest"] for x in by[ep]) == whole, f"epoch {ep}: a sample missed or repeated"
dec = [x for x in r if x["type"] == "decision" and "(policy reclaim)" in json.dumps(x["detail"])]
if grace > 0:
    assert len(dec) == 1, f"{len(dec)} reclaim decisions"
    ck = [x for x in r if x["type"] == "checkpoint" and x["t"] >= dec[0]["t"]]
    assert ck and ck[0]["t"] - dec[0]["t"] < grace, "no checkpoint within the grace period after the notice"
    how = f"checkpoint {ck[0]['t'] - dec[0]['t']:.3f} s after the notice (grace {grace:.0f} s)"
else:
    assert not dec, dec
    how = "no notice: the generation failed and restarted from the last checkpoint"
nodes = [x for x in r if x["type"] == "node"]
starts = [x["node"] for x in nodes if x["action"] == "start"]
ends = [x["node"] for x in nodes if x["action"] in ("stop", "lost")]
assert sorted(starts) == sorted(ends) and len(set(starts)) == len(starts), (starts, ends)
lost = [x["node"] for x in nodes if x["action"] == "lost"]
assert len(lost) == nlost, lost
gens = sorted({x["gen"] for x in ri})
print(f"{'reclaim' if grace > 0 else 'node gone'}: {niters} contiguous steps over generations {gens}, "
      f"{len(full)} whole epochs each using every sample once; {how}; "
      f"{len(starts)} nodes started, all stopped ({', '.join(lost)} {'reclaimed' if grace > 0 else 'lost'} and replaced)")
PYEOF
}

# check_calls PROG RUN: every recorded call ran PROG itself (no shell), and values reached it whole
check_calls() {
  $PY - "$FAKE_CLOUD/calls" "$@" << 'PYEOF'
import json, os, sys
d, prog, run = sys.argv[1], sys.argv[2], sys.argv[3]
calls = [json.load(open(os.path.join(d, f)))["argv"] for f in sorted(os.listdir(d))]
assert calls
for a in calls:
    assert os.path.basename(a[0]) == prog, f"a call not of {prog}: {a}"
    assert not any(x in ("sh", "bash", "-c") for x in a), f"a shell: {a}"
print(f"{len(calls)} calls of {prog}, none through a shell")
PYEOF
}

# cli_left: processes of the fake CLI started for this test (a hung start not killed)
cli_left() {
  local p
  for p in $(pgrep -f "$PIT_SOURCE_DIR/tests/control/fake/" || true); do
    grep -qzx "FAKE_CLOUD=$FAKE_CLOUD" "/proc/$p/environ" 2> /dev/null && echo "$p $(tr '\0' ' ' < "/proc/$p/cmdline")"
  done
  true
}

# bad WANT ARGS...: pitstop fails, says WANT, leaves no node, no process of the run, no CLI call running
bad() {
  local want=$1
  shift
  if "$PITSTOP" "$@" > "$T/bad.out" 2> "$T/bad.err"; then fail "accepted: $*"; fi
  grep -q -- "$want" "$T/bad.err" || fail "'$*' said: $(cat "$T/bad.err") (wanted: $want)"
  [ -z "$(live_nodes)" ] || fail "nodes left running after '$want': $(live_nodes)"
  [ -z "$(cli_left)" ] || fail "CLI calls left running after '$want': $(cli_left)"
  echo "bad input ok: $(grep -m1 -- "$want" "$T/bad.err")"
}

# aws_starts RUN: how many run-instances calls for RUN the fake cloud recorded
aws_starts() { grep -l "run-instances.*Value=$1}" "$FAKE_CLOUD"/calls/*.json 2> /dev/null | wc -l; }

# replay_cost EVENTS REPORT REPLAY_JSON: `pitstop simulate --replay --format json` of a run against
# the run itself: the replay's live cost is the report's (4 decimals), the replayed cost is it within
# 1%, the same decisions, and every restart of the run's own (each generation after the first) followed
replay_cost() {
  $PY - "$@" << 'PYEOF'
import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1])]
report, rp = open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
cost = float(re.search(r"steps in [0-9.]+ s, .*cost \$([0-9.]+)\n", report).group(1))
live, sim = rp["live"]["cost"], rp["replay"]["cost"]
assert abs(live - cost) <= 0.00005 + 1e-12, f"the replay's live cost {live} is not the report's {cost}"
assert abs(sim - live) <= 0.01 * live, f"replay ${sim:.6f} against the run's ${live:.6f}"
assert rp["same_decisions"] and not rp["diverged"], rp
gens = sorted({x["gen"] for x in r if x["type"] == "iter"})
assert rp["restarts_followed"] == len(gens) - 1, (rp["restarts_followed"], gens)
print(f"replay: cost ${sim:.6f} against the run's ${live:.6f} (report ${cost:.4f}), ratio {sim / live:.4f}; "
      f"the same decisions; {rp['restarts_followed']} of the run's own restarts followed")
PYEOF
}

# check_zone_calls RUN ZONE...: every run-instances call names one of the ZONEs (--placement, one argv
# entry), and every node the fake cloud started for RUN is gone and was terminated by a call
check_zone_calls() {
  $PY - "$FAKE_CLOUD" "$@" << 'PYEOF'
import json, os, sys, time
cloud, run, zones = sys.argv[1], sys.argv[2], sys.argv[3:]
calls = [json.load(open(os.path.join(cloud, "calls", f)))["argv"][1:] for f in sorted(os.listdir(os.path.join(cloud, "calls")))]
starts = [a for a in calls if a[1] == "run-instances"]
for a in starts:
    assert a[a.index("--placement") + 1] in [f"AvailabilityZone={z}" for z in zones], a
nodes = {n["id"]: n for n in json.load(open(os.path.join(cloud, "nodes.json")))["nodes"] if n["tags"].get("pitstop-run") == run}
terms = {a[a.index("--instance-ids") + 1] for a in calls if a[1] == "terminate-instances"}
now = time.time()
assert all(n.get("gone_at") and n["gone_at"] <= now for n in nodes.values()), nodes
assert set(nodes) <= terms, (set(nodes) - terms, "started and never terminated")
print(f"{len(starts)} run-instances, each naming its zone; {len(nodes)} nodes, all terminated")
PYEOF
}

# aws_config FILE POLL_S [ZONES]: the aws preset's provider config, in one zone or across ZONES (a
# JSON list)
aws_config() {
  {
    echo '{"preset": "aws", "vars": {"image": "ami-0abc", "key": "k", "security_group": "sg-1"},'
    [ -z "${3:-}" ] || echo " \"zones\": $3,"
    echo " \"host\": \"localhost\", \"poll_s\": $2, \"retry_wait_s\": 0.2, \"start_timeout_s\": 20, \"grace_s\": 30}"
  } > "$1"
}

# zones_config FILE: the aws preset's provider config across zones us-east-1a and us-east-1b
zones_config() { aws_config "$1" 0.5 '["us-east-1a", "us-east-1b"]'; }
