#!/usr/bin/python3
"""parse_ref.py — the reference for bench/parse-vs-python: a straightforward
Python parser of the log formats `pitstop parse` reads (docs/parse.md), written
the way the seed 004 scripts are: one compiled regular expression per line kind,
tried in turn on every line, with the same records and the same rules (twin
lines of one iteration merged, steps numbered per rank, context lines).

It builds every record as a dict and, with --json OUT, writes them as JSON
Lines like pitstop does, timing the serialisation apart (so a parse-only figure
is known too). Prints `records=N lines=M ... total_s=.. serialise_s=..`.
usage: parse_ref.py FILE [--json OUT | --dump]
"""
import json
import re
import sys
import time

NUM = r'([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)'
INT = r'(\d+)'
TAGS = re.compile(r'^\s*(?:\[(?!PI-INFO\])[A-Za-z0-9_.,-]{1,32}\](?:<stdout>:|<stderr>:)?\s*)*')
MARK = re.compile(r'(?:^|[\s:\]>|])PITSTOP\s+(\{.*)$')

P = [
    ('bracket', re.compile(r'^\[epoch: ' + INT + '/' + INT + r'\]\[iteration: ' + INT + '/' + INT + r'\]\[rank: ' + INT +
                           r'\]\s*(?:Loss_D: ' + NUM + ', Loss_G: ' + NUM + ')?.*?iteration time: ' + NUM)),
    ('took', re.compile(r'^\[rank: ' + INT + r'\] Epoch ' + INT + ' took: ' + NUM)),
    ('colon', re.compile(r'^Rank: ' + INT + ', Epoch: ' + INT + ', iteration: ' + INT + '/' + INT + ', It. time: ' + NUM +
                         r's?(?:, Elapsed time: ' + NUM + ')?')),
    ('csv_iter', re.compile(r'^Rank,' + INT + ',Epoch,' + INT + ',Iteration,' + INT + ',It. time,' + NUM +
                            '(?:,Elapsed time,' + NUM + ')?')),
    ('csv_epoch', re.compile(r'^Rank,' + INT + ',Epoch,' + INT + ',Epoch time,' + NUM + '(?:,Elapsed time,' + NUM + ')?')),
    ('csv_init', re.compile(r'^Rank,' + INT + r',Initialization Time:\s*' + NUM)),
    ('colon_init', re.compile(r'^Rank: ' + INT + ', Initialize time: ' + NUM)),
    ('world', re.compile(r'^Rank: ' + INT + r'\. World Size: ' + INT)),
    ('training', re.compile(r'^Rank: ' + INT + ', Epoch: ' + INT + ', Training')),
    ('itime', re.compile(r'^Iteration time: ' + NUM)),
    ('namespace', re.compile(r'^Namespace\(.*?batch_size=' + INT)),
    ('pi_init', re.compile(r'^\[PI-INFO\] Init time,' + INT + ',' + NUM)),
    ('pi_iter', re.compile(r'^\[PI-INFO\] Paramount Iteration,' + INT + ',' + INT + ',' + NUM + ',' + NUM)),
    ('pi_iter2', re.compile(r'^\[PI-INFO\] Paramount Iteration: Rank=' + INT + r'\s*Current Iteration=' + INT +
                            r'\s*Time of iteration=' + NUM)),
    ('pi_info', re.compile(r'^\[PI-INFO\] (?:PI avg|Beta),' + INT + ',' + NUM)),
    ('pi_total', re.compile(r'^\[PI-INFO\] Total time,' + NUM)),
    ('sm_step', re.compile(r'^' + INT + r' (?:step training time|steps training):\s*' + NUM)),
    ('sm_init', re.compile(r'^Tempo de inicializacao:\s*' + NUM)),
    ('sm_val', re.compile(r'^Validation time:\s*' + NUM)),
    ('sm_epoch', re.compile(r'^Epoch time:\s*' + NUM)),
    ('sm_end', re.compile(r'^Duracao do treinamento:\s*' + NUM)),
    ('sm_real', re.compile(r'^Real time:\s*' + NUM)),
    ('csv_header', re.compile(r'^total((?:,t\d+)+)\s*$')),
    ('csv_row', re.compile(r'^[\d,.]\S*\s*$')),
]
TUPLE = re.compile(r"^\((.*)\)\s*$")
TYPES = {'init', 'iter', 'validation', 'checkpoint', 'epoch', 'node', 'decision', 'end'}


