#!/usr/bin/env bash
# ctest: slow
# run_ssh.sh — `pitstop run --provider ssh` across two "hosts" on this machine: two network
# namespaces joined by a veth pair, each with its own UTS name (h1, h2) and its own sshd
# (temporary keys, no system config); the controller runs on h1 and mpirun reaches h2 over ssh.
#  1. a pitstop train job resized 1 → 2 → 1 hosts by a schedule: contiguous steps, the
#     uninterrupted run's samples at every step, every sample once per epoch, final parameters
#     equal within tolerance, every host released;
#  2. bad input: a hostfile naming an unreachable host: one clear message within a bounded
#     time, non-zero exit, no node, process or ssh left; beside two good hosts, the run goes on
#     on those two; no hostfile, a malformed one: one message naming file:line;
#  3. the controller SIGKILLed mid-generation and started again: while it runs, the hosts
#     claimed are the killed controller's two, adopted (no node started again), and each host
#     holds processes of the new generation only (none of the killed one's, one ssh session
#     and one orted on h2); it finishes with contiguous steps, the events file and the store
#     agree on the node records, and each host is left with nothing but its sshd;
#  4. the same under the per-node launcher, killed before any checkpoint, with a workload that
#     outlives its ssh session: mid-generation 1 each host runs generation 1's process only
#     (the killed one's cleared before adopting), the node records of both controllers kept.
# Needs root (namespaces, sshd): exit 77 (skipped) otherwise. Everything it starts is stopped
# and the namespaces deleted on exit.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PITSTOP:?}"
if [[ $(id -u) -ne 0 ]]; then
  echo "run_ssh: needs root (network namespaces, sshd): skipped"
  exit 77
fi
for t in ip unshare /usr/sbin/sshd ssh ssh-keygen mpirun; do
  command -v "$t" > /dev/null || { echo "run_ssh: $t not installed: skipped"; exit 77; }
done
net=10.213.78
export OMPI_MCA_oob_tcp_if_include=$net.0/24 OMPI_MCA_btl_tcp_if_include=$net.0/24 OMPI_MCA_btl=tcp,self
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
tag=prs$$
tmp=$(mktemp -d)
T=$tmp
pids=()
. "$PIT_SOURCE_DIR/tests/dist/netns_sshd.bash"
leftovers() { pgrep -af -- "--run ts[0-9]$tag" | grep -v pgrep || true; } # this test's runs only
cleanup() {
  local p
  for p in $(pgrep -f -- "--run ts[0-9]$tag" || true); do kill -9 "$p" 2> /dev/null || true; done
  netns_sshd_down
  rm -rf "$T"
}
trap cleanup EXIT
netns_sshd_up || fail "two hosts"
export PITSTOP_SSH_OPTS=$ssh_opts
ON_H1=(ip netns exec "$ns1" unshare --uts sh -c 'hostname h1; exec "$@"' sh)

cat > "$T/cat.tsv" << 'CAT'
itype   vcpus  price_h  billing_s  min_s
host    1      0.10     1          0
CAT
printf '%s slots=1\n%s slots=1\n' $net.1 $net.2 > "$T/hostfile"
common=(--model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant
        --no-validation --limit 400 --epochs 0 --backend ref)
before=$(leftovers)

# ---- 1. resized 1 → 2 → 1 hosts
"$PITSTOP" train "${common[@]}" --max-iters 120 --out "$T/u" --events "$T/u.jsonl" --quiet > /dev/null
run=ts1$tag
timeout 300 "${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/hostfile" --catalog "$T/cat.tsv" \
  --itype host --checkpoint-dir "$T/r1" --run $run --quiet --schedule 40:2,80:1 "${common[@]}" --max-iters 120 \
  > "$T/r1.txt" 2> "$T/r1.err" || { cat "$T/r1.err" "$T"/r1/gen-*.log; fail "the ssh run failed"; }
last=$($PY "$PIT_SOURCE_DIR/tests/control/resize_check.py" "$T/u.jsonl" "$T/r1/events.jsonl" 400 120 $run 3 2 2 \
  | tee /dev/stderr | tail -1) || fail "resize check"
