#!/usr/bin/env bash
# ctest: slow
# real_sweep.sh — a tiny real sweep: `pitstop sweep` launching `mpirun -np R pitstop train` (cnn,
# synthetic data, 10 iterations, 1 thread) for ranks 1,2 × batch 16, then summary, a scaling chart
# and the seed 002 export over the stored runs. Skipped (77) without train in the build, mpirun or gnuplot.
set -u
P=${PITSTOP:?}
"$P" train --help >/dev/null 2>&1 || { echo "pitstop train missing: skipped"; exit 77; }
command -v mpirun >/dev/null || { echo "no mpirun: skipped"; exit 77; }
command -v gnuplot >/dev/null || { echo "no gnuplot: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-rsweep-XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
# Open MPI's own allocations are reported as leaks by LeakSanitizer in sanitizer builds (as in tests/dist)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
fail=0
"$P" sweep --ranks 1,2 --batch-size 16 --model cnn --data synthetic --max-iters 10 --threads 1 --id rs --db s.db \
  --mpirun-arg --oversubscribe --mpirun-arg --mca --mpirun-arg btl_vader_single_copy_mechanism --mpirun-arg none \
  >out.txt 2>err.txt || { echo "FAIL: sweep: $(tail -5 err.txt)"; exit 1; }
n=$("$P" summary --db s.db --format csv | grep -c '^run,rs-r[12]-b16-0,')
[ "$n" = 2 ] && echo "ok: 2 runs stored" || { echo "FAIL: runs: $n"; fail=1; }
"$P" summary --db s.db --format csv | awk -F, '$1 == "run" && $10 != 10 {bad = 1} END {exit bad}' \
  && echo "ok: 10 iterations each" || { echo "FAIL: iteration counts"; fail=1; }
"$P" plot --kind scaling --db s.db --out sc.svg 2>err.txt && grep -q "ranks (processes)" sc.svg \
  && echo "ok: scaling chart" || { echo "FAIL: plot: $(cat err.txt)"; fail=1; }
mkdir exp && "$P" sweep --export seed002-csv --db s.db --id rs --out exp 2>err.txt \
  && [ "$(head -1 exp/nnode-1_nproc-2_batch_size-16.csv)" = "total,t0,t1" ] \
  && echo "ok: export" || { echo "FAIL: export: $(cat err.txt)"; fail=1; }
exit $fail
