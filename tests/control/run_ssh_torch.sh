#!/usr/bin/env bash
# ctest: slow
# run_ssh_torch.sh — a user's own PyTorch script (examples/pytorch/ddp_snapshot.py, gloo) under
# torchrun on two ssh "hosts" (network namespaces with their own sshd, tests/dist/netns_sshd.bash),
# per-node launcher, resized 1 → 2 → 1 by restart. The hosts' names (h1, h2) resolve to nothing,
# as a cluster's may not, or to 127.0.1.1, as a stock Debian host's does: gloo then binds to a
# loopback address and the first cross-host collective fails with "connect [127.0.0.1]:N:
# Connection refused" (tried 2026-11-30: 4 generations of 120 s, then the run failed).
#  1. the run finishes: every step once and in order, generations on 1, 2, 1 nodes, ranks on both
#     hosts in the middle one (node-exec set GLOO_SOCKET_IFNAME to the interface holding the host's
#     address), the script named by a relative path found on the hosts (the command runs in the
#     controller's directory there), every host released, nothing of the run left on either;
#  2. the same command with GLOO_SOCKET_IFNAME=lo forced: one node's worker fails, the other's hangs,
#     and torchrun waits at its exit barrier (300 s): the controller ends the generation itself,
#     saying so and quoting the script's error, with a hint naming GLOO_SOCKET_IFNAME; nothing left;
#  3. the controller SIGKILLed on two hosts, its orphaned script left to save another snapshot, the
#     same command run again: both hosts adopted, the steps the orphan did unseen said and recorded
#     once, every step of the job once, nothing left;
#  4. the controller SIGKILLed in the job's last epoch, its orphan left to finish the job: the
#     script run again prints only that it resumes at the last epoch and exits; the run is said
#     finished, the steps the orphan did recorded once (before, they were missing and the run had
#     no end record: fault soak over ssh, 2026-11-30);
#  4b. the controller on h1, its node on h2: PITSTOP_MASTER_PORT is a port free on h2 (its kernel's
#     range, set apart from h1's), asked there;
#  4c. h2's link down until its ssh session ends, then up: the restart is the network's, not
#     counted against --max-restarts 0, and the run finishes, every step once;
#  4d. h2's link down past the health check (set aside, its claim kept), up again while the
#     replacement start waits for a host (--lost-wait): released and used again, every step once;
#  5. a host cut off mid-run (its link down): the generation fails within about 25 s naming the
#     host, which is set aside with its claim kept; the replacement waits --lost-wait (10 s) for it,
#     and the run ends saying no host is left;
#  6. a plain Python script printing a line every 0.1 s without flushing, on h1: its steps timed
#     0.1 s apart (PYTHONUNBUFFERED=1 goes with the command over ssh).
# Needs root (namespaces, sshd) and Debian's python3-torch: exit 77 (skipped) otherwise.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PITSTOP:?}"
PY=/usr/bin/python3
if [[ $(id -u) -ne 0 ]]; then
  echo "run_ssh_torch: needs root (network namespaces, sshd): skipped"
  exit 77
fi
for t in ip unshare /usr/sbin/sshd ssh ssh-keygen; do
  command -v "$t" > /dev/null || { echo "run_ssh_torch: $t not installed: skipped"; exit 77; }
