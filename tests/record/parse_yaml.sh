#!/usr/bin/env bash
# parse_yaml.sh — `pitstop parse` of YAML timing files (per instance type, per rank, lists of
# iteration and epoch times: the shape of andrefz's course run times.yaml), built here:
#  1. detected by content (any file name), one run "<run>.<type>" per type, the exact records;
#     the mapping form and the sequence-of-one-key-mappings form give the same records;
#  2. --batch-size N (per rank): into the records and the init config ("batch_from"), for YAML
#     and for a DCGAN log without Namespace(batch_size=...); a log that records its batch keeps it;
#  3. bad input (not YAML, cut off, non-numeric or negative time, a type without ranks, an unknown
#     layout, two documents):
#     one message naming file:line, exit 1, nothing stored;
#  4. `profile --from-db` on a store of such runs (two batch sizes, prices of a catalog made
#     here): the ranking by samples per dollar computed by hand below, the batch column, and a
#     run without a batch named ("batch size unknown for run ...") and left out;
#  5. --ranks-per-node N: "nodes" in the init config, the profile priced on those nodes.
set -euo pipefail
: "${PITSTOP:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
P=$PITSTOP

# ---- 1. the records ----
cat > small.data << 'EOF'
# two types, two ranks each
- c4.large:
  - rank_0:
    - it:
      - 1.5
      - 1.25
    - epoch:
      - 20.5
  - rank_1:
    - it:
      - 1.75
      - 1.125
    - epoch:
      - 20.25
- m5.xlarge:
  - rank_0:
    - it: [0.5]
    - epoch: 9
EOF
$P parse --quiet small.data > got.jsonl
cat > want.jsonl << 'EOF'
{"type":"init","run":"small.c4.large","gen":0,"ranks":2,"config":{"ranks":2,"itype":"c4.large"}}
{"type":"iter","run":"small.c4.large","gen":0,"rank":0,"epoch":0,"iter":0,"step":0,"step_s":1.5}
{"type":"iter","run":"small.c4.large","gen":0,"rank":0,"epoch":0,"iter":1,"step":1,"step_s":1.25}
{"type":"epoch","run":"small.c4.large","gen":0,"rank":0,"epoch":0,"epoch_s":20.5}
{"type":"iter","run":"small.c4.large","gen":0,"rank":1,"epoch":0,"iter":0,"step":0,"step_s":1.75}
{"type":"iter","run":"small.c4.large","gen":0,"rank":1,"epoch":0,"iter":1,"step":1,"step_s":1.125}
{"type":"epoch","run":"small.c4.large","gen":0,"rank":1,"epoch":0,"epoch_s":20.25}
{"type":"init","run":"small.m5.xlarge","gen":0,"ranks":1,"config":{"ranks":1,"itype":"m5.xlarge"}}
{"type":"iter","run":"small.m5.xlarge","gen":0,"rank":0,"epoch":0,"iter":0,"step":0,"step_s":0.5}
{"type":"epoch","run":"small.m5.xlarge","gen":0,"rank":0,"epoch":0,"epoch_s":9}
EOF
diff want.jsonl got.jsonl || fail "records of small.data differ from the expected ones"
cat > map.data << 'EOF'
c4.large:
  rank_0: {it: [1.5, 1.25], epoch: [20.5]}
  rank_1:
    it: [1.75, 1.125]
    epoch: 20.25
m5.xlarge:
  rank_0: {it: 0.5, epoch: 9}
EOF
$P parse --quiet --run small map.data > got2.jsonl
diff want.jsonl got2.jsonl || fail "the mapping form gives other records"
$P parse --quiet --format yaml --run small small.data | cmp -s - want.jsonl || fail "--format yaml differs"

# ---- 2. --batch-size ----
$P parse --quiet --batch-size 16 small.data > b.jsonl
grep -q '^{"type":"init","run":"small.c4.large","gen":0,"ranks":2,"config":{"batch":32,"batch_per_rank":16,"ranks":2,"itype":"c4.large","batch_from":"--batch-size"}}$' b.jsonl ||
  fail "--batch-size 16: init config $(head -1 b.jsonl)"
[ "$(grep -c '"type":"iter".*"batch":32,' b.jsonl)" = 4 ] || fail "--batch-size 16: c4.large's 4 iterations carry batch 32"
grep -q '"run":"small.m5.xlarge".*"batch":16,' b.jsonl || fail "--batch-size 16: one rank, global batch 16"
for bad in 0 -3 x 1.5; do
  if $P parse --batch-size "$bad" small.data > /dev/null 2> e; then fail "--batch-size $bad accepted"; fi
  grep -q "batch-size '$bad' is not a positive count" e || fail "--batch-size $bad: $(cat e)"
