#!/usr/bin/env bash
# ctest: slow
# install_prefix.sh — the main job's `pitstop run` with no --catalog, as a user runs it from
# anywhere (issue 25 deliver 5; docs/catalog.md "The default catalog"):
#  1. installed: `cmake --install` into a temporary prefix; P/bin/pitstop run from / and from
#     another directory finds P/share/pitstop/catalogs/local.tsv. The installed copy gets a type
#     of its own (local-installed) and the job asks for it, so the source tree's catalog
#     cannot stand in for it. Then the prefix moved elsewhere: the same, from its new place.
#  2. an out-of-tree build: the binary in a build directory outside the source tree (a copy of
#     this build's binary in $T/x, which is all an out-of-tree build directory has beside it)
#     finds the source tree's catalogs/local.tsv, from /.
#  3. plot --kind cost and parse, given no --catalog from /, find aws.tsv the same way.
# The job is scripts/quickstart's (cnn on 1 node, a schedule asking for 2 nodes, then 1), short:
# synthetic data, 12 iterations (a resize may come after the job's end; the test does not count them). Fails on the code before it: the lookup tried share/pitstop/local.tsv and
# paths beside the binary only ("run: no catalog found beside the program").
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PIT_BINARY_DIR:?}" "${PITSTOP:?}"
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-prefix-XXXXXX")
trap 'rm -rf "$T"' EXIT
pitstop_train_built || { echo "install_prefix: pitstop train is not part of this build: skipped"; exit 77; }

cmake --install "$PIT_BINARY_DIR" --prefix "$T/prefix" > "$T/install.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$T/install.log")"
for f in local.tsv aws.tsv; do
  [ -f "$T/prefix/share/pitstop/catalogs/$f" ] || fail "catalogs/$f not installed in share/pitstop/catalogs"
done
printf 'local-installed\t1\t1\t-\t0.07\t1\t0\t0\n' >> "$T/prefix/share/pitstop/catalogs/local.tsv"

job=(--model cnn --data synthetic --batch-size 16 --limit 256 --threads 1 --epochs 0 --max-iters 12
     --no-validation --quiet)
# run_job NAME BIN DIR TYPE: BIN run in DIR on nodes of TYPE (schedule 1 → 2 → 1); checks its steps and prices
run_job() {
  local name=$1 bin=$2 dir=$3 type=$4 out=$T/$1
  (cd "$dir" && "$bin" run --run "tip$name-$$" --checkpoint-dir "$out" --nodes "$type:1" \
    --schedule "4:$type:2,8:$type:1" "${job[@]}") > "$out.txt" 2> "$out.err" ||
    fail "$name: pitstop run from $dir: $(cat "$out.err")"
  $PY - "$out/events.jsonl" "$type" "$name" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(12)), f"{sys.argv[3]}: steps {steps}"
nodes = [x for x in r if x["type"] == "node" and x["action"] == "start"]
assert nodes and all(x["itype"] == sys.argv[2] for x in nodes), nodes
print(f"ok: {sys.argv[3]}: 12 contiguous steps over generations {sorted({x['gen'] for x in r})}, "
      f"{len(nodes)} node starts of {sys.argv[2]} at {nodes[0]['price_h']} $/h")
PYEOF
}

# 1. installed, from / and from another directory; then the prefix moved
mkdir "$T/elsewhere"
run_job 1 "$T/prefix/bin/pitstop" / local-installed
run_job 2 "$T/prefix/bin/pitstop" "$T/elsewhere" local-installed
mv "$T/prefix" "$T/moved"
run_job 3 "$T/moved/bin/pitstop" / local-installed

# 2. an out-of-tree build directory: nothing beside the binary, the source tree's catalog it came from
mkdir "$T/x"
cp "$PITSTOP" "$T/x/pitstop"
run_job 4 "$T/x/pitstop" / local-1
if (cd / && "$T/x/pitstop" run --run "tip5-$$" --checkpoint-dir "$T/5" --nodes local-installed:1 "${job[@]}") \
  > /dev/null 2> "$T/5.err"; then
  fail "the out-of-tree binary read the installed (moved) catalog"
fi
grep -q "local-installed" "$T/5.err" || fail "no message naming the unknown type: $(cat "$T/5.err")"
echo "ok: the out-of-tree binary reads the source tree's catalog (local-installed unknown there)"

# 3. plot and parse with no --catalog, from /
cat > "$T/c5.jsonl" << 'EOF2'
{"type":"init","run":"c","gen":0,"t":0,"init_s":0.1,"ranks":1,"nodes":1,"config":{"itype":"c5.large","batch":32,"ranks":1}}
EOF2
for i in $(seq 0 39); do
  printf '{"type":"iter","run":"c","gen":0,"t":%s,"epoch":0,"iter":%d,"step":%d,"batch":32,"step_s":0.1,"data_s":0,"compute_s":[0.1],"wait_s":[0],"loss":1}\n' \
    "$(awk "BEGIN{print 0.1 * ($i + 1)}")" "$i" "$i" >> "$T/c5.jsonl"
done
(cd / && "$T/moved/bin/pitstop" plot --kind cost --events "$T/c5.jsonl" --out "$T/cost.svg") 2> "$T/plot.err" ||
  fail "plot --kind cost with no --catalog: $(cat "$T/plot.err")"
[ -s "$T/cost.svg" ] || fail "no cost chart"
echo "ok: plot --kind cost found aws.tsv from /"
mkdir -p "$T/logs/c5.large"
printf 'Rank: 0, Initialize time: 1.2 s\nRank: 0, Epoch: 0, iteration: 1/2, It. time: 0.5s, Elapsed time: 0.5 s\n' \
  > "$T/logs/c5.large/rank0.out"
(cd / && "$T/x/pitstop" parse --quiet "$T/logs/c5.large/rank0.out") > "$T/parsed.jsonl" 2> "$T/parse.err" ||
  fail "parse: $(cat "$T/parse.err")"
grep -q '"itype":"c5.large"' "$T/parsed.jsonl" || fail "parse did not read the type from the path with the default catalog"
echo "ok: parse named the type c5.large (a path component) from the default aws.tsv, from /"
