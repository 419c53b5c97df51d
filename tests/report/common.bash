# common.bash — sourced by the report module's shell tests: python3 (skipped, 77, without it), the
# pitstop under test ($P), the source tree ($SRC), a temporary directory ($T, removed at exit) and
# ok/bad reporting into $fail.
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "no python3: skipped"; exit 77; }
P=${PITSTOP:?}
SRC=${PIT_SOURCE_DIR:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-report-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
