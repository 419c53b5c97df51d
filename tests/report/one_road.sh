#!/usr/bin/env bash
# one_road.sh — `summary` and `plot` load runs by one road (src/store/runset.c):
#  1. the rule for a malformed JSON Lines line, the same in both commands: the line is skipped and
#     counted, the first 10 are named file:line, the rest counted in one line; the output is made
#     from the other lines;
#  2. chart lines follow what the user varied: runs as `pitstop sweep --ranks 1,2 --batch-size 16,64`
#     stores them (threads per rank = cores / ranks, so threads change with ranks) give the scaling
#     chart one line per batch size through both rank counts, and the batch chart one line per rank
#     count; a threads value the user chose apart from ranks still splits lines.
# gnuplot is replaced by a stand-in that keeps the chart's data files, so no gnuplot is needed.
set -u
source "$(dirname "$0")/common.bash"

# a stand-in for gnuplot: writes the picture the script names and keeps the data files in $T/cap
cat > "$T/fake-gnuplot" <<'SH'
#!/usr/bin/env bash
out=$(sed -n "s/^set output ('\(.*\)')\$/\1/p" "$1")
echo '<svg/>' > "$out"
rm -rf "$CAP"; mkdir -p "$CAP"; cp "$(dirname "$1")"/*.dat "$1" "$CAP"/
SH
chmod +x "$T/fake-gnuplot"
export PIT_GNUPLOT="$T/fake-gnuplot" CAP="$T/cap"

# blocks (lines) of a data file and their number of points: "2 2" = two lines of two points
shape() { awk 'BEGIN{RS=""} {n=split($0, a, "\n"); printf "%s%d", (NR > 1 ? " " : ""), n}' "$1"; }

"$PY" "$SRC/tests/report/fixture.py" "$T/f.jsonl" --ranks 1,2 --batch 16,64 --repeat 1 --itype - || exit 1

# ---- 1. malformed lines: skipped, counted, the first 10 named, in both commands ----
awk 'NR % 20 == 5 { print "{\"type\":\"iter\", broken" } { print }' "$T/f.jsonl" > "$T/bad.jsonl"
nbad=$(grep -c broken "$T/bad.jsonl")
[ "$nbad" -gt 10 ] || { bad "fixture has only $nbad malformed lines"; exit 1; }
first=$(grep -n broken "$T/bad.jsonl" | head -1 | cut -d: -f1)
check_rule() { # name errfile
  local err=$2
  [ "$(grep -c 'bad.jsonl:[0-9]*: .*(line skipped)' "$err")" = 10 ] && ok "$1: the first 10 named file:line" \
    || bad "$1: named lines: $(cat "$err")"
  grep -q "^pitstop: warning: .*bad.jsonl:$first: " "$err" && ok "$1: the first is line $first" || bad "$1: line $first not named"
  grep -qx "pitstop: warning: $nbad malformed lines skipped in all" "$err" && ok "$1: all $nbad counted" \
    || bad "$1: count: $(tail -1 "$err")"
}
"$P" summary --events "$T/f.jsonl" --format json > "$T/good.json" || bad "summary of the good file"
if "$P" summary --events "$T/bad.jsonl" --format json > "$T/bad.json" 2> "$T/err1"; then
  ok "summary: malformed lines do not stop it"
  cmp -s "$T/good.json" "$T/bad.json" && ok "summary: same result as without the malformed lines" \
    || bad "summary differs with malformed lines"
else bad "summary failed: $(cat "$T/err1")"; fi
check_rule summary "$T/err1"
if "$P" plot --kind batch --events "$T/bad.jsonl" --out "$T/b.svg" 2> "$T/err2" && [ -s "$T/b.svg" ]; then
  ok "plot: malformed lines do not stop it"
else bad "plot failed: $(cat "$T/err2")"; fi
check_rule plot "$T/err2"
# one malformed line (a truncated last line): named, and no "in all" line
head -c -20 "$T/f.jsonl" > "$T/trunc.jsonl"
"$P" plot --kind scaling --events "$T/trunc.jsonl" --out "$T/t.svg" 2> "$T/err3" \
  && grep -q "trunc.jsonl:$(wc -l < "$T/f.jsonl"): " "$T/err3" && ! grep -q "in all" "$T/err3" \
  && ok "plot: a truncated last line is named and skipped" || bad "plot truncated: $(cat "$T/err3")"

# ---- 2. lines follow what the user varied ----
# as `pitstop sweep --ranks 1,2` on a 2-core node: 2 threads with 1 rank, 1 thread with 2 ranks
sed 's/"threads":1,"ranks":1/"threads":2,"ranks":1/' "$T/f.jsonl" > "$T/sweep.jsonl"
grep -q '"threads":2,"ranks":1' "$T/sweep.jsonl" || { bad "threads not rewritten"; exit 1; }
"$P" plot --kind scaling --events "$T/sweep.jsonl" --out "$T/s.svg" 2> "$T/err" || bad "scaling: $(cat "$T/err")"
[ "$(shape "$T/cap/d0.dat")" = "2 2" ] && ok "scaling: one line per batch size, each through both rank counts" \
  || bad "scaling lines: $(shape "$T/cap/d0.dat")"
grep -q "title ('batch 16')" "$T/cap/plot.gp" && ! grep -q "title ('[^']*thread" "$T/cap/plot.gp" \
  && ok "scaling legend names the batch, not the threads" || bad "scaling legend: $(grep -o "title ('[^']*')" "$T/cap/plot.gp")"
"$P" plot --kind batch --events "$T/sweep.jsonl" --out "$T/b.svg" 2> "$T/err" || bad "batch: $(cat "$T/err")"
[ "$(shape "$T/cap/d0.dat")" = "2 2" ] && ok "batch: one line per rank count" || bad "batch lines: $(shape "$T/cap/d0.dat")"
grep -q "title ('1 rank, 2 threads')" "$T/cap/plot.gp" && ok "batch legend: ranks with their threads" \
  || bad "batch legend: $(grep -o "title ('[^']*')" "$T/cap/plot.gp")"
# threads chosen apart from ranks (2 ranks with 1 and with 2 threads) do split lines
"$PY" "$SRC/tests/report/fixture.py" "$T/g.jsonl" --ranks 2 --batch 16,64 --repeat 1 --itype - --prefix g || exit 1
sed 's/"threads":1/"threads":2/' "$T/g.jsonl" | sed 's/"run":"g-/"run":"h-/' > "$T/h.jsonl"
"$P" plot --kind batch --events "$T/g.jsonl" --events "$T/h.jsonl" --out "$T/b2.svg" 2> "$T/err" || bad "batch 2: $(cat "$T/err")"
[ "$(shape "$T/cap/d0.dat")" = "2 2" ] && grep -q "title ('2 threads')" "$T/cap/plot.gp" \
  && ok "threads varied by the user split lines" || bad "user threads: $(shape "$T/cap/d0.dat")"
exit $fail
