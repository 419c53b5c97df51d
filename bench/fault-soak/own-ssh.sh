#!/usr/bin/env bash
# bench/fault-soak/own-ssh.sh — bench/fault-soak/own.py on two ssh "hosts" on this machine: network
# namespaces joined by a veth pair, each with its own sshd and host name (h1, h2; names no resolver
# knows, so gloo needs the GLOO_SOCKET_IFNAME node-exec sets), the controller on h1. The faults and
# checks are own.py's; a signal to a node's script or torchrun reaches it on its host, where the
# per-node launcher's workload runs under ssh. Needs root; its options are own.py's.
#   ./bench/fault-soak/own-ssh.sh --trials 10 --seed 100
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $(id -u) -ne 0 ]]; then
  echo "own-ssh: needs root (network namespaces, sshd): skipped"
  exit 77
fi
net=10.213.82
tag=pos$$
tmp=$(mktemp -d)
pids=()
. "$here/tests/dist/netns_sshd.bash"
trap 'netns_sshd_down; rm -rf "$tmp"' EXIT
netns_sshd_up
export PITSTOP_SSH_OPTS=$ssh_opts OMP_NUM_THREADS=1
printf '%s slots=1\n%s slots=1\n' $net.1 $net.2 > "$tmp/hostfile"
prefix=$(printf '["ip", "netns", "exec", "%s", "unshare", "--uts", "sh", "-c", "hostname h1; exec \\"$@\\"", "sh"]' "$ns1")
/usr/bin/python3 "$here/bench/fault-soak/own.py" --hostfile "$tmp/hostfile" --prefix "$prefix" \
  --link "$ns2:${tag}b" "$@"