class Parser:
    def __init__(self, run):
        self.run = run
        self.records = []
        self.pend = None
        self.kinds = set()
        self.per_epoch = {}
        self.next_step = {}
        self.batch = None
        self.world = None
        self.sm_epoch = 0
        self.rt_first = None
        self.rt_last = None
        self.csv_cols = 0
        self.csv_row = 0
        self.lines = self.skipped = self.malformed = 0

    def flush(self):
        if self.pend is not None:
            self.records.append(self.pend)
            self.pend = None

    def put(self, rec, kind):
        q = self.pend
        if q is not None and kind not in self.kinds and q['type'] == rec['type']:
            if kind == 'itime' and q['type'] == 'iter':
                q['step_s'] = rec['step_s']
                self.kinds.add(kind)
                return
            if (q.get('rank') == rec.get('rank') and q.get('epoch') is not None and q.get('epoch') == rec.get('epoch')
                    and (q['type'] == 'epoch' or (q['type'] == 'iter' and q.get('iter') is not None
                                                  and q.get('iter') == rec.get('iter')))):
                for k, v in rec.items():
                    if k not in q:
                        q[k] = v
                if 'step_s' in rec:
                    q['step_s'] = rec['step_s']
                if 'epoch_s' in rec:
                    q['epoch_s'] = rec['epoch_s']
                self.kinds.add(kind)
                return
        self.flush()
        if rec['type'] == 'iter' and 'step' not in rec:
            r = rec.get('rank', -1)
            L = self.per_epoch.get(r)
            if L and 'epoch' in rec and 'iter' in rec:
                rec['step'] = rec['epoch'] * L + rec['iter']
            else:
                rec['step'] = self.next_step.get(r, 0)
            self.next_step[r] = rec['step'] + 1
        self.pend = rec
        self.kinds = {kind}

    def new(self, typ, rank=None, **kw):
        rec = {'type': typ, 'run': self.run, 'gen': 0}
        if rank is not None:
            rec['rank'] = rank
        rec.update(kw)
        return rec

    def dcgan_iter(self, rank, epoch, it, L, step_s, kind, **kw):
        if L:
            self.per_epoch[rank] = L
        rec = self.new('iter', rank, epoch=epoch, iter=it, step_s=step_s, **kw)
        if self.batch and self.world:
            rec['batch'] = self.batch * self.world
        self.put(rec, kind)

    def sm(self, typ, **kw):
        rec = self.new(typ, **kw)
        if self.rt_first is not None:
            rec['t'] = self.rt_last - self.rt_first
        self.put(rec, 'other')

    def line(self, line):
        self.lines += 1
        line = line.rstrip('\r\n')
        s = line[TAGS.match(line).end():]
        if not s:
            self.skipped += 1
            return
        if s[0] == '{':
            return self.json(s, False)
        t = TUPLE.match(s)
        if t:
            parts = re.findall(r"""'([^']*)'|"([^"]*)"|([^,\s][^,]*)""", t.group(1))
            s = ' '.join((a or b or c).strip() if c else (a or b) for a, b, c in parts)
        for name, rx in P:
            m = rx.match(s)
            if m:
                return self.handle(name, m, s)
        m = MARK.search(s[:300])
        if m:
            return self.json(m.group(1), True)
        self.skipped += 1

    def json(self, text, marked):
        try:
            o = json.loads(text)
            if not isinstance(o, dict) or o.get('type') not in TYPES:
                raise ValueError
        except ValueError:
            if marked or '"type"' in text:
                self.malformed += 1
            else:
                self.skipped += 1
            return
        if not o.get('run'):
            o['run'] = self.run
        self.flush()
        self.records.append(o)

    def handle(self, name, m, s):
        g = m.groups()
        if name == 'bracket':
            kw = {'loss': {'d': float(g[5]), 'g': float(g[6])}} if g[5] is not None else {}
            self.dcgan_iter(int(g[4]), int(g[0]), int(g[2]), int(g[3]), float(g[7]), name, **kw)
        elif name == 'took':
            self.put(self.new('epoch', int(g[0]), epoch=int(g[1]), epoch_s=float(g[2])), name)
        elif name == 'colon':
            kw = {'t': float(g[5])} if g[5] is not None else {}
            self.dcgan_iter(int(g[0]), int(g[1]), int(g[2]), int(g[3]), float(g[4]), name, **kw)
        elif name == 'csv_iter':
            kw = {'t': float(g[4])} if g[4] is not None else {}
            self.dcgan_iter(int(g[0]), int(g[1]), int(g[2]), None, float(g[3]), name, **kw)
        elif name == 'csv_epoch':
            kw = {'t': float(g[3])} if g[3] is not None else {}
            self.put(self.new('epoch', int(g[0]), epoch=int(g[1]), epoch_s=float(g[2]), **kw), name)
        elif name in ('csv_init', 'colon_init'):
            self.put(self.new('init', int(g[0]), init_s=float(g[1]), ranks=self.world), 'other')
        elif name == 'world':
            self.world = int(g[1])
        elif name == 'itime':
            self.put(self.new('iter', -1, step_s=float(g[0])), name)
        elif name == 'namespace':
            self.batch = int(g[0])
        elif name == 'pi_init':
            self.put(self.new('init', int(g[0]), init_s=float(g[1])), 'other')
        elif name == 'pi_iter':
            self.put(self.new('iter', int(g[0]), iter=int(g[1]), step=int(g[1]), t=float(g[2]), step_s=float(g[3])), 'other')
        elif name == 'pi_iter2':
            self.put(self.new('iter', int(g[0]), iter=int(g[1]), step=int(g[1]), step_s=float(g[2])), 'other')
        elif name == 'pi_total':
            self.put(self.new('end', total_s=float(g[0])), 'other')
        elif name == 'sm_step':
            self.sm('iter', epoch=self.sm_epoch, iter=int(g[0]), step_s=float(g[1]))
        elif name == 'sm_init':
            self.sm('init', init_s=float(g[0]))
        elif name == 'sm_val':
            self.sm('validation', epoch=self.sm_epoch, val_s=float(g[0]))
        elif name == 'sm_epoch':
            self.sm('epoch', epoch=self.sm_epoch, epoch_s=float(g[0]))
            self.sm_epoch += 1
        elif name == 'sm_end':
            self.sm('end', total_s=float(g[0]))
        elif name == 'sm_real':
            v = float(g[0])
            if self.rt_first is None:
                self.rt_first = v
            self.rt_last = v
        elif name == 'csv_header':
            self.csv_cols = 1 + g[0].count(',')
            self.csv_row = 0
        elif name == 'csv_row':
            if not self.csv_cols or s.count(',') not in (self.csv_cols - 1, self.csv_cols):
                self.skipped += 1
                return
            f = s.rstrip().split(',')
            if len(f) == self.csv_cols + 1 and f[-1] == '':
                f.pop()
            try:
                if len(f) != self.csv_cols:
                    raise ValueError
                vals = [float(x) if x else None for x in f]
            except ValueError:
                self.malformed += 1
                return
            self.flush()
            self.csv_row += 1
            run = '%s.%d' % (self.run, self.csv_row)
            for i, v in enumerate(vals[1:]):
                self.records.append({'type': 'epoch', 'run': run, 'gen': 0, 'rank': i, 'epoch': 0, 'epoch_s': v})
            if vals[0] is not None:
                self.records.append({'type': 'end', 'run': run, 'gen': 0, 'total_s': vals[0]})