$CKPT compare "$T/u/checkpoint.pit" "$last" 1e-5 || fail "the resized run's parameters differ from the uninterrupted run's"
echo "ssh resize: final parameters equal the uninterrupted run's within 1e-5"
[ -z "$(ls "$T/r1/nodes")" ] || fail "hosts still claimed: $(ls "$T/r1/nodes")"

# ---- 2. bad input: an unreachable host (an address of the test's own network where nobody is)
printf '%s slots=1\n' $net.9 > "$T/bad-hostfile"
t0=$(date +%s)
if timeout 120 "${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/bad-hostfile" --catalog "$T/cat.tsv" \
  --itype host --checkpoint-dir "$T/b" --run ts2$tag --quiet "${common[@]}" --max-iters 10 > "$T/b.out" 2> "$T/b.err"; then
  fail "a run on an unreachable host succeeded"
fi
t1=$(date +%s)
grep -q "host $net.9: unreachable over ssh" "$T/b.err" || fail "unclear message: $(cat "$T/b.err")"
((t1 - t0 < 60)) || fail "the unreachable host took $((t1 - t0)) s"
echo "bad input ok ($((t1 - t0)) s): $(grep -m1 'cannot start' "$T/b.err")"
[ -z "$(pgrep -af "ssh .*$net.9" | grep -v pgrep)" ] || fail "ssh to the unreachable host left: $(pgrep -af "ssh .*$net.9")"
# the unreachable host beside two good ones: the run goes on without it, saying why once per start
printf '%s slots=1\n%s slots=1\n%s slots=1\n' $net.9 $net.1 $net.2 > "$T/mixed-hostfile"
timeout 300 "${ON_H1[@]}" "$PITSTOP" run --provider ssh --hostfile "$T/mixed-hostfile" --catalog "$T/cat.tsv" --itype host \
  --nodes 2 --checkpoint-dir "$T/b1" --run ts6$tag --quiet "${common[@]}" --max-iters 10 > /dev/null 2> "$T/b1.err" \
  || fail "a run with two good hosts of three failed: $(cat "$T/b1.err")"
[ "$(grep -c '"action":"start"' "$T/b1/events.jsonl")" = 2 ] || fail "not 2 nodes started: $(cat "$T/b1.err")"
grep -q "host $net.9: unreachable over ssh" "$T/b1.err" || fail "the unreachable host not said: $(cat "$T/b1.err")"
echo "an unreachable host beside two good ones: the run finished on the two; said: $(grep -m1 "$net.9" "$T/b1.err")"
if "$PITSTOP" run --provider ssh --catalog "$T/cat.tsv" --itype host --run ts3$tag --checkpoint-dir "$T/b3" \
  "${common[@]}" --max-iters 10 > /dev/null 2> "$T/b3.err"; then fail "ssh without a hostfile accepted"; fi
grep -q "needs a hostfile" "$T/b3.err" || fail "no hostfile: $(cat "$T/b3.err")"
printf 'h1 slots=x\n' > "$T/malformed"
if "$PITSTOP" run --provider ssh --hostfile "$T/malformed" --catalog "$T/cat.tsv" --itype host --run ts4$tag \
  --checkpoint-dir "$T/b4" "${common[@]}" --max-iters 10 > /dev/null 2> "$T/b4.err"; then fail "bad hostfile accepted"; fi
grep -q "malformed:1: 'slots=x'" "$T/b4.err" || fail "bad hostfile: $(cat "$T/b4.err")"
echo "bad input ok: $(head -1 "$T/b4.err")"
[ -z "$(find "$T/b" "$T/b1" -name "*.node" 2> /dev/null)" ] || fail "nodes left: $(find "$T/b" "$T/b1" -name "*.node")"
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, claimed hosts)"

