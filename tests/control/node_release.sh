#!/usr/bin/env bash
# node_release.sh — `pitstop node-check --release RUN --run-tag TAG`, what the ssh provider runs on a
# host to stop a run's processes there: it stops the processes of that run directory (PITSTOP_RUN=RUN
# and PITSTOP_RUN_TAG=TAG in their environment) and leaves those of another run given the same name
# (another TAG); without --run-tag it stops every process of the name (a process started before
# PITSTOP_RUN_TAG existed has none). Until 2026-11-29 a stop on a host took both runs' processes.
# The Open MPI daemon a tagged rank runs under (untagged; here a script named orted that takes 1 s
# to exit on SIGTERM) is gone when the release returns: before, the release returned once the ranks
# were, and the daemon held the killed generation's ssh session open beside the next one.
# node-exec --cd DIR: the command runs in DIR; a DIR the host lacks is said and the command runs in place.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done; }
trap cleanup EXIT
run=trel$$
env PITSTOP_RUN=$run PITSTOP_RUN_TAG=0000000a sleep 300 &
a=$!
env PITSTOP_RUN=$run PITSTOP_RUN_TAG=0000000b sleep 300 &
b=$!
env PITSTOP_RUN=$run sleep 300 &
u=$!
env PITSTOP_RUN=other$$ PITSTOP_RUN_TAG=0000000a sleep 300 &
o=$!
pids=("$a" "$b" "$u" "$o")
out=$("$PITSTOP" node-check --release "$run" --run-tag 0000000a) || fail "release failed: $out"
[ "$out" = "1 process of run $run stopped" ] || fail "said: $out"
wait "$a" 2> /dev/null || true
! kill -0 "$a" 2> /dev/null || fail "the tagged process lives on"
kill -0 "$b" && kill -0 "$u" && kill -0 "$o" || fail "a process of another run directory or name was stopped"
out=$("$PITSTOP" node-check --release "$run") || fail "release failed: $out"
[ "$out" = "2 processes of run $run stopped" ] || fail "without --run-tag: $out"
wait "$b" "$u" 2> /dev/null || true
kill -0 "$o" || fail "another run's process was stopped"
echo "release with --run-tag: 1 of the name's 3 processes (its directory's); without: the other 2; another name's untouched"

T=$(mktemp -d)
trap 'cleanup; rm -rf "$T"' EXIT
cat > "$T/orted" << 'SH'
#!/bin/bash
trap 'sleep 1; exit 0' TERM
env PITSTOP_RUN="$1" PITSTOP_RUN_TAG=0000000c sleep 300 &
while :; do sleep 0.1; done
SH
chmod +x "$T/orted"
"$T/orted" "$run" &
d=$!
pids+=("$d")
for _ in $(seq 100); do [ -n "$(pgrep -P "$d" -x sleep)" ] && break; sleep 0.05; done
[ "$(cat /proc/$d/comm)" = orted ] || fail "the fake daemon is $(cat /proc/$d/comm)"
out=$("$PITSTOP" node-check --release "$run" --run-tag 0000000c) || fail "release failed: $out"
st=$(awk '{print $3}' "/proc/$d/stat" 2> /dev/null || echo gone)
[ "$st" = gone ] || [ "$st" = Z ] || fail "the daemon still runs (state $st) when the release returns: $out"
wait "$d" 2> /dev/null || true
echo "the rank's daemon (1 s to exit on SIGTERM) gone when the release returns: $out"

# node-exec --cd DIR (a remote shell's per-node launch): the command runs in DIR, the controller's
# directory, where the login would start it in its home; a DIR the host lacks is said, and the
# command runs where it stands
d=$(mktemp -d)
[ "$(cd / && "$PITSTOP" node-exec --cd "$d" -- pwd)" = "$d" ] || fail "node-exec --cd did not enter $d"
w=$(cd / && "$PITSTOP" node-exec --cd "$d/none" -- pwd 2> "$d/err") || fail "node-exec with a missing --cd failed"
[ "$w" = / ] || fail "ran in $w"
grep -q "^pitstop: warning: node-exec: cannot enter '$d/none' on this host (No such file or directory): the command runs in '/'$" \
  "$d/err" || fail "not said: $(cat "$d/err")"
rm -rf "$d"
echo "node-exec --cd: entered; a missing one said, the command run in place"
