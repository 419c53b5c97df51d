#!/usr/bin/python3
"""stamp_lines.py STAMPS SCRIPT ARGS... — runs SCRIPT in this process as `python3 SCRIPT ARGS` would
(runpy, __main__), with its stdout passed through unchanged, line by line, and each line's
time.perf_counter() at the moment the script printed it written to STAMPS ("SECONDS<TAB>LINE").
The reference the controller's arrival times are checked against (tests/control/run_clients.sh):
the script's own clock, taken where the line is made, not where it is read."""
import runpy, sys, time


class Stamped:
    def __init__(self, out, stamps):
        self.out, self.stamps, self.part = out, stamps, ""

    def write(self, s):
        self.part += s
        while "\n" in self.part:
            line, self.part = self.part.split("\n", 1)
            t = time.perf_counter()
            self.out.write(line + "\n")
            self.out.flush()
            self.stamps.write(f"{t:.6f}\t{line}\n")
            self.stamps.flush()
        return len(s)

    def flush(self):
        self.out.flush()

    def __getattr__(self, name):
        return getattr(self.out, name)


stamps = open(sys.argv[1], "w")
script = sys.argv[2]
sys.argv = sys.argv[2:]
sys.stdout = Stamped(sys.stdout, stamps)
runpy.run_path(script, run_name="__main__")