# ---- 3. the controller SIGKILLed mid-generation, then started again
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
# host_procs NS RUN: "GEN COMM" of each process on host NS tagged with the run
host_procs() { run_procs "$2" $(ip netns pids "$1"); }
# host_extra NS: "PID COMM" of the processes on host NS other than its sshd listener
# (ssh sessions, orted, ranks, and on h1 the controller, mpirun and its ssh)
host_extra() {
  local p
  for p in $(ip netns pids "$1"); do
    [[ " ${pids[*]} " == *" $p "* ]] || echo "$p $(cat "/proc/$p/comm" 2> /dev/null)"
  done
}
run=ts5$tag
run5=(run --provider ssh --hostfile "$T/hostfile" --catalog "$T/cat.tsv" --itype host --nodes 2 --checkpoint-dir "$T/r5"
      --run $run --db "$T/r5.db" --quiet "${common[@]}" --max-iters 160 --checkpoint-every 20)
"${ON_H1[@]}" "$PITSTOP" "${run5[@]}" > /dev/null 2> "$T/r5a.err" &
ctl=$!
wait_for "$T/r5/events.jsonl" '"checkpoint"' 600
[ "$(cat /proc/$ctl/comm)" = pitstop ] || fail "pid $ctl is not the controller"
kill -9 $ctl
wait $ctl 2> /dev/null || true
# what the killed controller left: its claims (the provider's list) and its workload on the hosts
claimed=$(ls "$T/r5/nodes" | sort | xargs)
[ "$claimed" = "$run.h0.node $run.h1.node" ] || fail "the killed controller held $claimed, not both hosts"
old2=$(host_extra "$ns2" | cut -d' ' -f1 | xargs)
echo "controller killed mid-generation 0: hosts claimed: $claimed; left on h1: $(host_procs "$ns1" $run | summary);" \
  "on h2: $(host_extra "$ns2" | cut -d' ' -f2 | summary)"
"${ON_H1[@]}" "$PITSTOP" "${run5[@]}" > "$T/r5.txt" 2> "$T/r5b.err" &
ctl=$!
for _ in $(seq 1200); do grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r5/events.jsonl" && break; sleep 0.1; done
grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r5/events.jsonl" \
  || fail "the restarted controller reached no checkpoint: $(cat "$T/r5b.err")"
# the provider's view mid-generation 1: the hosts claimed are the controller's two nodes, and
# each host runs generation 1 only: one ssh session, one orted, one rank on h2
# (nothing of the killed controller's workload, no second session)
known=$(ls "$T/r5/nodes" | sort | xargs)
[ "$known" = "$claimed" ] || fail "the restarted controller holds $known, not the hosts of the killed one ($claimed)"
now1=$(host_procs "$ns1" $run) now2=$(host_procs "$ns2" $run) extra2=$(host_extra "$ns2")
old=$(printf '%s\n%s\n' "$now1" "$now2" | grep -v '^1 ' | grep . || true)
[ -z "$old" ] || fail "a host runs processes of the killed controller's generation: $old"
# running = there and not a zombie (an exited process its parent has not reaped yet runs nothing:
# a local run of the suite 2026-11-30 read one as "process 25114 () ... still runs", its command line
# already empty)
running() { local s; s=$(sed 's/.*) //' "/proc/$1/stat" 2> /dev/null | cut -d' ' -f1) && [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]; }
for p in $old2; do running "$p" && fail "process $p ($(cat /proc/$p/cmdline 2> /dev/null | tr "\0" " ")) of the killed generation still runs on h2"; done
[ "$(cut -d' ' -f2 <<< "$extra2" | summary)" = "1 orted 1 pitstop 1 sshd" ] \
  || fail "h2 runs, mid-generation 1: $extra2"
echo "restarted controller mid-generation 1: holds the same hosts ($known), started none;" \
  "h1: $(summary <<< "$now1"); h2: $(cut -d' ' -f2 <<< "$extra2" | summary), the rank of generation 1;" \
  "none of the killed generation's processes left"
