#!/usr/bin/env bash
# node_release.sh — `pitstop node-check --release RUN --run-tag TAG`, what the ssh provider runs on a
# host to stop a run's processes there: it stops the processes of that run directory (PITSTOP_RUN=RUN
# and PITSTOP_RUN_TAG=TAG in their environment) and leaves those of another run given the same name
# (another TAG); without --run-tag it stops every process of the name (a process started before
# PITSTOP_RUN_TAG existed has none). Until 2026-11-29 a stop on a host took both runs' processes.
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
