# common.bash — sourced by tests/sim/*.sh: python3 (skipped, 77, without it), the pitstop under test
# ($P), the source tree ($SRC), a temporary directory ($T, removed at exit unless KEEP is set) and
# ok/bad reporting into $fail; expect_fail NAME NEEDLE CMD...: CMD exits non-zero with one line of
# message that contains NEEDLE (the file it names).
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "no python3: skipped"; exit 77; }
P=${PITSTOP:?}
SRC=${PIT_SOURCE_DIR:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-sim-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
expect_fail() {
  local name=$1 needle=$2 err
  shift 2
  if err=$("$@" 2>&1 >/dev/null); then
    bad "$name: exit 0"
  elif [ "$(printf '%s\n' "$err" | grep -c .)" -ne 1 ] || ! printf '%s' "$err" | grep -qF "$needle"; then
    bad "$name: message '$err'"
  else
    ok "$name: $err"
  fi
}
