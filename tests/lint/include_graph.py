"""include_graph.py ROOT — the modules' include graph against docs/layout.md's (issue 27 item 9).

A module is a folder of src/ (cli aside: the command uses every module). Its edges are the modules
whose headers its sources include: "pitstop/X.h" is module X's public header (parse.h is record's,
pitstop.h is api's), "X/y.h" is module X's private one; a module's own public header counts as its
source. docs/layout.md holds the drawn graph in a ```include-graph block, one module a line:
`layer N  NAME  ──▶ DEP DEP ...` (`──▶` and the list absent for a module that uses none). Exit 1,
naming each difference, when the drawn and the real graph differ in any edge or module, or when an
edge does not point to a lower layer (dependencies point downwards only)."""
import os
import re
import sys

HEADER_MODULE = {"parse": "record", "pitstop": "api"}


def real_graph(root):
    src, inc = os.path.join(root, "src"), os.path.join(root, "include", "pitstop")
    mods = sorted(m for m in os.listdir(src) if os.path.isdir(os.path.join(src, m)) and m != "cli")
    graph = {}
    for m in mods:
        files = [os.path.join(src, m, f) for f in os.listdir(os.path.join(src, m)) if f.endswith((".c", ".h"))]
        files += [os.path.join(inc, f) for f in os.listdir(inc)
                  if f.endswith(".h") and HEADER_MODULE.get(f[:-2], f[:-2]) == m]
        deps = set()
        for f in files:
            with open(f, encoding="utf-8") as fh:
                for d, h in re.findall(r'^\s*#\s*include\s+"([a-z_]+)/([a-z_]+)\.h"', fh.read(), re.M):
                    dm = HEADER_MODULE.get(h, h) if d == "pitstop" else d
                    if dm != m:
                        deps.add(dm)
        graph[m] = deps
    return graph


def drawn_graph(layout):
    with open(layout, encoding="utf-8") as fh:
        text = fh.read()
    block = re.search(r"^```include-graph\n(.*?)^```", text, re.M | re.S)
    if not block:
        sys.exit(f"FAIL: {layout}: no ```include-graph block")
    graph, layer = {}, {}
    for n, line in enumerate(block.group(1).splitlines(), 1):
        if not line.strip():
            continue
        m = re.match(r"layer (\d+)\s+([a-z_]+)\s*(?:──▶\s*(.*))?$", line.strip())
        if not m:
            sys.exit(f"FAIL: {layout}: include-graph line {n} is not `layer N NAME ──▶ DEPS`: {line!r}")
        if m.group(2) == "cli":
            continue
        layer[m.group(2)] = int(m.group(1))
        graph[m.group(2)] = set(m.group(3).split()) if m.group(3) else set()
    return graph, layer


def main():
    root = sys.argv[1]
    real = real_graph(root)
    drawn, layer = drawn_graph(os.path.join(root, "docs", "layout.md"))
    bad = []
    for m in sorted(set(real) | set(drawn)):
        if m not in drawn:
            bad.append(f"module {m} is not drawn (it uses {' '.join(sorted(real[m])) or 'nothing'})")
        elif m not in real:
            bad.append(f"module {m} is drawn but src/{m} does not exist")
        else:
            for d in sorted(real[m] - drawn[m]):
                bad.append(f"{m} includes {d}'s headers, which the drawing does not show")
            for d in sorted(drawn[m] - real[m]):
                bad.append(f"{m} ──▶ {d} is drawn but no file of {m} includes {d}'s headers")
            for d in sorted(drawn[m]):
                if d in layer and layer[d] >= layer[m]:
                    bad.append(f"{m} (layer {layer[m]}) uses {d} (layer {layer[d]}): not downwards")
    if bad:
        print("FAIL: docs/layout.md's include graph and the code differ:\n  " + "\n  ".join(bad))
        return 1
    print(f"ok: {len(real)} modules, {sum(len(v) for v in real.values())} edges, as drawn in docs/layout.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
