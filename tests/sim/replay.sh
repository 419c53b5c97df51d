#!/usr/bin/env bash
# ctest: slow
# replay.sh — live meets simulated (issue 16): a `pitstop run --policy cost` on
# a heterogeneous pair of local nodes (local-1 priced 10 x local-0.4, so the
# policy resizes whatever the machine's load) is recorded, then
# `pitstop simulate --replay` drives the same policy over the run's own records:
# the same resize decisions at the same steps, and a cost within 5% of the one
# the node records measured. The replay under other bounds (--nnodes 2:2) must
# NOT agree (the check can fail). Bad events files (truncated, no iteration, a
# type the catalog lacks) give one message naming the file and a non-zero exit.
set -u
. "${PIT_SOURCE_DIR:?}/tests/sim/common.bash"
. "$SRC/tests/dist/common.bash"
unset OPENBLAS_CORETYPE

cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s  boot_s
local-1    1      1     -          0.50     1          0      0
local-0.4  1      1     40%        0.05     1          0      0
CAT
"$P" run --quiet --catalog "$T/cat.tsv" --run rp --checkpoint-dir "$T/r" --nodes local-1:1+local-0.4:1 \
  --nnodes 1:2 --policy cost --model cnn-wide --data synthetic --batch-size 64 --no-validation --max-iters 600 \
  > "$T/run.out" 2> "$T/run.err" || { bad "the live run failed: $(tail -5 "$T/run.err")"; exit 1; }
EV="$T/r/events.jsonl"

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 1:2 --format json > "$T/replay.json" \
  || bad "replay failed"
"$PY" - "$T/replay.json" "$EV" << 'PY' && ok "replay: same decisions, same steps, cost within 5%" || bad "replay: $(cat "$T/replay.json")"
import json, sys
j = json.load(open(sys.argv[1]))
# the live decisions, read here independently of the replay's reader
live = []
for l in open(sys.argv[2]):
    r = json.loads(l)
    d = r.get("detail")
    if r["type"] == "decision" and isinstance(d, dict) and d.get("action") == "resize":
        live.append((r["step"], d["from"], d["to"]))
assert len(live) >= 1, "the live run made no resize"
got = [(d["step"], d["from"], d["to"]) for d in j["live"]["decisions"]]
assert got == live, (got, live)
sim = [(d["step"], d["from"], d["to"]) for d in j["replay"]["decisions"]]
assert sim == live, (sim, live)
assert j["same_decisions"] is True and j["diverged"] is False
assert j["steps"] == 600
assert 0.95 <= j["replay"]["cost"] / j["live"]["cost"] <= 1.05, (j["replay"]["cost"], j["live"]["cost"])
print("live", live, "cost live %.6g replay %.6g" % (j["live"]["cost"], j["replay"]["cost"]))
PY

# the run's report (issue 15, deliver 4): each decision with its reason, and the run's cost beside each
# membership it ran as a fixed one for the whole job by the run's own records; the fixed costs checked
# against an estimate made here from the records (price x (steps x the membership's mean iteration time + its
# first generation's start, which a fixed replay pays as measured: issue 26, + the run's last stop, from its
# last iteration to its last node's stop), billed as the catalog bills: whole seconds (issue 27: each node
# of a fixed membership is billed; the estimate was raw seconds)
"$PY" - "$T/replay.json" "$EV" "$T/run.out" "$T/cat.tsv" << 'PY' && ok "report: decisions with reasons, cost beside the best fixed membership's" || bad "report: $(sed -n '/^decisions/,$p' "$T/run.out")"
import json, math, re, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[3]).read()
price = {l.split()[0]: float(l.split()[4]) for l in open(sys.argv[4]).read().splitlines()[1:]}
def mem(text):  # "a:1+b:2" -> {"a": 1, "b": 2}
    return {x.split(":")[0]: int(x.split(":")[1]) for x in text.split("+")}
