"""helpers.py — python/pitstop.py without torch.distributed: the sampler's independence of the
world size and its mid-epoch resume, the additive sample digest, the checkpoint writer made to
fail at each write, fsync and rename in turn (the previous checkpoint always loads, no temp file
stays), damaged files detected, env checks, and the stop flag on one rank."""
import os
import signal
import sys
import tempfile

sys.modules["torch"] = None  # as where torch is not installed: pitstop.py falls back to pickle
import pitstop  # noqa: E402


def sampler_and_digest():
    s = pitstop.GlobalSampler(103, 16, 7)
    assert s.iters_per_epoch == 7
    for epoch in range(3):
        used, ds = [], []
        for it in range(7):
            e, i, idx = s.batch_at(epoch * 7 + it)
            assert (e, i) == (epoch, it) and len(idx) == (7 if it == 6 else 16)
            for world in (1, 2, 3, 4):  # the ranks' slices rebuild the global batch in order
                assert sum((pitstop.shard(idx, r, world) for r in range(world)), []) == idx
            used += idx
            ds.append(pitstop.samples_digest(idx))
        assert sorted(used) == list(range(103))
        assert pitstop.add_digests(ds) == pitstop.epoch_digest(103)
    # a fresh sampler (a resumed generation) gives the same batch at the same step
    assert pitstop.GlobalSampler(103, 16, 7).batch_at(17) == s.batch_at(17)
    assert pitstop.GlobalSampler(103, 16, 7.0).batch_at(17) == s.batch_at(17)  # a seed read back from JSON
    assert s.batch_at(0)[2] != s.batch_at(7)[2][:16]  # epochs are shuffled differently
    # a repeated sample instead of a missed one changes the epoch sum
    e0 = [s.batch_at(i)[2] for i in range(7)]
    e0[3] = e0[3][:-1] + [e0[3][0]]
    assert pitstop.add_digests(map(pitstop.samples_digest, e0)) != pitstop.epoch_digest(103)
    try:
        s.check_state({"n": 103, "batch": 32, "seed": 7})
        raise AssertionError("a changed global batch was accepted")
    except pitstop.ProtocolError as e:
        assert "batch=32" in str(e)


class Boom(Exception):
    pass


def crash_safety():
    real = {"write": os.write, "fsync": os.fsync, "replace": os.replace}
    failures = 0
    for what in ("write", "fsync", "replace"):
        for k in range(1, 6):  # fail at the k-th call of `what` during one save
            d = tempfile.mkdtemp()
            ck = pitstop.Checkpoints(d)
            ck.save({"w": 1}, 1)
            ck.save({"w": 2}, 2)
            calls = [0]

            def failing(*a, _what=what, _k=k, **kw):
                calls[0] += 1
                if calls[0] == _k:
                    raise Boom(f"{_what} #{_k}")
                return real[_what](*a, **kw)
            setattr(os, what, failing)
            try:
                ck.save({"w": 3}, 3)
                hit = False
            except Boom:
                hit = True
            finally:
                for n, f in real.items():
                    setattr(os, n, f)
            if not hit:
                continue
            failures += 1
            payload, path = ck.newest_valid()
            got = payload["w"]
            assert got in (2, 3), (what, k, got)
            # the new file may be complete (renamed before the failure): the newest valid one
            assert pitstop.Checkpoints.read(os.path.join(d, "ckpt-0000000002.pt")) == {"w": 2}
            latest = open(os.path.join(d, "LATEST")).read().strip()
            assert latest in ("ckpt-0000000002.pt", "ckpt-0000000003.pt"), latest
            pitstop.Checkpoints.read(os.path.join(d, latest))
            assert not [n for n in os.listdir(d) if n.startswith(".tmp-")], (what, k, os.listdir(d))
    assert failures >= 5, failures
    # keeps two; LATEST names the newest
    d = tempfile.mkdtemp()
    ck = pitstop.Checkpoints(d)
    for w in (1, 2, 4):
        ck.save({"w": w}, w)
    assert ck.steps() == [2, 4] and open(os.path.join(d, "LATEST")).read() == "ckpt-0000000004.pt\n"
    # a temp file of a dead process is swept on the next save
    open(os.path.join(d, ".tmp-999999999-x"), "w").close()
    ck.save({"w": 5}, 5)
    assert not os.path.exists(os.path.join(d, ".tmp-999999999-x"))
    # damaged files: reasons, and resolve_resume falls back to the older one
    p5 = os.path.join(d, "ckpt-0000000005.pt")
    data = open(p5, "rb").read()
    open(p5, "wb").write(data[:-3])
    msgs = []
    got = pitstop.resolve_resume(p5, warn=msgs.append)
    assert got[0] == {"w": 4} and "truncated" in msgs[0] and p5 in msgs[0], msgs
    open(p5, "wb").write(b"garbage\n" + data)
    try:
        pitstop.Checkpoints.read(p5)
        raise AssertionError("garbage accepted")
    except pitstop.ProtocolError as e:
        assert "bad header" in str(e)
    return failures


def env_and_stop():
    bad = [({"PITSTOP_GEN": "x"}, "PITSTOP_GEN='x'"), ({"PITSTOP_NUM_NODES": "0"}, "below 1"),
           ({"PITSTOP_NODE_RANK": "2", "PITSTOP_NUM_NODES": "2"}, "not below"),
           ({"PITSTOP_NUM_NODES": "2", "PITSTOP_NODE_IPS": "a"}, "lists 1 nodes"),
           ({"PITSTOP_GRACE_S": "-1"}, "non-negative")]
    for e, want in bad:
        try:
            pitstop.Env(e)
            raise AssertionError(f"accepted {e}")
        except pitstop.ProtocolError as err:
            assert want in str(err), (e, str(err))
    e = pitstop.Env({"PITSTOP_RUN": "r", "PITSTOP_GEN": "3", "PITSTOP_NUM_NODES": "2", "PITSTOP_NODE_RANK": "1",
                     "PITSTOP_NODE_IPS": "10.0.0.1 10.0.0.2"})
    assert (e.run, e.gen, e.node_rank, e.master_addr) == ("r", 3, 1, "10.0.0.1")
    out = tempfile.TemporaryFile("w+")
    s = pitstop.Session(pitstop.Env({"PITSTOP_RUN": "r", "PITSTOP_GRACE_S": "5"}), out=out)
    assert s.agree([1.0], [0.5])[2] is False
    os.kill(os.getpid(), signal.SIGTERM)
    sums, per, stop = s.agree([1.0], [0.5, 0.25])
    assert stop and s.stop_reason == "SIGTERM" and sums == [1.0] and per == [[0.5], [0.25]]
    s.emit("iter", step=1, loss=float("nan"), step_s=0.123456789123)
    out.seek(0)
    line = out.read()
    assert line.startswith("PITSTOP {") and '"loss"' not in line and line.rstrip().endswith('"step_s":0.123456789}'), line


if __name__ == "__main__":
    sampler_and_digest()
    n = crash_safety()
    env_and_stop()
    assert pitstop.torch is None
    print(f"pitstop.py helpers: sampler, digests, {n} injected write/fsync/rename failures, env, stop flag: ok")