wait $ctl || fail "the restarted controller failed: $(cat "$T/r5b.err")"
[ "$(grep -c "adopted node" "$T/r5b.err")" = 2 ] || fail "not both hosts adopted: $(cat "$T/r5b.err")"
$PY "$PIT_SOURCE_DIR/tests/control/crash_check.py" "$T/r5/events.jsonl" 160 $run "$T/r5.db" 2 || fail "crash check"
[ -z "$(ls "$T/r5/nodes")" ] || fail "hosts still claimed: $(ls "$T/r5/nodes")"
for _ in $(seq 50); do [ -z "$(host_extra "$ns1")$(host_extra "$ns2")" ] && break; sleep 0.1; done
[ -z "$(host_extra "$ns1")" ] || fail "left on h1: $(host_extra "$ns1")"
[ -z "$(host_extra "$ns2")" ] || fail "left on h2: $(host_extra "$ns2")"
echo "controller crash: each host holds nothing but its sshd afterwards (no ssh session, no process)"

# ---- 4. the same under the per-node launcher (`ssh HOST -- env ... CMD`), killed before any
# checkpoint, with a workload that outlives its ssh session (it ignores SIGPIPE and SIGHUP;
# node 0 logs its iterations in the course DCGAN format, as tests/control/run_foreign.sh):
# the restarted controller kills what the killed one left on each host before adopting it
run=ts7$tag
run7=(run --provider ssh --hostfile "$T/hostfile" --catalog "$T/cat.tsv" --itype host --nodes 2 --launcher per-node
      --checkpoint-dir "$T/r7" --run $run --db "$T/r7.db" --quiet
      -- "$PY" "$PIT_SOURCE_DIR/tests/control/survivor.py" "$T/go")
"${ON_H1[@]}" "$PITSTOP" "${run7[@]}" > /dev/null 2> "$T/r7a.err" &
ctl=$!
for _ in $(seq 600); do [ -n "$(host_procs "$ns1" $run | grep ' python3$')" ] && [ -n "$(host_procs "$ns2" $run)" ] && break; sleep 0.1; done
[ "$(host_procs "$ns2" $run)" = "0 python3" ] || fail "the per-node workload did not start on h2: $(cat "$T/r7a.err")"
kill -9 $ctl
wait $ctl 2> /dev/null || true
sleep 0.5 # what dies with its ssh session has died by now; the survivors stay
left1=$(host_procs "$ns1" $run | grep ' python3$' || true) left2=$(host_procs "$ns2" $run)
[ "$left2" = "0 python3" ] && [ "$left1" = "0 python3" ] || fail "the workload did not outlive its controller: '$left1' '$left2'"
echo "per-node: controller killed; its workload outlives it: h1: $left1; h2: $left2"
"${ON_H1[@]}" "$PITSTOP" "${run7[@]}" > /dev/null 2> "$T/r7b.err" &
ctl=$!
for _ in $(seq 600); do [[ "$(host_procs "$ns2" $run)" == *"1 python3"* && "$(host_procs "$ns1" $run)" == *"1 python3"* ]] && break; sleep 0.1; done
now1=$(host_procs "$ns1" $run | grep ' python3$' || true) now2=$(host_procs "$ns2" $run)
[ "$now1" = "1 python3" ] && [ "$now2" = "1 python3" ] \
  || fail "mid-generation 1 the hosts run '$now1' and '$now2', not generation 1's workload once each"
echo "per-node: restarted controller: h1: $now1; h2: $now2 (the killed generation's cleared before adopting)"
touch "$T/go"
wait $ctl || fail "the restarted controller failed: $(cat "$T/r7b.err")"
[ "$(grep -c "adopted node" "$T/r7b.err")" = 2 ] || fail "not both hosts adopted: $(cat "$T/r7b.err")"
$PY "$PIT_SOURCE_DIR/tests/control/crash_check.py" "$T/r7/events.jsonl" 0 $run "$T/r7.db" 2 || fail "crash check"
for _ in $(seq 50); do [ -z "$(host_extra "$ns1")$(host_extra "$ns2")" ] && break; sleep 0.1; done
[ -z "$(host_extra "$ns1")$(host_extra "$ns2")" ] || fail "left: $(host_extra "$ns1") $(host_extra "$ns2")"
echo "per-node controller crash: each host holds nothing but its sshd afterwards"