nodes, gm, dts, last, resizes = [], {}, {}, {}, []
last_iter = last_stop = 0.0
start, prev_t = {}, 0.0  # a membership's start as its first generation measured it: the end of the one before → its first iteration
for l in open(sys.argv[2]):
    r = json.loads(l)
    d = r.get("detail")
    if r["type"] == "iter" and r["gen"] not in last:
        m0 = tuple(sorted((t, nodes.count(t)) for t in set(nodes)))
        start.setdefault(m0, r["t"] - r["step_s"] - prev_t)
    if r["type"] == "end":
        prev_t = r["t"]
    if r["type"] == "node":
        if r["action"] == "start":
            nodes.append(r["itype"])
        elif r["action"] in ("stop", "lost"):
            nodes.remove(r["itype"])
    elif r["type"] == "iter":
        g = r["gen"]
        gm.setdefault(g, tuple(sorted((t, nodes.count(t)) for t in set(nodes))))
        dts.setdefault(gm[g], []).append(r["t"] - last[g] if g in last else r["step_s"])
        last[g] = r["t"]
    elif r["type"] == "decision" and isinstance(d, dict) and d.get("action") == "resize":
        resizes.append((r["step"], d["why"]))
    # the latest times, not the last records' (the file is not in time order: an iteration's t can be
    # earlier than a record written before it). A CI run (2026-11-29, under load, the run that removed
    # local-0.4) estimated 25 s for local-1:1's fixed 13.5 s; its cause was not found (not reproduced in
    # 15 loaded runs): the estimate's parts are printed when it fails
    if r["type"] == "iter":
        last_iter = max(last_iter, r["t"])
    if r["type"] == "node" and r["action"] in ("stop", "lost"):
        last_stop = max(last_stop, r["t"])
assert "\ndecisions (" in out, "no decisions section"
for step, reason in resizes:  # each resize on the timeline with its reason
    line = [l for l in out.splitlines() if re.match(r"^ +[0-9.]+s +step +%d +\S+ \u2192 " % step, l)]
    assert len(line) == 1 and reason in line[0], (step, reason, line)
fixed = {tuple(sorted(mem(f["membership"]).items())): f for f in j["fixed"]}
assert set(fixed) == set(dts), (set(fixed), set(dts))  # every membership the run ran, and only those
for m, f in fixed.items():
    secs = j["steps"] * sum(dts[m]) / len(dts[m]) + start[m] + max(0, last_stop - last_iter)
    est = sum(price[t] * n for t, n in m) * math.ceil(secs) / 3600
    assert f["complete"] and 0.9 <= f["cost"] / est <= 1.1, (m, f, est, "mean step", sum(dts[m]) / len(dts[m]),
                                                             "start", start[m], "tail", last_stop - last_iter)
best = min(j["fixed"], key=lambda f: f["cost"])
assert best["best"] and sum(f["best"] for f in j["fixed"]) == 1, j["fixed"]
assert re.search(r"^  fixed %s +%.6f .*<- best fixed$" % (re.escape(best["membership"]), best["cost"]), out, re.M), out
r = re.search(r"^run / best fixed: cost ([0-9.]+),", out, re.M)
assert r and abs(float(r.group(1)) - j["live"]["cost"] / best["cost"]) < 2e-3, (r and r.group(1), j)
print("resizes", resizes, "fixed", [(f["membership"], round(f["cost"], 6)) for f in j["fixed"]])
PY

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 2:2 --format json \
  | "$PY" -c 'import json,sys; j=json.load(sys.stdin); assert j["same_decisions"] is False, j' \
  && ok "replay under --nnodes 2:2 differs from the run" || bad "replay under other bounds"

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 1:2 | grep -q "^same decisions at the same steps: yes" \
  && ok "table" || bad "table"