done
"$PY" -c 'import torch.distributed' 2> /dev/null || { echo "run_ssh_torch: no python3-torch: skipped"; exit 77; }
net=10.213.80
tag=pst$$
tmp=$(mktemp -d)
T=$tmp
pids=()
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
. "$PIT_SOURCE_DIR/tests/dist/netns_sshd.bash"
leftovers() { pgrep -af -- "--run tt[0-9]$tag" | grep -v pgrep || true; }
tagged() { # the processes of run $1 on this machine (both hosts: one PID space)
  local p
  for p in $(pgrep -f . || true); do
    { tr '\0' '\n' < "/proc/$p/environ"; } 2> /dev/null | grep -qx "PITSTOP_RUN=$1" && echo "$p $(cat "/proc/$p/comm" 2> /dev/null)"
  done
  true
}
cleanup() {
  local p
  for p in $(tagged tt1$tag | cut -d' ' -f1) $(tagged tt2$tag | cut -d' ' -f1) $(tagged tt3$tag | cut -d' ' -f1) \
    $(tagged tt4$tag | cut -d' ' -f1) $(tagged tt5$tag | cut -d' ' -f1) $(tagged tt6$tag | cut -d' ' -f1) \
    $(tagged tt7$tag | cut -d' ' -f1) $(tagged tt8$tag | cut -d' ' -f1) \
    $(tagged tt9$tag | cut -d' ' -f1); do
    kill -9 "$p" 2> /dev/null || true
  done
  netns_sshd_down
  [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
netns_sshd_up || fail "two hosts"
export PITSTOP_SSH_OPTS=$ssh_opts OMP_NUM_THREADS=1
ON_H1=(ip netns exec "$ns1" unshare --uts sh -c 'hostname h1; exec "$@"' sh)
if getent hosts h1 > /dev/null || getent hosts h2 > /dev/null; then
  echo "note: h1 or h2 resolves here ($(getent hosts h1 h2 | tr '\n' ' ')): case 1 may pass without node-exec's setting"
fi

cat > "$T/cat.tsv" << 'CAT'
itype   vcpus  price_h  billing_s  min_s
host    1      0.10     1          0
CAT
printf '%s slots=1\n%s slots=1\n' $net.1 $net.2 > "$T/hostfile"
# the script named as a user in its directory does, relative ("ddp_snapshot.py"): each run starts in
# $T, and on the hosts the command runs there too (node-exec --cd), not in the ssh login's home
ln -s "$PIT_SOURCE_DIR/examples/pytorch/ddp_snapshot.py" "$T/ddp_snapshot.py"
# cmd RUN [PITSTOP OPTIONS] -- [PREFIX...]: into C, the command of run RUN: the script under
# torchrun, 8 epochs, a snapshot after each; run ...: it, its stdout and stderr in $T/RUN.out, .err
cmd() {
  local r=$1
  shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  C=("${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/hostfile" --catalog "$T/cat.tsv" --itype host
     --launcher per-node --resume-by-restart --epochs 8 --checkpoint-dir "$T/$r" --run "$r" "${opts[@]}"
     -- "$@" "$PY" -m torch.distributed.run '--nnodes=$PITSTOP_NUM_NODES' '--node_rank=$PITSTOP_NODE_RANK'
     --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR' '--master_port=$PITSTOP_MASTER_PORT' --redirects 2
     --tee 2 ddp_snapshot.py --epochs 8 --save-every 1 --snapshot "$T/$r.pt"
     --step-sleep 0.02)
}
run() {
  cmd "$@"
  (cd "$T" && timeout 300 "${C[@]}") > "$T/$1.out" 2> "$T/$1.err"
}
# steps RUN TOTAL: every step of the events file once, 0..TOTAL-1, and the run done
steps() {
  "$PY" - "$T/$1/events.jsonl" "$2" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = sorted(x["step"] for x in r if x["type"] == "iter")
assert steps == list(range(int(sys.argv[2]))), f"steps {steps[:3]}..{steps[-3:]} ({len(steps)}, {len(set(steps))} distinct)"
ends = [x.get("status") for x in r if x["type"] == "end"]
assert ends and ends[-1] == "done", ends
PYEOF
}
# start_until RUN PATTERN SECONDS: the command in C started in the background (its pid in ctl),
# until the events file has a line matching PATTERN
start_until() {
  (cd "$T" && exec "${C[@]}") > "$T/$1.out" 2> "$T/$1.err" &
  ctl=$!
  local i
  for ((i = 0; i < $3 * 20; i++)); do grep -q "$2" "$T/$1/events.jsonl" 2> /dev/null && return 0; sleep 0.05; done
  fail "no '$2' in the events within $3 s: $(cat "$T/$1.err")"
}
before=$(leftovers)

# ---- 1. resized 1 → 2 → 1 across the two hosts
r=tt1$tag
run $r --nodes 1 --schedule 16:2,40:1 -- || fail "the run failed: $(grep pitstop: "$T/$r.err"; tail -20 "$T/$r"/gen-*.log)"
steps $r 256 || fail "steps"
"$PY" - "$T/$r/events.jsonl" << 'PYEOF' || fail "generations"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
nodes = {x["gen"]: x["config"]["nodes"] for x in r if x["type"] == "init"}
assert nodes == {0: 1, 1: 2, 2: 1}, nodes
print(f"across two ssh hosts: 256 steps each once, generations on {nodes[0]}, {nodes[1]}, {nodes[2]} nodes")
PYEOF
for n in 0 1; do
  grep -q "^\[$r.h$n err\] \[default0\]:" "$T/$r/gen-1.log" || grep -q "^\[$r.h$n out\]" "$T/$r/gen-1.log" ||
    fail "no line of node $n in the 2-node generation: $(head "$T/$r/gen-1.log")"
done
! grep -q "Connection refused" "$T/$r"/gen-*.log || fail "a rank could not connect: $(grep -m2 'Connection refused' "$T/$r"/gen-*.log)"
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"
[ -z "$(tagged $r)" ] || fail "left running: $(tagged $r)"
echo "2-node generation: ranks on both hosts, no loopback connect; nothing left"

# ---- 2. GLOO_SOCKET_IFNAME=lo forced: a worker fails, the other hangs, torchrun waits at its barrier
r=tt2$tag
if run $r --nodes 1 --schedule 16:2 --max-restarts 0 -- env GLOO_SOCKET_IFNAME=lo; then fail "a run whose ranks bind to lo finished"; fi
grep -q "generation 1 failed (torchrun on $r.h[01] said a worker failed and was still there [0-9]* s later, waiting for the other nodes at its exit barrier)" "$T/$r.err" ||
  fail "not ended by the controller: $(grep pitstop: "$T/$r.err")"
grep -q "the workload said: RuntimeError: .*connect \[127.0.0.1\]" "$T/$r.err" || fail "the script's error not quoted: $(grep pitstop: "$T/$r.err")"
grep -q "hint: .*GLOO_SOCKET_IFNAME" "$T/$r.err" || fail "no hint: $(grep pitstop: "$T/$r.err")"
echo "bound to lo: $(grep -m1 'generation 1 failed' "$T/$r.err" | cut -c1-200)..."
echo "  $(grep -m1 'hint:' "$T/$r.err" | cut -c1-160)..."
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"
[ -z "$(tagged $r)" ] || fail "left running: $(tagged $r)"

# ---- 3. the controller SIGKILLed on 2 hosts; its orphaned script saves another snapshot before the
# same command, run again, stops it: the steps it did unseen are recorded once (without a time)
r=tt3$tag
cmd $r --nodes 2 --
start_until $r '"checkpoint"' 60
[ "$(cat /proc/$ctl/comm)" = pitstop ] || fail "pid $ctl is not the controller"
kill -9 $ctl
wait $ctl 2> /dev/null || true
known=$(grep '"checkpoint"' "$T/$r/events.jsonl" | tail -1 | sed 's/.*"step":\([0-9]*\).*/\1/')
m0=$(stat -c %Y.%y "$T/$r.pt")
for _ in $(seq 300); do [ "$(stat -c %Y.%y "$T/$r.pt")" != "$m0" ] && break; sleep 0.05; done
[ "$(stat -c %Y.%y "$T/$r.pt")" != "$m0" ] || fail "the orphaned script saved no snapshot in 15 s"
(cd "$T" && timeout 300 "${C[@]}") > "$T/$r.out2" 2> "$T/$r.err2" || fail "the second controller failed: $(cat "$T/$r.err2")"
grep -q "adopted node $r.h0" "$T/$r.err2" && grep -q "adopted node $r.h1" "$T/$r.err2" || fail "not adopted: $(cat "$T/$r.err2")"
grep -q "resumed at step [0-9]*, past the last snapshot this controller saw (step $known)" "$T/$r.err2" ||
  fail "the unseen steps not said: $(grep pitstop: "$T/$r.err2")"
steps $r 128 || fail "steps after the controller's kill"
echo "controller killed after the snapshot at step $known, the orphan saved more: $(grep -m1 'past the last' "$T/$r.err2" | cut -c10-)"
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"
[ -z "$(tagged $r)" ] || fail "left running: $(tagged $r)"

# ---- 4. the controller SIGKILLed in the job's last epoch: its orphan finishes the job unseen, and the
# script run again only says it resumes at epoch 8 and exits: the run is done, every step once
r=tt4$tag
cmd $r --nodes 2 --
start_until $r '"checkpoint".*"step":112,' 60
kill -9 $ctl
wait $ctl 2> /dev/null || true
for _ in $(seq 300); do [ -z "$(tagged $r)" ] && break; sleep 0.1; done
[ -z "$(tagged $r)" ] || fail "the orphaned workload still runs 30 s after its controller's kill: $(tagged $r)"
known=$(grep '"checkpoint"' "$T/$r/events.jsonl" | tail -1 | sed 's/.*"step":\([0-9]*\).*/\1/')
[ "$known" -lt 128 ] || fail "the killed controller saw the last snapshot: the case did not happen"
(cd "$T" && timeout 300 "${C[@]}") > "$T/$r.out2" 2> "$T/$r.err2" || fail "the second controller failed: $(cat "$T/$r.err2")"
grep -q "resumed at step 128, past the last snapshot this controller saw (step $known)" "$T/$r.err2" ||
  fail "the job finished unseen not said: $(grep pitstop: "$T/$r.err2")"
steps $r 128 || fail "steps after the orphan finished the job"
"$PITSTOP" status "$T/$r" | grep -q ": finished$" || fail "not finished: $("$PITSTOP" status "$T/$r" 2>&1 | head -3)"
echo "controller killed in the last epoch (last snapshot seen: step $known), the orphan finished the job; run again:" \
  "$(grep -m1 'past the last' "$T/$r.err2" | cut -c10-90)...; finished, 128 steps once"
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"

# ---- 4b. the rendezvous port is one free on node 0's host, asked there (node-check --free-port over
# ssh), not on the controller's machine, where another program may hold what is free here: the
# controller on h1, its one node on h2, each host's kernel choosing free ports from its own range
r=tt7$tag
printf '%s slots=1\n' $net.2 > "$T/hostfile2"
cat > "$T/port.py" << 'EOF'
import sys, time
print(f"port={sys.argv[1]}")
for i in range(5):
    time.sleep(0.05)
    print(f"[0/1][{i}/5] Loss_D: 1.0 Loss_G: 1.0 D(x): 0.5 D(G(z)): 0.5 / 0.5")
EOF
ip netns exec "$ns1" sysctl -q -w net.ipv4.ip_local_port_range="50000 60999"
ip netns exec "$ns2" sysctl -q -w net.ipv4.ip_local_port_range="40100 40199"
(cd "$T" && timeout 120 "${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/hostfile2" --catalog "$T/cat.tsv" \
  --itype host --launcher per-node --checkpoint-dir "$T/$r" --run $r --quiet -- "$PY" port.py '$PITSTOP_MASTER_PORT') \
  > "$T/$r.out" 2> "$T/$r.err" || fail "the port run failed: $(cat "$T/$r.err")"
ip netns exec "$ns1" sysctl -q -w net.ipv4.ip_local_port_range="32768 60999"
ip netns exec "$ns2" sysctl -q -w net.ipv4.ip_local_port_range="32768 60999"
port=$(sed -n 's/^\[.* out\] port=\([0-9]*\)$/\1/p' "$T/$r/gen-0.log")
[ -n "$port" ] && [ "$port" -ge 40100 ] && [ "$port" -le 40199 ] ||
  fail "PITSTOP_MASTER_PORT '$port' is not one of node 0's host (h2: 40100-40199): $(cat "$T/$r/gen-0.log")"
echo "rendezvous port chosen on node 0's host: $port (h2 gives 40100-40199, the controller's h1 50000-60999)"

# ---- 4c. h2's link down long enough for its ssh session to end (ServerAliveInterval 5 x CountMax 3),
# then up again: the network's doing, not the workload's. The generation fails naming the session
# lost and restarts from its snapshot on the same two hosts, not counted against --max-restarts
# (0 here; before 2026-11-30 it was counted and this run ended there)
r=tt8$tag
cmd $r --nodes 2 --max-restarts 0 --
start_until $r '"checkpoint"' 60
sess="ssh .*$net.2 .*node-exec.*PITSTOP_RUN=$r"
pgrep -f "$sess" > /dev/null || fail "no ssh session to h2 found: $(pgrep -af "ssh .*$net.2")"
ip -n "$ns2" link set "${tag}b" down
for ((i = 0; i < 600; i++)); do
  pgrep -f "$sess" > /dev/null || break
  sleep 0.1
done
ip -n "$ns2" link set "${tag}b" up
[ "$i" -lt 600 ] || fail "the ssh session to h2 outlived its link by 60 s"
if timeout 180 tail --pid=$ctl -f /dev/null; then :; else fail "the controller still runs 180 s after h2's link came back"; fi
wait $ctl || fail "the run failed after h2's link came back: $(grep pitstop: "$T/$r.err")"
grep -q "generation 0 failed (the ssh session to $net.2 (node $r.h1) ended with 255: the host went silent or unreachable): it restarts from the checkpoint at step [0-9]* .*a node's network lost after a checkpoint of this generation: not counted against --max-restarts (0 of 0 used)" \
  "$T/$r.err" || fail "the lost session not said as the network's: $(grep pitstop: "$T/$r.err")"
steps $r 128 || fail "steps"
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"
[ -z "$(tagged $r)" ] || fail "left running: $(tagged $r)"
echo "h2's link down for $((i / 10)) s, then up: the generation failed on its lost ssh session and restarted from" \
  "its snapshot, $(grep -m1 -o "not counted against --max-restarts ([^)]*)" "$T/$r.err"); 128 steps once (2 nodes)"

# ---- 4d. h2's link down past the health check (the host set aside, its stop unable to reach it, its
# claim kept), up again while the replacement waits for a host (--lost-wait): h2 answers, is released
# and started again; the run finishes with every step once and no claim left (before 2026-11-30 it
# ended at once: "every host ... is held by this run already"; fault soak over ssh, a 27.6 s flap)
r=tt9$tag
cmd $r --nodes 2 --max-restarts 1 --
start_until $r '"checkpoint"' 60
ip -n "$ns2" link set "${tag}b" down
for ((i = 0; i < 1200; i++)); do
  grep -q "waiting up to 120 s (--lost-wait) for node $r.h1" "$T/$r.err" && break
  kill -0 $ctl 2> /dev/null || break
  sleep 0.1
done
ip -n "$ns2" link set "${tag}b" up
[ "$i" -lt 1200 ] || fail "no wait for the set-aside host within 120 s: $(grep pitstop: "$T/$r.err")"
if timeout 240 tail --pid=$ctl -f /dev/null; then :; else fail "the controller still runs 240 s after h2's link came back"; fi
wait $ctl || fail "the run failed after h2's link came back: $(grep pitstop: "$T/$r.err")"
grep -q "node $r.h1 set aside: host $net.2: unreachable over ssh" "$T/$r.err" || fail "not set aside: $(grep pitstop: "$T/$r.err")"
grep -q "node $r.h1 answers again: stopped, its claim released" "$T/$r.err" ||
  fail "the host's return not said: $(grep pitstop: "$T/$r.err")"
steps $r 128 || fail "steps"
[ -z "$(ls "$T/$r/nodes")" ] || fail "hosts still claimed: $(ls "$T/$r/nodes")"
[ -z "$(tagged $r)" ] || fail "left running: $(tagged $r)"
echo "h2 set aside while its link was down ($((i / 10)) s to the wait), back during the wait: released, started" \
  "again, 128 steps once (2 nodes), no claim left"

# ---- 5. a host goes silent mid-run (h2's link down; the test's last section: h2 stays cut off):
# its ssh session ends within ServerAliveInterval x CountMax, the generation fails naming the host,
# the host is set aside, its claim kept (it cannot be released), and with no host left the run ends
# saying so, instead of the session hanging until gloo's 30-minute time-out
r=tt5$tag
cmd $r --nodes 2 --max-restarts 1 --lost-wait 10 --
start_until $r '"checkpoint"' 60
ip -n "$ns2" link set "${tag}b" down
if timeout 120 tail --pid=$ctl -f /dev/null; then :; else fail "the controller still runs 120 s after h2 went silent"; fi
grep -q "waiting up to 10 s (--lost-wait) for node $r.h1, set aside, to answer again" "$T/$r.err" ||
  fail "no wait for the host said: $(grep pitstop: "$T/$r.err")"
wait $ctl && fail "the run finished without its second host"
grep -q "generation 0 failed (the ssh session to $net.2 (node $r.h1) ended with 255: the host went silent or unreachable)" \
  "$T/$r.err" || fail "the lost host not named: $(grep pitstop: "$T/$r.err")"
grep -q "node $r.h1 set aside: host $net.2: unreachable over ssh" "$T/$r.err" || fail "not set aside: $(grep pitstop: "$T/$r.err")"
grep -q "node $r.h1 could not be stopped (.*): its claim stays" "$T/$r.err" || fail "the failed stop not said: $(grep pitstop: "$T/$r.err")"
tail -2 "$T/$r.err" | grep -q "cannot start a node of type host: every host .* is held by this run already: .*$net.2 (node $r.h1)" ||
  fail "the run's end not said: $(tail -3 "$T/$r.err")"
[ "$(ls "$T/$r/nodes")" = "$r.h1.node" ] || fail "claims left: $(ls "$T/$r/nodes")"
echo "h2 cut off mid-run: $(grep -m1 'ssh session to' "$T/$r.err" | cut -c10-130)...; set aside, its claim kept;" \
  "the run ended: $(tail -2 "$T/$r.err" | head -1 | cut -c10-90)..."
# ---- 6. a plain Python script's lines over ssh (h1 only: h2 is cut off): it prints an iteration line
# every 0.1 s in the DCGAN example's shape, without a time and without flushing. Its steps are timed
# by the lines' arrival, so they must arrive as printed: PYTHONUNBUFFERED=1 travels with the
# command's environment (before 2026-11-30 it did not: Python kept them until exit, and a client's
# steps read 9 µs)
r=tt6$tag
printf '%s slots=1\n' $net.1 > "$T/hostfile1"
cat > "$T/plain.py" << 'EOF'
import time
for i in range(30):
    time.sleep(0.1)
    print(f"[0/1][{i}/30] Loss_D: 1.0 Loss_G: 1.0 D(x): 0.5 D(G(z)): 0.5 / 0.5")
EOF
(cd "$T" && timeout 120 "${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/hostfile1" --catalog "$T/cat.tsv" \
  --itype host --checkpoint-dir "$T/$r" --run $r --quiet -- "$PY" plain.py) > "$T/$r.out" 2> "$T/$r.err" ||
  fail "the plain script's run failed: $(cat "$T/$r.err")"
"$PY" - "$T/$r/events.jsonl" << 'PYEOF' || fail "steps not timed as printed"
import json, statistics, sys
r = [json.loads(l) for l in open(sys.argv[1])]
dt = [x["step_s"] for x in r if x["type"] == "iter" and x.get("step_s") is not None]
med = statistics.median(dt) if dt else 0
assert len(dt) >= 25 and 0.07 < med < 0.15, f"{len(dt)} timed steps, median {med:.6f} s (printed every 0.1 s)"
print(f"a plain script's lines over ssh: {len(dt)} steps timed, median {med:.3f} s (printed every 0.1 s)")
PYEOF

after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind"