def main():
    """FILE [--json OUT]: with --json, the records are also written as JSON Lines
    to OUT in batches, and the time spent serialising is reported apart."""
    path = sys.argv[1]
    out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == '--json' else None
    dump = len(sys.argv) > 2 and sys.argv[2] == '--dump'
    p = Parser('ref')
    nrec = 0
    ser = 0.0
    t0 = time.perf_counter()
    fo = open(out, 'w') if out else None
    with open(path, encoding='utf-8', errors='replace', newline='\n') as f:
        for line in f:
            p.line(line)
            if len(p.records) >= 10000:
                nrec += len(p.records)
                if fo:
                    a = time.perf_counter()
                    fo.write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in p.records))
                    ser += time.perf_counter() - a
                elif dump:
                    for r in p.records:
                        print(json.dumps(r))
                p.records = []
    p.flush()
    nrec += len(p.records)
    if fo:
        a = time.perf_counter()
        fo.write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in p.records))
        fo.close()
        ser += time.perf_counter() - a
    elif dump:
        for r in p.records:
            print(json.dumps(r))
        return
    total = time.perf_counter() - t0
    if dump:
        return
    print('records=%d lines=%d skipped=%d malformed=%d total_s=%.3f serialise_s=%.3f'
          % (nrec, p.lines, p.skipped, p.malformed, total, ser))


if __name__ == '__main__':
    main()