# report.html beside the run's records (issue 27 item 7): the run against the best fixed membership, the
# same ratio as the text report's line; and again from another terminal (status --html, its own replay);
# a fixed run's page says it was not weighed
html_ratio() { "$PY" -c 'import re,sys
h = open(sys.argv[1]).read()
m = re.search(r"<p id=\"vs-best-fixed\">This run against the best fixed membership \(([^)]*)\): cost ([0-9.]+)\u00d7", h)
rows = re.findall(r"<tr><td>fixed ([^<]*)</td><td class=\"n\">[0-9.]+</td><td class=\"n\">[0-9.]+</td><td>best fixed", h)
assert m and rows == [m.group(1)], (m, rows)
print(m.group(2))' "$1"; }
txt=$(sed -n 's/^run \/ best fixed: cost \([0-9.]*\),.*/\1/p' "$T/run.out")
h1=$(html_ratio "$T/r/report.html") && "$P" status "$EV" --catalog "$T/cat.tsv" --html "$T/again.html" 2> /dev/null &&
  h2=$(html_ratio "$T/again.html") && [ -n "$txt" ] && [ "$h1" = "$txt" ] && [ "$h2" = "$txt" ] &&
  ok "report.html: run / best fixed cost $h1 as the text report ($txt), and from status --html" ||
  bad "report.html's comparison: text '$txt', run's page '${h1:-}', status's '${h2:-}'"
grep -v '"type":"decision"' "$EV" > "$T/nodec.jsonl"
"$P" status "$T/nodec.jsonl" --catalog "$T/cat.tsv" --html "$T/nodec.html" 2> /dev/null &&
  grep -q "Not weighed" "$T/nodec.html" && ! grep -q 'id="vs-best-fixed"' "$T/nodec.html" &&
  ok "report.html of a run without cost decisions: not weighed" || bad "report.html without decisions"

# the stored run's report again, from its events file alone: the fixed memberships and each decision's reason
"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 1:2 > "$T/replay.txt" || bad "replay text"
why=$("$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); d = r.get("detail")
    if r["type"] == "decision" and isinstance(d, dict) and d.get("action") == "resize": print(d["why"]); break' "$EV")
grep -qF -- "$why" "$T/replay.txt" && grep -q "^run / best fixed: cost " "$T/replay.txt" \
  && ok "simulate --replay: the run's decisions with their reasons, and the best fixed" || bad "simulate --replay report: $(cat "$T/replay.txt")"

# a command whose log has no times (PyTorch's DCGAN example's "[e/N][i/L] Loss_D: ..." lines, 10 ms apart):
# pitstop times each line by its arrival, so the first step has no time of its own; the replay counts
# it in the start and replays the run at its own cost (before 2026-11-28: $0 and NaN s, and that NaN
# "fixed" membership marked best)
cat > "$T/untimed.py" << 'PYEOF'
import time
for e in range(2):
    for i in range(8):
        time.sleep(0.01)
        print("[%d/2][%d/8] Loss_D: 1.0 Loss_G: 1.0 D(x): 0.5 D(G(z)): 0.5 / 0.5" % (e, i), flush=True)
PYEOF
"$P" run --quiet --catalog "$T/cat.tsv" --run untimed --checkpoint-dir "$T/untimed" --nodes local-1:1 --policy cost \
  -- "$PY" "$T/untimed.py" > /dev/null 2> "$T/untimed.err" || bad "the untimed run: $(cat "$T/untimed.err")"
"$P" simulate --replay "$T/untimed/events.jsonl" --catalog "$T/cat.tsv" > "$T/untimed.txt" 2>&1 &&
  "$P" simulate --replay "$T/untimed/events.jsonl" --catalog "$T/cat.tsv" --format json > "$T/untimed.json" &&
  ! grep -qi "nan" "$T/untimed.txt" && grep -q "^run / best fixed: cost 1.000" "$T/untimed.txt" &&
  "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))
assert abs(j["cost_ratio"] - 1) < 0.01 and j["replay"]["time_s"] > 0, j
assert [f["best"] and f["complete"] for f in j["fixed"]] == [True], j["fixed"]' "$T/untimed.json" &&
  ok "replay of a command timed by its lines' arrival: its own cost, its membership the best fixed" ||
  bad "replay of an untimed command: $(cat "$T/untimed.txt" "$T/untimed.json" 2> /dev/null)"

replay_fail() { # name file needle extra-args...
  local name=$1 f=$2 needle=$3
  shift 3
  expect_fail "$name" "$needle" "$P" simulate --replay "$f" --catalog "$T/cat.tsv" "$@"
}
head -c $(($(stat -c %s "$EV") / 2)) "$EV" > "$T/trunc.jsonl"
replay_fail "truncated events" "$T/trunc.jsonl" trunc.jsonl
grep -v '"type":"iter"' "$EV" > "$T/noiter.jsonl"
replay_fail "no iteration" "$T/noiter.jsonl" noiter.jsonl
replay_fail "type not in catalog" "$EV" cat.tsv --types local-1,no.such
exit $fail
