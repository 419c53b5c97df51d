#!/usr/bin/env bash
# ctest: slow
# ssh_cannot_run.sh — the ssh provider's health check finds a host where pitstop is present but
# cannot run (issue 25: a -march=native binary built on an AVX-512 head node dies of SIGILL on an
# AVX2 worker). The "host" is an sshd on loopback in a mount namespace of its own, where the path
# of this build's pitstop is bind-mounted over by a stand-in:
#  1. a program that dies of SIGILL, as such a binary does: the run stops at once with
#     "host 127.0.0.1: pitstop cannot run there: ... killed by signal 4 (Illegal instruction)",
#     not "unreachable over ssh" (what a lone remote command killed by a signal looked like:
#     ssh exits 255 for both), and claims no node;
#  2. a file that is not a program for this machine (exec format error): "cannot run there";
#  3. the real pitstop there (the bind mount removed by a second sshd without it): the check
#     passes and `pitstop node-check` reports nothing missing on this CPU.
# Needs root (mount namespace, sshd): exit 77 (skipped) otherwise.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PITSTOP:?}"
if [[ $(id -u) -ne 0 ]]; then
  echo "ssh_cannot_run: needs root (mount namespace, sshd): skipped"
  exit 77
fi
for t in unshare /usr/sbin/sshd ssh ssh-keygen; do
  command -v "$t" > /dev/null || { echo "ssh_cannot_run: $t not installed: skipped"; exit 77; }
done
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
T=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$T/userkey"
cp "$T/userkey.pub" "$T/authorized_keys"
mkdir -p /run/sshd
# sshd PORT [FAKE]: an sshd on 127.0.0.1:PORT; with FAKE, in a mount namespace where $PITSTOP is FAKE
sshd_on() {
  local port=$1 fake=${2:-}
  local sshd=(/usr/sbin/sshd -D -e -f /dev/null -h "$T/hostkey" -o ListenAddress=127.0.0.1 -o Port="$port"
    -o AuthorizedKeysFile="$T/authorized_keys" -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no
    -o KbdInteractiveAuthentication=no -o UsePAM=no -o StrictModes=no -o PidFile=none -o "SetEnv=PATH=$PATH"
    -o AcceptEnv=none)
  if [ -n "$fake" ]; then
    unshare --mount --propagation private sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' \
      "$fake" "$PITSTOP" "${sshd[@]}" 2> "$T/sshd-$port.log" &
  else
    "${sshd[@]}" 2> "$T/sshd-$port.log" &
  fi
  pids+=($!)
  for _ in $(seq 50); do
    ssh -o BatchMode=yes $opts -p "$port" 127.0.0.1 true 2> /dev/null && return 0
    sleep 0.1
  done
  fail "sshd on port $port not reachable: $(cat "$T/sshd-$port.log")"
}
opts="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -i $T/userkey"
port=$((20000 + $$ % 20000))

cat > "$T/sigill" << 'EOF2'
#!/bin/sh
kill -ILL $$
EOF2
chmod +x "$T/sigill"
cp "$T/sigill" "$T/fake"
sshd_on "$port" "$T/fake"
printf '127.0.0.1 slots=1\n' > "$T/hostfile"
cat > "$T/cat.tsv" << 'CAT'
itype   vcpus  price_h  billing_s  min_s
host    1      0.10     1          0
CAT
export PITSTOP_SSH_OPTS="$opts -p $port"
job=(--model cnn --data synthetic --batch-size 16 --threads 1 --limit 64 --epochs 0 --max-iters 4 --no-validation)
# refused NAME PATTERN: a run on the host fails at the health check, saying PATTERN, with no node claimed
refused() {
  if timeout 120 "$PITSTOP" run --provider ssh --hostfile "$T/hostfile" --catalog "$T/cat.tsv" --itype host \
    --checkpoint-dir "$T/run-$1" --run "tsc$1$$" --quiet "${job[@]}" > /dev/null 2> "$T/$1.err"; then
    fail "$1: a run on a host where pitstop cannot run succeeded"
  fi
  grep -q "$2" "$T/$1.err" || fail "$1: unclear message: $(cat "$T/$1.err")"
  ! grep -q "unreachable" "$T/$1.err" || fail "$1: a reachable host called unreachable: $(cat "$T/$1.err")"
  [ -z "$(ls "$T/run-$1/nodes" 2> /dev/null)" ] || fail "$1: a node claimed: $(ls "$T/run-$1/nodes")"
  echo "ok: $1: $(grep -m1 "cannot run there" "$T/$1.err")"
}
# 1. SIGILL
refused sigill "host 127.0.0.1: pitstop cannot run there: .*killed by signal 4 (Illegal instruction)"
# 2. not a program for this machine (the bind mount shows the same file: rewritten in place)
printf '\177ELF\002\001\001\000garbage' > "$T/fake"
refused format "host 127.0.0.1: pitstop cannot run there: .*[Ee]xec format error"
# 3. the real pitstop on a host of this CPU: the check passes
port2=$((port + 1))
sshd_on "$port2"
ssh -o BatchMode=yes $opts -p "$port2" 127.0.0.1 "$PITSTOP" node-check --dir "$T" --exe "$PITSTOP" \
  > "$T/ok.out" 2> "$T/ok.err" || fail "node-check of the real pitstop on this CPU failed: $(cat "$T/ok.err")"
echo "ok: the real pitstop passes node-check on this CPU ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
