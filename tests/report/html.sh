#!/usr/bin/env bash
# html.sh — report.html (`pitstop status FILE --html OUT`, src/report/html.c) loaded in headless
# Chromium (Debian's chromium, scripts/setup): the page of a recorded two-generation run
# (tests/record/fixtures/run_schedule.jsonl) holds its timeline as a data URI, its generations,
# its nodes with their billed cost and the resize with its reason, asks for nothing over the
# network, and its own check (an onerror handler and a load handler that writes into the page)
# reports data-check="ok" with no "pit-error" in Chromium's DOM dump; a copy with the image's
# data broken must report the missing image, so the check can fail. A screenshot is taken too.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHROMIUM=${PIT_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "FAIL: chromium is not installed (scripts/setup installs it)"; exit 1; }
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
local-0.4  1      1     40%        0.10     60         60
CAT
cp "$PIT_SOURCE_DIR/tests/record/fixtures/run_schedule.jsonl" "$T/events.jsonl"
"$PITSTOP" status "$T/events.jsonl" --catalog "$T/cat.tsv" --html "$T/report.html" 2> "$T/err"
grep -q "wrote $T/report.html" "$T/err" || { cat "$T/err"; exit 1; }
[ ! -e "$T/report.html.timeline.png" ] || { echo "FAIL: the chart's temporary file was left"; exit 1; }
h=$T/report.html
grep -q 'src="data:image/png;base64,iVBORw0KGgo' "$h" || { echo "FAIL: no embedded PNG"; exit 1; }
if grep -Eq '(src|href)="(https?:)?//' "$h"; then echo "FAIL: the page asks the network"; exit 1; fi
# the schedule's resize and its reason; fx1.1 (local-0.4: 60 s minimum) billed 60 s, fx1.0 18 s
grep -q "local-1:1 → local-0.4:1+local-1:1" "$h" && grep -q "schedule: local-0.4:1+local-1:1 from step 30" "$h" ||
  { echo "FAIL: the decision or its reason is missing"; exit 1; }
grep -q '<td>fx1.1</td>.*<td class="n">60</td><td class="n">0.001667</td>' "$h" ||
  { echo "FAIL: fx1.1's billed cost"; grep fx1.1 "$h"; exit 1; }
grep -q '<td>fx1.0</td>.*<td class="n">18</td><td class="n">0.000500</td>' "$h" ||
  { echo "FAIL: fx1.0's billed cost"; grep fx1.0 "$h"; exit 1; }
chrome() { # URL OUTDIR: the DOM after load on stdout
  timeout 120 "$CHROMIUM" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$2/profile" \
    --virtual-time-budget=3000 "${@:3}" "$1" 2> "$2/chromium.err"
}
chrome "file://$h" "$T" --dump-dom > "$T/dom.html" || { cat "$T/chromium.err"; exit 1; }
err='<p class="pit-error">pit-error: '
grep -q '<body data-check="ok"' "$T/dom.html" || { echo "FAIL: the page's check did not pass"; grep -o "$err[^<]*" "$T/dom.html"; head -c 600 "$T/dom.html"; exit 1; }
if grep -q "$err" "$T/dom.html"; then echo "FAIL: $(grep -o "$err[^<]*" "$T/dom.html")"; exit 1; fi
# the negative control: the image's data cut short must show as an error in the same check
sed 's|base64,iVBORw0KGgo[A-Za-z0-9+/]\{40\}|base64,AAAA|' "$h" > "$T/broken.html"
chrome "file://$T/broken.html" "$T" --dump-dom > "$T/broken-dom.html" || { cat "$T/chromium.err"; exit 1; }
grep -q "${err}image timeline" "$T/broken-dom.html" && grep -q '<body data-check="error"' "$T/broken-dom.html" ||
  { echo "FAIL: a broken image went unnoticed"; head -c 600 "$T/broken-dom.html"; exit 1; }
(cd "$T" && chrome "file://$h" "$T" --screenshot="$T/shot.png" --window-size=1200,1600 > /dev/null) ||
  { cat "$T/chromium.err"; exit 1; }
head -c 8 "$T/shot.png" | od -An -c | grep -q "P   N   G" || { echo "FAIL: no screenshot"; exit 1; }
if [ -n "${PIT_FIGURES:-}" ]; then cp "$T/shot.png" "$PIT_FIGURES/report-html.png"; fi
echo "report.html: $(wc -c < "$h") bytes, Chromium: data-check ok, no error; broken copy: image error seen; screenshot $(wc -c < "$T/shot.png") bytes"
