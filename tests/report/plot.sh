#!/usr/bin/env bash
# plot.sh — `pitstop plot` end to end: fixture records (tests/report/fixture.py) → every chart
# kind as PNG and SVG (valid files: PNG signature, SVG text holds the title and axis labels),
# then bad input (no such run, empty store, unwritable output, steps of several runs, unknown
# instance type, bad catalog) gives one clear message and leaves no file. Skipped (77) without gnuplot.
set -u
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed: skipped"; exit 77; }
source "$(dirname "$0")/common.bash"

"$PY" "$SRC/tests/report/fixture.py" "$T/f.jsonl" --ranks 1,2,4 --batch 16,64 --repeat 2 || exit 1
cat_="$SRC/catalogs/aws.tsv"
run1=r-c5.xlarge-r2-b64-0

check_png() { # file
  [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
}
check_svg() { # file strings...
  local f=$1; shift
  [ -s "$f" ] && head -c 200 "$f" | grep -q '<?xml' && grep -q '</svg>' "$f" || return 1
  for s in "$@"; do grep -qF -- "$s" "$f" || { echo "  '$s' missing from $f"; return 1; }; done
}

for kind in steps batch scaling cost; do
  extra=()
  case $kind in
    steps) extra=(--run "$run1"); t="Step time per iteration, run $run1"; x="iteration within the epoch"; y="step time per iteration [ms]";;
    batch) t="Time per iteration (t_p) against global batch size"; x="global batch size [samples per iteration]"; y="t_p, steady-state time per iteration [ms]";;
    scaling) t="Scaling with ranks: speedup (left) and parallel efficiency (right)"; x="ranks (processes)"; y="parallel efficiency [%]";;
    cost) extra=(--catalog "$cat_"); t="Samples per dollar by configuration"; x="samples per US\$"; y="c5.xlarge x1: cnn, batch 64, 4 ranks, 1 thread";;
  esac
  if "$P" plot --kind $kind --events "$T/f.jsonl" "${extra[@]}" --out "$T/$kind.png" 2>"$T/err" && check_png "$T/$kind.png"; then
    ok "$kind.png"
  else bad "$kind.png: $(cat "$T/err")"; fi
  if "$P" plot --kind $kind --events "$T/f.jsonl" "${extra[@]}" --out "$T/$kind.svg" 2>"$T/err" && check_svg "$T/$kind.svg" "$t" "$x" "$y"; then
    ok "$kind.svg"
  else bad "$kind.svg: $(cat "$T/err")"; fi
done
# legend of the batch chart names each configuration; scaling legend has the ideal line
# (fields equal on every line are said once under the title)
grep -qF ">2 ranks, c5.xlarge<" "$T/batch.svg" && grep -qF "all lines: cnn, 1 node, 1 thread" "$T/batch.svg" \
  && ok "batch legend" || bad "batch legend"
grep -qF "ideal (linear)" "$T/scaling.svg" && ok "scaling legend" || bad "scaling legend"
grep -qF "t_p = " "$T/steps.svg" && ok "steps shows t_p" || bad "steps shows t_p"

# a long epoch is drawn as medians of consecutive iterations, and says so
"$PY" "$SRC/tests/report/fixture.py" "$T/long.jsonl" --ranks 1 --batch 16 --repeat 1 --itype c5.xlarge --epochs 1 --iters 3100
"$P" plot --kind steps --events "$T/long.jsonl" --out "$T/long.svg" 2>"$T/err" && grep -qF "median of every 3 iterations" "$T/long.svg" \
  && ok "long epoch binned" || bad "long epoch: $(cat "$T/err")"
# a title with quotes and gnuplot's substitution characters arrives verbatim (no command substitution)
"$P" plot --kind batch --events "$T/f.jsonl" --title "it's \`touch $T/pwned\` @x \"q\"" --out "$T/t.svg" 2>"$T/err" || bad "odd title: $(cat "$T/err")"
[ ! -e "$T/pwned" ] && grep -qF "it's \`touch" "$T/t.svg" && ok "title quoted" || bad "title not quoted verbatim"

expect_fail() { # name out-file expected-message-part command...
  local name=$1 out=$2 msg=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$msg" "$T/err" && [ ! -e "$out" ] && [ "$(wc -l <"$T/err")" -le 2 ]; then
    ok "$name"
  else bad "$name: rc=$rc, stderr: $(cat "$T/err")"; fi
  ls "$(dirname "$out")" | grep -q '\.tmp\.' && bad "$name: temporary file left"
}
expect_fail "no such run" "$T/x1.png" "no run named 'nope'" "$P" plot --kind steps --events "$T/f.jsonl" --run nope --out "$T/x1.png"
expect_fail "steps of many runs" "$T/x2.png" "the steps chart shows one run" "$P" plot --kind steps --events "$T/f.jsonl" --out "$T/x2.png"
mkdir -p "$T/ro" && chmod 555 "$T/ro"
if [ "$(id -u)" = 0 ]; then  # root writes anywhere: use a path under a regular file instead
  touch "$T/file"; unw="$T/file/x.png"
else unw="$T/ro/x.png"; fi
expect_fail "unwritable output" "$unw" "$unw" "$P" plot --kind batch --events "$T/f.jsonl" --out "$unw"
expect_fail "bad extension" "$T/x.pdf" "must end in .png or .svg" "$P" plot --kind batch --events "$T/f.jsonl" --out "$T/x.pdf"
expect_fail "missing store" "$T/x3.png" "cannot open" "$P" plot --kind batch --db "$T/none.db" --out "$T/x3.png"
: >"$T/empty.jsonl"
expect_fail "empty events" "$T/x4.png" "holds no runs" "$P" plot --kind batch --events "$T/empty.jsonl" --out "$T/x4.png"
"$PY" "$SRC/tests/report/fixture.py" "$T/noitype.jsonl" --itype - --ranks 1 --batch 16 --repeat 1
expect_fail "no instance type" "$T/x5.png" "names no instance type" "$P" plot --kind cost --catalog "$cat_" --events "$T/noitype.jsonl" --out "$T/x5.png"
"$P" plot --kind cost --catalog "$cat_" --itype c5.large --events "$T/noitype.jsonl" --out "$T/x5.png" 2>"$T/err" && check_png "$T/x5.png" \
  && ok "--itype prices runs without one" || bad "--itype: $(cat "$T/err")"
expect_fail "itype not in catalog" "$T/x6.png" "'z9.huge' (run" "$P" plot --kind cost --catalog "$cat_" --itype z9.huge --events "$T/noitype.jsonl" --out "$T/x6.png"
printf 'c5.large\t2\tabc\t1\t60\n' >"$T/badcat.tsv"
expect_fail "bad catalog" "$T/x7.png" "badcat.tsv:1: price_h 'abc'" "$P" plot --kind cost --catalog "$T/badcat.tsv" --events "$T/f.jsonl" --out "$T/x7.png"
PIT_GNUPLOT=/nonexistent/gnuplot expect_fail "gnuplot missing" "$T/x8.png" "cannot run '/nonexistent/gnuplot'" "$P" plot --kind batch --events "$T/f.jsonl" --out "$T/x8.png"
# an existing output survives a failed plot untouched
echo keep >"$T/keep.png"
"$P" plot --kind steps --events "$T/f.jsonl" --run nope --out "$T/keep.png" 2>/dev/null
[ "$(cat "$T/keep.png")" = keep ] && ok "old output kept on failure" || bad "old output changed"
exit $fail