done
# a DCGAN log without its batch: the given one, times the world size; with Namespace: the log's
printf 'Rank: 0. World Size: 2\nRank,0,Initialization Time: 2.5\nRank,0,Epoch,0,Iteration,0,It. time,1.5,Elapsed time,4\n' > nob.log
$P parse --quiet --batch-size 8 nob.log > nob.jsonl
grep -q '"config":{"batch":16,"batch_per_rank":8,"ranks":2,"batch_from":"--batch-size"}' nob.jsonl || fail "$(cat nob.jsonl)"
grep -q '"type":"iter".*"batch":16,' nob.jsonl || fail "no batch 16 on the iteration: $(cat nob.jsonl)"
{ echo 'Namespace(batch_size=32, num_epochs=1)'; cat nob.log; } > withb.log
$P parse --quiet --batch-size 8 withb.log > withb.jsonl
grep -q '"config":{"batch":64,"batch_per_rank":32,"ranks":2}' withb.jsonl || fail "the log's batch must win: $(cat withb.jsonl)"
$P parse --quiet nob.log | grep -q '"batch"' && fail "without --batch-size a log without batch got one"

# ---- 3. bad input: file:line, exit 1, nothing stored ----
printf 'itype\tvcpus\tprice_h\tbilling_s\tmin_s\nta\t2\t0.10\t1\t60\ntb\t4\t0.20\t1\t60\ntc\t2\t0.05\t1\t60\ntd\t2\t0.10\t1\t60\nte\t2\t0.10\t1\t60\n' > cat.tsv
head -c 150 small.data > cut.data                               # cut inside rank_1's list
sed 's/1.125/1.1x5/' small.data > nonnum.data
printf -- '- c4.large:\n- m5.large:\n  - rank_0:\n    - it: [1, 2]\n' > noranks.data
printf -- '- c4.large:\n  - gpu_0:\n    - it: [1, 2]\n' > layout.data
printf -- '- c4.large:\n  - rank_0:\n    - it: [1.3, 1.1\n' > flow.data
printf -- '- c4.large:\n  - rank_0:\n    - it: [1.5, -2]\n' > neg.data
printf -- '- c4.large:\n  - rank_0:\n    - it: [1.5]\n---\n- m5.large:\n  - rank_0:\n    - it: [2]\n' > two.data
check_bad() { # file, line, message pattern
  if $P parse --quiet --db bad.db small.data "$1" > /dev/null 2> e; then fail "$1 accepted"; fi
  grep -q "^pitstop: $1:$2: $3" e || fail "$1: $(cat e)"
  [ "$(grep -c "^pitstop: $1" e)" = 1 ] || fail "$1: not one message: $(cat e)"
  grep -q "nothing stored" e || fail "$1: $(cat e)"
  if [ -e bad.db ]; then
    n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])' bad.db)
    [ "$n" = 0 ] || fail "$1: $n runs stored"
  fi
}
check_bad cut.data 9 "rank_1 of c4.large has 1 iteration and 0 epoch times, rank_0 has 2 and 1 (last line has no newline: truncated?)"
check_bad nonnum.data 12 "'it' of rank_1 of c4.large: '1.1x5' is not a time in seconds"
check_bad noranks.data 1 "instance type 'c4.large' has no ranks"
check_bad layout.data 2 "unknown YAML layout: 'gpu_0' under c4.large"
check_bad flow.data 4 "not valid YAML: "
check_bad neg.data 3 "'it' of rank_0 of c4.large: '-2' is not a time"
check_bad two.data 5 "a second YAML document: one document per file"
if $P parse --format yaml nob.log > /dev/null 2> e; then fail "--format yaml on a log accepted"; fi
grep -q "^pitstop: nob.log:1: not valid YAML" e || fail "$(cat e)"
# the same file twice: its runs are already in the store
$P parse --quiet --db twice.db small.data
if $P parse --quiet --db twice.db small.data 2> e; then fail "a second parse of the same file stored again"; fi
grep -q "run 'small' is already in the store" e || fail "$(cat e)"

# ---- 4. profile --from-db ----
python3 - << 'PYEOF'
# iteration times: a warm-up, then t_p alternately 1% up and down (10 steady ones: mean t_p)
def it(tp):
    return [3 * tp] + [tp * (1.01 if i % 2 else 0.99) for i in range(10)] + [tp]
with open("runs.data", "w") as f:
    for typ, tp in [("ta", 1.0), ("tb", 0.4), ("tc", 2.5)]:
        f.write("- %s:\n" % typ)
        for r in (0, 1):
            f.write("  - rank_%d:\n    - it: [%s]\n    - epoch: [%g]\n" % (r, ", ".join("%.6f" % x for x in it(tp)), 1500 * tp))
with open("nobatch.data", "w") as f:
    f.write("- te:\n  - rank_0:\n    - it: [%s]\n" % ", ".join("%.6f" % x for x in it(0.1)))
with open("d.log", "w") as f:  # another source: its own batch, 32 a rank x 2
    f.write("Namespace(batch_size=32, num_epochs=1)\n")
    for r in (0, 1):
        f.write("Rank: %d. World Size: 2\nRank,%d,Initialization Time: 2.0\n" % (r, r))
    for i, x in enumerate(it(1.5)):
        for r in (0, 1):
            f.write("Rank,%d,Epoch,0,Iteration,%d,It. time,%.6f,Elapsed time,%d\n" % (r, i, x, 2 + 2 * i))
