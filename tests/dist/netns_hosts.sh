#!/usr/bin/env bash
# ctest: slow
# netns_hosts.sh — MPI across two "hosts" on this machine: two network
# namespaces joined by a veth pair, each with its own UTS name (h1, h2) and its
# own sshd (temporary key, no system config). mpirun runs on h1 with a hostfile
# naming both; checks pit_dist sees 2 ranks on 2 nodes and that the collectives
# test passes across them, then (when built) `pitstop train` across them and
# the init record's ranks/nodes. Needs root; exit 77 (skipped) otherwise.
# Everything it starts is stopped and the namespaces are deleted on exit.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PIT_BINARY_DIR:?}"
if [[ $(id -u) -ne 0 ]]; then
  echo "netns_hosts: needs root (network namespaces, sshd): skipped"
  exit 77
fi
for t in ip unshare /usr/sbin/sshd ssh ssh-keygen mpirun; do
  command -v "$t" >/dev/null || { echo "netns_hosts: $t not installed: skipped"; exit 77; }
done
source "$PIT_SOURCE_DIR/tests/dist/common.bash"
# this test names its own interfaces (a lo-only setup cannot reach the other host)
unset OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_tcp_if_include

tag=pd$$
net=10.213.77
tmp=$(mktemp -d)
pids=()
source "$PIT_SOURCE_DIR/tests/dist/netns_sshd.bash"
cleanup() {
  netns_sshd_down
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- network: h1 (10.213.77.1) <-veth-> h2 (10.213.77.2), one sshd each
netns_sshd_up || exit 1
echo "two hosts up: $(ip netns exec "$ns1" $ssh_cmd $net.1 hostname) $(ip netns exec "$ns1" $ssh_cmd $net.2 hostname)"

printf '%s slots=1\n%s slots=1\n' $net.1 $net.2 > "$tmp/hostfile"
# mpirun on h1 (own UTS name, so rank 0's host is h1)
ON_H1=(ip netns exec "$ns1" unshare --uts sh -c 'hostname h1; exec "$@"' sh)
export PIT_TEST_EXPECT_NODES=2 PIT_TEST_TAG=$tag
MPI_MULTI=(mpirun --hostfile "$tmp/hostfile" -np 2 --mca plm_rsh_agent "$ssh_cmd"
  --mca btl tcp,self --mca btl_tcp_if_include $net.0/24 --mca oob_tcp_if_include $net.0/24
  -x ASAN_OPTIONS -x PIT_TEST_EXPECT_NODES -x PIT_TEST_TAG)

out=$(timeout 120 "${ON_H1[@]}" "${MPI_MULTI[@]}" "$PIT_BINARY_DIR/test_dist_collectives" 2>&1) \
  || { echo "$out"; echo "FAIL: collectives across hosts"; exit 1; }
echo "$out" | grep '^rank '
grep -q '^rank 0/2 host h1 node 0/2 local 0/1 ' <<<"$out" || { echo "$out"; echo "FAIL: rank 0 not on h1 as node 0"; exit 1; }
grep -q '^rank 1/2 host h2 node 1/2 local 0/1 ' <<<"$out" || { echo "$out"; echo "FAIL: rank 1 not on h2 as node 1"; exit 1; }
test "$(grep -c 'checks passed' <<<"$out")" -eq 2 || { echo "$out"; exit 1; }
echo "collectives across 2 hosts: ok"
out=$(timeout 60 "${ON_H1[@]}" "${MPI_MULTI[@]}" "$PIT_BINARY_DIR/test_dist_collectives" --bench 14 10 2>&1) \
  || { echo "$out"; exit 1; }
echo "$out" | grep '^allreduce'

# SIGKILL of the remote rank while rank 0 is blocked in a reduction waiting for it
"${ON_H1[@]}" "${MPI_MULTI[@]}" "$PIT_BINARY_DIR/test_dist_collectives" --stall > "$tmp/kill.out" 2>&1 &
mpid=$!
pids+=("$mpid")
victim=
for _ in $(seq 300); do
  grep -q "looping rank 1" "$tmp/kill.out" && grep -q "looping rank 0" "$tmp/kill.out" && break
  sleep 0.1
done
for p in $(pgrep -f test_dist_collectives || true); do
  env=$(tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null || true)
  if grep -qx "PIT_TEST_TAG=$tag" <<<"$env" && grep -qx "OMPI_COMM_WORLD_RANK=1" <<<"$env"; then
    victim=$p
  fi
done
[[ -n "$victim" ]] || { cat "$tmp/kill.out"; echo "FAIL: rank 1 not found"; exit 1; }
kill -9 "$victim"
ended=0
for _ in $(seq 100); do
  if ! kill -0 "$mpid" 2>/dev/null; then ended=1; break; fi
  sleep 0.1
done
((ended)) || { cat "$tmp/kill.out"; echo "FAIL: job still running 10 s after rank 1 on h2 was killed"; exit 1; }
rc=0
wait "$mpid" || rc=$?
((rc != 0)) || { cat "$tmp/kill.out"; echo "FAIL: exit status 0 after a rank was killed"; exit 1; }
grep -qE "rank 1 .*node (h2|$net.2)" "$tmp/kill.out" || { cat "$tmp/kill.out"; echo "FAIL: no message naming rank 1 and its host"; exit 1; }
echo "SIGKILL of rank 1 on h2: exit $rc; $(grep -m1 -E 'rank 1 .*node' "$tmp/kill.out")"

if pitstop_train_built; then
  out=$(timeout 300 "${ON_H1[@]}" "${MPI_MULTI[@]}" "$PITSTOP" train --model cnn --data synthetic --max-iters 20 --batch-size 32 --quiet \
    --events "$tmp/ev.jsonl" 2>&1) || { echo "$out"; echo "FAIL: pitstop train across hosts"; exit 1; }
  /usr/bin/python3 - "$tmp/ev.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
init = [r for r in recs if r.get("type") == "init"]
assert len(init) == 1, "one init record expected, got %d" % len(init)
cfg = init[0].get("config", init[0])
if isinstance(cfg, str):
    cfg = json.loads(cfg)
ranks, nodes = cfg.get("ranks"), cfg.get("nodes")
assert ranks == 2 and nodes == 2, "init record: ranks %r nodes %r" % (ranks, nodes)
assert len(set(cfg.get("hosts", []))) == 2, "init record: hosts %r" % cfg.get("hosts")
iters = [r for r in recs if r.get("type") == "iter"]
assert all(len(r["compute_s"]) == 2 and len(r["wait_s"]) == 2 for r in iters)
iters = [r for r in recs if r.get("type") == "iter"]
assert len(iters) == 20, "%d iter records" % len(iters)
print("pitstop train across 2 hosts: init ranks %d nodes %d hosts %s, %d iter records"
      % (ranks, nodes, cfg.get("hosts", cfg.get("host")), len(iters)))
PY
else
  echo "pitstop train not built: train across hosts not run"
fi
