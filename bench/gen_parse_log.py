#!/usr/bin/env python3
"""bench/gen_parse_log.py PATH MB — writes the synthetic training log of the parse
benchmarks (bench/parse-vs-python, bench/parse-ab): about MB megabytes mixing
every line kind `pitstop parse` reads (DCGAN variants with their twin lines,
tagged lines, [PI-INFO] with resource lines, SageMaker plain and tuple lines,
PITSTOP JSON after timestamps, pitstop JSON Lines, seed 002 CSV, noise).
Deterministic (seeded)."""
import json, random, sys
path, mb = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)

def t(): return rnd.uniform(0.1, 9.9)

def block(k):
    out = []
    w = out.append
    kind = k % 8
    if kind == 0:   # ativ-7: bracket lines with their precise CSV twins
        w("Namespace(batch_size=32, beta1=0.5, cuda=False, dataroot='./cifar10', dataset='cifar10')")
        w("Rank: 1. World Size: 2")
        w("Rank,1,Initialization Time: %r" % t())
        el = 0.0
        for e in range(2):
            w("Rank: 1, Epoch: %d, Training ..." % e)
            for i in range(400):
                x = t(); el += x
                w("[epoch: %d/2][iteration: %d/400][rank: 1] Loss_D: %.4f, Loss_G: %.4f, D(x): 0.5879, D(G(z)): 0.5917 / 0.0163, iteration time: %.4fs" % (e, i, t(), t(), x))
                w("Rank,1,Epoch,%d,Iteration,%d,It. time,%r,Elapsed time,%r" % (e, i, x, el))
            w("[rank: 1] Epoch %d took: %.4f seconds" % (e, el))
            w("Rank,1,Epoch,%d,Epoch time,%r,Elapsed time,%r" % (e, el, el))
    elif kind == 1:  # ativ-8: bracket lines with "Iteration time" twins, some noise
        for i in range(600):
            x = t()
            w("[epoch: 0/1][iteration: %d/600][rank: 3] Loss_D: %.4f, Loss_G: %.4f, D(x): 0.5972, D(G(z)): 0.5917 / 0.0170, iteration time: %.4fs" % (i, t(), t(), x))
            w("Iteration time: %r" % x)
            if i % 50 == 0:
                w("/usr/local/lib/python3.6/dist-packages/torch/utils/data/dataloader.py:478: UserWarning: This DataLoader will create 4 worker processes in total.")
    elif kind == 2:  # colon variant and tagged CSV lines
        w("Rank: 2, Initialize time: %.4f s" % t())
        el = 0.0
        for i in range(800):
            x = t(); el += x
            if i % 2:
                w("Rank: 2, Epoch: 0, iteration: %d/800, It. time: %.4fs, Elapsed time: %.4f s" % (i, x, el))
            else:
                w("[MO833] Rank,2,Epoch,0,Iteration,%d,It. time,%r,Elapsed time,%r" % (i, x, el))
    elif kind == 3:  # Paramount Iterations library
        w("[PI-INFO] Init time,0,%f" % t())
        el = 0.0
        for i in range(1, 700):
            x = t(); el += x
            w("[PI-INFO] Paramount Iteration,0,%d,%f,%f" % (i, el, x))
            if i % 3 == 0:
                w("[RU-INFO] Resources Stats,0,%d,1.5,0.2,123456,0,0,0,100,0,0,0,0,0,0,0,10,2" % i)
        w("[PI-INFO] PI avg,0,%f,699" % t())
        w("[PI-INFO] Beta,0,%f" % t())
        w("[PI-INFO] Total time,%f" % el)
    elif kind == 4:  # SageMaker, plain and tuple
        w("('Tempo de inicializacao: ', %r)" % t())
        rt = 1621234567.0
        for e in range(3):
            for i in range(250):
                rt += t()
                w("Real time: %r" % rt)
                w("%d step training time: %rs" % (i, t()))
            w("250 steps training: %rs" % t())
            w("('Validation time: ', %r)" % t())
            w("Epoch time: %rs" % t())
        w("Duracao do treinamento:    %r" % t())
    elif kind == 5:  # PITSTOP lines from a foreign program, timestamped
        for i in range(500):
            rec = {"type": "iter", "gen": 0, "t": i * 0.1, "epoch": 0, "iter": i, "step": i, "batch": 64,
                   "step_s": t(), "data_s": 0.0002, "loss": {"d": t(), "g": t()}}
            w("2024-05-01T12:%02d:%02d.123Z PITSTOP %s" % (i // 60 % 60, i % 60, json.dumps(rec)))
            w("2024-05-01T12:%02d:%02d.124Z INFO training step %d done" % (i // 60 % 60, i % 60, i))
    elif kind == 6:  # pitstop's own JSON Lines
        for i in range(400):
            rec = {"type": "iter", "run": "own", "gen": 0, "t": i * 0.1, "epoch": 0, "iter": i, "step": i,
                   "batch": 64, "step_s": t(), "compute_s": [t(), t()], "wait_s": [0.001, 0.002], "loss": t()}
            w(json.dumps(rec, separators=(",", ":")))
    else:           # seed 002 CSV and noise
        w("total,t0,t1,t2,t3")
        for i in range(20):
            w("%r,%.4f,%.4f,%.4f,%.4f" % (t() * 1000, t() * 900, t() * 900, t() * 900, t() * 900))
        for i in range(300):
            w("INFO:root:epoch %d batch %d: nothing to see here %s" % (i, i, "x" * (i % 40)))
    return "\n".join(out) + "\n"

blocks = [block(k) for k in range(64)]
target = mb * 1000 * 1000
n = 0
with open(path, "w") as f:
    k = 0
    while n < target:
        b = blocks[k % len(blocks)]
        f.write(b)
        n += len(b)
        k += 1