PYEOF
$P parse --quiet --batch-size 16 --db p.db runs.data
$P parse --quiet --itype td --db p.db d.log
$P parse --quiet --db p.db nobatch.data
$P profile --from-db p.db --catalog cat.tsv > out 2> err || fail "profile --from-db failed: $(cat err)"
cat out err
# by hand: samples/$ = global batch / t_p x 3600 / price (one node of each type)
#   td: 64 / 1.5 x 3600 / 0.10 = 1.536e6 (the cheapest per sample, batch 64)
#   tb: 32 / 0.4 x 3600 / 0.20 = 1.44e6;  ta: 32 / 1.0 x 3600 / 0.10 = 1.152e6;  tc: 32 / 2.5 x 3600 / 0.05 = 9.216e5
python3 - out << 'PYEOF'
import sys
rows = [l for l in open(sys.argv[1]) if l[:1] in "* " and ":1x2" in l]
got = [(l[0], l.split()[1 if l[0] == "*" else 0]) for l in rows]
assert [m for _, m in got] == ["td:1x2", "tb:1x2", "ta:1x2", "tc:1x2"], got
assert got[0][0] == "*" and all(c == " " for c, _ in got[1:]), got
want = {"td": (64, 1.5, 0.10), "tb": (32, 0.4, 0.20), "ta": (32, 1.0, 0.10), "tc": (32, 2.5, 0.05)}
for l in rows:
    f = l[1:].split()
    typ = f[0].split(":")[0]
    b, tp, price = want[typ]
    assert abs(float(f[1]) - tp) / tp < 1e-3, (typ, "t_p", f[1], tp)
    assert abs(float(f[5]) - b / tp) / (b / tp) < 1e-3, (typ, "samples/s", f[5])
    assert abs(float(f[6]) - b / tp * 3600 / price) / (b / tp * 3600 / price) < 1e-3, (typ, "samples/$", f[6])
    assert int(f[7]) == b, (typ, "batch", f[7])
print("ranking and figures agree with the hand arithmetic")
PYEOF
grep -q "batch size unknown for run 'nobatch.te': give --batch-size" err || fail "the run without a batch not named: $(cat err)"
grep -q "te:" out && fail "the run without a batch was ranked"
# a job in epochs: runs that time only the start of their epoch (12 iterations of a 1500 x t_p epoch) are named
$P profile --from-db p.db --catalog cat.tsv --epochs 1 > out 2> err || fail "profile --epochs 1 failed: $(cat err)"
grep -q "run 'runs.ta' times 12 iterations of a 1500 s epoch (1500 × t_p): its iterations per epoch are not recorded" err ||
  fail "the partial epoch not named: $(cat err)"
grep -q "run 'd'" err && fail "the log with its whole epoch named as partial: $(cat err)"
# only runs without a batch: nothing to rank, exit 1, each named
$P parse --quiet --db nb.db nobatch.data
if $P profile --from-db nb.db --catalog cat.tsv > out 2> err; then fail "ranking nothing succeeded"; fi
grep -q "batch size unknown for run 'nobatch.te'" err && grep -q "holds no run with a membership, a batch" err || fail "$(cat err)"
# predict of a job in samples needs the batch
if $P predict --db nb.db --samples 1000 2> err > /dev/null; then fail "predict in samples without a batch succeeded"; fi
grep -q "batch size unknown for run 'nobatch.te': give --batch-size" err || fail "$(cat err)"
# ---- 5. --ranks-per-node: the run priced on ceil(ranks / N) nodes ----
$P parse --quiet --batch-size 16 --ranks-per-node 1 runs.data > rpn.jsonl
grep -q '"run":"runs.ta",.*"config":{"batch":32,"batch_per_rank":16,"ranks":2,"nodes":2,"nodes_from":"--ranks-per-node","itype":"ta"' rpn.jsonl ||
  fail "--ranks-per-node 1: $(head -1 rpn.jsonl)"
$P parse --quiet --batch-size 16 --ranks-per-node 1 --db rpn.db runs.data
$P profile --from-db rpn.db --catalog cat.tsv > out 2> err || fail "profile of --ranks-per-node runs: $(cat err)"
# two nodes of tb: 32 / 0.4 x 3600 / (2 x 0.20) = 7.2e5 samples per dollar
grep -E '^\* tb:2x1 .* 7\.2e\+05 +32 ' out || fail "tb on 2 nodes x 1 rank: $(cat out)"
$P parse --quiet --ranks-per-node 2 runs.data > rpn2.jsonl
grep -q '"nodes":1,' rpn2.jsonl || fail "--ranks-per-node 2: one node"
for bad in 0 -1 x; do
  if $P parse --ranks-per-node "$bad" runs.data > /dev/null 2> e; then fail "--ranks-per-node $bad accepted"; fi
  grep -q "ranks-per-node '$bad' is not a positive count" e || fail "--ranks-per-node $bad: $(cat e)"
done
echo "parse YAML: records, --batch-size, bad input, profile --from-db ranking, --ranks-per-node: ok"
