#!/usr/bin/env python3
"""crash_check.py EVENTS NITERS RUN [DB [STARTS]] — what a run whose controller was SIGKILLed and
started again must show (tests/control/run_local.sh part 3, run_ssh.sh, run_slurm.sh,
command_clap.sh):
  - the stored steps are contiguous, 0 .. NITERS-1 (NITERS 0: however many);
  - node records, in order: no node is started while it is live (never twice), a
    node the restarted controller adopted ("ready" with no "start" since its last
    stop) had its start recorded by the first controller, every node ends stopped or lost;
  - with DB (the store given to --db): the store's node records of RUN are the events
    file's, in the same order, and its distinct iteration steps are 0 .. NITERS-1;
  - with STARTS: exactly STARTS node starts recorded (the restarted controller started none
    beyond what the test expects).
Prints one line: steps, generations, nodes started, adopted, stopped."""
import json
import sqlite3
import sys


def check_nodes(nodes, where):
    """nodes: (action, node) in record order; returns (started, adopted)."""
    live, started, adopted = set(), [], []
    for action, node in nodes:
        if action == "start":
            assert node not in live, f"{where}: node {node} started twice"
            live.add(node)
            started.append(node)
        elif action == "ready":
            if node not in started:
                raise AssertionError(f"{where}: node {node} is ready but its start is not recorded")
            if node not in live:
                raise AssertionError(f"{where}: node {node} is ready after its stop without a new start")
        elif action in ("stop", "lost"):
            assert node in live, f"{where}: node {node} stopped but not live"
            live.discard(node)
    assert not live, f"{where}: nodes never stopped: {sorted(live)}"
    # adopted: a node with more "ready" records than "start" records
    for node in sorted(set(started)):
        if sum(1 for a, n in nodes if n == node and a == "ready") > started.count(node):
            adopted.append(node)
    return started, adopted


def main():
    events, niters, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    r = [json.loads(line) for line in open(events)]
    assert all(x["run"] == run for x in r), "a record of another run"
    steps = [x["step"] for x in r if x["type"] == "iter"]
    niters = niters or len(steps)
    assert steps == list(range(niters)), f"steps not contiguous after a controller crash ({len(steps)})"
    nodes = [(x["action"], x["node"]) for x in r if x["type"] == "node"]
    started, adopted = check_nodes(nodes, events)
    gens = sorted({x["gen"] for x in r if x["type"] == "iter"})
    if len(sys.argv) > 5:
        assert len(started) == int(sys.argv[5]), f"{len(started)} node starts, not {sys.argv[5]}: {started}"
    store = ""
    if len(sys.argv) > 4:
        db = sqlite3.connect(sys.argv[4])
        q = "SELECT n.action, n.node FROM nodes n JOIN runs r ON r.id = n.run_id WHERE r.name = ? ORDER BY n.seq"
        snodes = [tuple(x) for x in db.execute(q, (run,))]
        assert snodes == nodes, f"the store's node records differ from the events file's: {snodes} vs {nodes}"
        q = "SELECT DISTINCT i.step FROM iterations i JOIN runs r ON r.id = i.run_id WHERE r.name = ? ORDER BY 1"
        ssteps = [x[0] for x in db.execute(q, (run,))]
        assert ssteps == list(range(niters)), f"the store's steps are not 0..{niters - 1} ({len(ssteps)})"
        store = ", the store's node records and steps the same"
    print(f"controller crash: {niters} contiguous steps over generations {gens}, {len(started)} node starts "
          f"({len(set(started))} nodes), none started twice, {len(adopted)} adopted by the restarted controller "
          f"{adopted}, every node stopped{store}")


if __name__ == "__main__":
    main()
