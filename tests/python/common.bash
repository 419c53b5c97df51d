# common.bash — sourced by tests/python/*.sh: Debian's python3 with torch (skip 77 without it),
# a temp dir $T removed at exit (KEEP=1 keeps it), python/ on PYTHONPATH, and
# patched_client NAME DIFF... : a copy of ../shared/data/clients/NAME in $T/NAME with the DIFFs
# (examples/diffs/*.diff) applied by `patch`, the unchanged clients never written; local_catalog:
# $T/cat.tsv with the one local-1 type (pitstop run's --catalog).
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
need_torch() {
  "$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2> /dev/null || {
    echo "skipped: python3-torch with gloo is not installed"
    exit 77
  }
}
CLIENTS="$PIT_SOURCE_DIR/../shared/data/clients"
DIFFS="$PIT_SOURCE_DIR/examples/diffs"
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-python-XXXXXX")
cleanup() {
  [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
export PYTHONPATH="$PIT_SOURCE_DIR/python" OMP_NUM_THREADS=1
patched_client() {
  local name=$1 d
  shift
  [ -d "$CLIENTS/$name" ] || {
    echo "skipped: $CLIENTS/$name is not there"
    exit 77
  }
  rm -rf "${T:?}/$name"
  cp -r "$CLIENTS/$name" "$T/$name"
  chmod -R u+w "$T/$name"
  for d in "$@"; do
    patch --quiet --no-backup-if-mismatch -d "$T/$name" -p1 < "$DIFFS/$d" || fail "$d does not apply to $CLIENTS/$name"
  done
}
local_catalog() {
  printf '%s\n' 'itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s' \
    'local-1    1      1     -          0.10     1          0' > "$T/cat.tsv"
}
