"""pitstop.py — the workload side of pitstop's protocol (docs/protocol.md), in one file.

Put this directory on PYTHONPATH, or `pip install ./python` (pyproject.toml). Standard library
only, plus torch.distributed when it is importable (without it: one rank, pickle checkpoints).

What it gives a training script:
  Job            the few-lines wrapper of a DDP-style script (docs/python.md): the global sampler
                 as a loader, the gradients summed with each rank's share, the stop agreement
                 and the records every step, the checkpoints and the resume. Needs torch.
  Env            the PITSTOP_* environment the controller sets, read and checked once.
  Session        records (`PITSTOP {json}` lines on stdout, rank 0 only, flushed per line),
                 the stop agreement (SIGUSR1 / SIGTERM set a flag; `agree()` reduces it with the
                 iteration's losses and per-rank times in ONE all_reduce, so every rank sees the
                 same flag after the same step), checkpoints, and the exit code.
  Checkpoints    atomic checkpoint files with a checksum, the previous one kept, the newest
                 valid one found by name; a damaged file is reported and the previous one used.
  GlobalSampler  the global batch of any step from (seed, epoch, position), independent of the
                 world size; `shard()` gives a rank its contiguous slice.
  samples_digest the per-step sample-index digest of iter records (additive: the digests of an
                 epoch's steps sum to epoch_digest(n) exactly when every sample was used once).

Invariants: records are written by global rank 0 only; a checkpoint file is either complete
and verified or ignored; `agree()` is collective — every rank calls it once per iteration.
"""
import atexit
import hashlib
import io
import json
import math
import os
import pickle
import random
import re
import signal
import sys
import tempfile
import time
import types

try:
    import torch
    import torch.distributed as dist
except ImportError:  # the protocol works without torch: one rank, pickle checkpoints
    torch = None
    dist = None

PROTOCOL_VERSION = 1
EXIT_OK = 0          # finished, or stopped at an agreed step with a checkpoint written
EXIT_FAILED = 1      # anything went wrong: the controller restarts from the last checkpoint
EXIT_USAGE = 2       # bad arguments or environment: restarting the same command cannot help
DEFAULT_GRACE_S = 30.0
_M64 = (1 << 64) - 1


class ProtocolError(Exception):
    """Bad PITSTOP_* environment or an unusable checkpoint; the message names what and why."""


# ---------------------------------------------------------------- environment
class Env:
    """The controller's environment (docs/protocol.md). Unset variables take the values of a
    standalone run: run "local", generation 0, no checkpoint dir, no resume, one node."""

    def __init__(self, environ=None):
        e = os.environ if environ is None else environ
        self.run = e.get("PITSTOP_RUN") or "local"
        self.gen = _env_int(e, "PITSTOP_GEN", 0, 0)
        self.checkpoint_dir = e.get("PITSTOP_CHECKPOINT_DIR") or None
        self.resume = e.get("PITSTOP_RESUME") or None
        self.node_rank = _env_int(e, "PITSTOP_NODE_RANK", 0, 0)
        self.num_nodes = _env_int(e, "PITSTOP_NUM_NODES", 1, 1)
        ips = e.get("PITSTOP_NODE_IPS", "")
        self.node_ips = [s for s in re.split(r"[\s,]+", ips) if s]
        self.master_addr = e.get("PITSTOP_MASTER_ADDR") or (self.node_ips[0] if self.node_ips else "127.0.0.1")
        self.master_port = _env_int(e, "PITSTOP_MASTER_PORT", 29500, 1)
        self.grace_s = _env_float(e, "PITSTOP_GRACE_S", DEFAULT_GRACE_S)
        self.clock_s = _env_float(e, "PITSTOP_CLOCK_S", None)
        if self.node_rank >= self.num_nodes:
            raise ProtocolError(f"PITSTOP_NODE_RANK={self.node_rank} is not below PITSTOP_NUM_NODES={self.num_nodes}")
        if self.node_ips and len(self.node_ips) != self.num_nodes:
            raise ProtocolError(f"PITSTOP_NODE_IPS lists {len(self.node_ips)} nodes, PITSTOP_NUM_NODES says {self.num_nodes}")


def _env_int(e, name, default, minimum):
    v = e.get(name)
    if v is None or v == "":
        return default
    try:
        n = int(v, 10)
    except ValueError:
        raise ProtocolError(f"{name}='{v}' is not an integer") from None
    if n < minimum:
        raise ProtocolError(f"{name}={n} is below {minimum}")
    return n


def _env_float(e, name, default):
    v = e.get(name)
    if v is None or v == "":
        return default
    try:
        x = float(v)
    except ValueError:
        raise ProtocolError(f"{name}='{v}' is not a number") from None
    if not math.isfinite(x) or x < 0:
        raise ProtocolError(f"{name}={v} is not a finite non-negative number")
    return x


def process_age_s():
    """Seconds since this process started (Linux /proc; 0 elsewhere). Both clocks are the boot clock."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 starttime, ticks since boot
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - start)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


# ---------------------------------------------------------------- sample digests
def mix64(i):
    """splitmix64's finaliser of i: the per-sample hash of samples_digest (docs/protocol.md)."""
    z = (i + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def digest_sum(indices):
    """The additive digest of sample indices as an integer: sum of mix64(i) modulo 2^64."""
    s = 0
    for i in indices:
        s = (s + mix64(int(i))) & _M64
    return s


def samples_digest(indices):
    """An iter record's "samples_digest": 16 lowercase hex digits of digest_sum(indices)."""
    return f"{digest_sum(indices):016x}"


def epoch_digest(n):
    """The digest every epoch of n samples must sum to: samples_digest(range(n))."""
    return samples_digest(range(n))


def add_digests(hexes):
    """Sum of hex digests modulo 2^64, as hex (how a controller checks one epoch)."""
    s = 0
    for h in hexes:
        s = (s + int(h, 16)) & _M64
    return f"{s:016x}"


# ---------------------------------------------------------------- sampler
class GlobalSampler:
    """Global batches of an epoch-based job: epoch e is a permutation of range(n) drawn from
    (seed, e); iteration i of the epoch takes its positions [i*batch, (i+1)*batch), the last one
    short when batch does not divide n, or dropped with drop_last (as the C engine's sampler,
    docs/data.md). A step maps to (epoch, i) by step // iters_per_epoch, so its state is the step
    alone and resuming mid-epoch needs no replay. None of it depends on the world size:
    `shard()` splits a global batch among the ranks afterwards."""

    def __init__(self, n, batch, seed, drop_last=False):
        if n < 1 or batch < 1:
            raise ProtocolError(f"sampler needs n >= 1 and batch >= 1 (n={n}, batch={batch})")
        if drop_last and batch > n:
            raise ProtocolError(f"drop_last with a global batch of {batch} over {n} samples leaves no batch at all")
        if isinstance(seed, float) and seed.is_integer():  # a seed read back from JSON as 1.2345e+15
            seed = int(seed)
        self.n, self.batch, self.seed, self.drop_last = n, batch, seed, bool(drop_last)
        self.iters_per_epoch = n // batch if drop_last else -(-n // batch)
        self._perm_epoch, self._perm = None, None

    def permutation(self, epoch):
        if self._perm_epoch != epoch:
            p = list(range(self.n))
            random.Random(f"pitstop-sampler:{self.seed}:{epoch}").shuffle(p)
            self._perm_epoch, self._perm = epoch, p
        return self._perm

    def position(self, step):
        """(epoch, iteration within the epoch) of a global step."""
        return divmod(step, self.iters_per_epoch)

    def batch_at(self, step):
        """(epoch, iter, global sample indices) of a global step."""
        epoch, it = self.position(step)
        lo = it * self.batch
        return epoch, it, self.permutation(epoch)[lo:lo + self.batch]

    def state(self, next_step):
        return {"n": self.n, "batch": self.batch, "seed": self.seed, "drop_last": self.drop_last,
                "next_step": next_step}

    def batch_sizes(self):
        """The distinct global batch sizes of an epoch (the full one, and the short last one)."""
        last = self.n - (self.iters_per_epoch - 1) * self.batch
        return sorted({self.batch, min(last, self.batch)})

    def check_state(self, st):
        """Raise ProtocolError unless a checkpoint's sampler state fits this sampler (the global
        batch and the data never change across generations)."""
        for k in ("n", "batch", "seed", "drop_last"):
            if st.get(k, False if k == "drop_last" else None) != getattr(self, k):
                raise ProtocolError(f"checkpoint sampler has {k}={st.get(k)}, this run {k}={getattr(self, k)}:"
                                    " the global batch and the data must not change across generations")


def split_bounds(count, parts, k):
    """[lo, hi) of part k when count items are split into `parts` contiguous near-equal parts."""
    return count * k // parts, count * (k + 1) // parts


def shard(seq, rank, world):
    """Rank `rank`'s contiguous slice of a global batch split over `world` ranks."""
    lo, hi = split_bounds(len(seq), world, rank)
    return seq[lo:hi]


# ---------------------------------------------------------------- checkpoints
_CKPT_MAGIC = b"PITSTOP-CKPT"
_CKPT_RE = re.compile(r"^ckpt-(\d{10})\.pt$")
_TMP_RE = re.compile(r"^\.tmp-(\d+)-")


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path, data):
    """Write bytes to path atomically: a temp file in the same directory named after this pid,
    fsync, rename over path, fsync of the directory. On any failure path is untouched and the
    temp file removed. Returns the number of bytes written."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{os.getpid()}-", dir=d)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
        _fsync_dir(d)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return len(data)


def _serialize(obj):
    buf = io.BytesIO()
    if torch is not None:
        torch.save(obj, buf)
    else:
        pickle.dump(obj, buf, protocol=pickle.HIGHEST_PROTOCOL)
    return buf.getvalue()


def _deserialize(data):
    if torch is not None:
        return torch.load(io.BytesIO(data), map_location="cpu")
    return pickle.loads(data)


class Checkpoints:
    """A checkpoint directory: files ckpt-<step, 10 digits>.pt, each a header line
    `PITSTOP-CKPT 1 <payload bytes> <sha256 hex>` then the payload (torch.save, or pickle
    without torch); LATEST names the newest complete one (written atomically after it).
    The newest `keep` (>= 2) files are kept, so the previous checkpoint survives until the
    next one is complete; temp files left by dead processes are removed on save."""

    def __init__(self, directory, keep=2):
        if keep < 2:
            raise ProtocolError("keep at least 2 checkpoints (the previous one is the fallback)")
        self.dir, self.keep = directory, keep

    @staticmethod
    def name(step):
        return f"ckpt-{step:010d}.pt"

    def save(self, payload, step):
        """Write payload (a dict) as the checkpoint of `step` (the number of steps done).
        Returns (path, bytes)."""
        os.makedirs(self.dir, exist_ok=True)
        self._sweep_temps()
        body = _serialize(payload)
        head = b"%s %d %d %s\n" % (_CKPT_MAGIC, PROTOCOL_VERSION, len(body),
                                   hashlib.sha256(body).hexdigest().encode())
        path = os.path.join(self.dir, self.name(step))
        n = atomic_write(path, head + body)
        atomic_write(os.path.join(self.dir, "LATEST"), (self.name(step) + "\n").encode())
        for old in self.steps()[:-self.keep]:
            try:
                os.unlink(os.path.join(self.dir, self.name(old)))
            except FileNotFoundError:
                pass
        return path, n

    def steps(self):
        """Steps of the checkpoint files present, ascending (valid or not)."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(_CKPT_RE.match, names) if m)

    def _sweep_temps(self):
        for nm in os.listdir(self.dir):
            m = _TMP_RE.match(nm)
            if m and not _pid_alive(int(m.group(1))):
                try:
                    os.unlink(os.path.join(self.dir, nm))
                except OSError:
                    pass

    @staticmethod
    def read(path):
        """Verify and load one checkpoint file. Raises ProtocolError naming the path and why."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ProtocolError(f"checkpoint '{path}': {e.strerror}") from None
        nl = data.find(b"\n")
        parts = data[:nl].split() if 0 < nl <= 200 else []
        if len(parts) != 4 or parts[0] != _CKPT_MAGIC:
            raise ProtocolError(f"checkpoint '{path}': not a pitstop checkpoint (bad header)")
        if parts[1] != str(PROTOCOL_VERSION).encode():
            raise ProtocolError(f"checkpoint '{path}': format version {parts[1].decode(errors='replace')}, expected {PROTOCOL_VERSION}")
        body = data[nl + 1:]
        want = int(parts[2])
        if len(body) != want:
            raise ProtocolError(f"checkpoint '{path}': truncated ({len(body)} of {want} payload bytes)")
        if hashlib.sha256(body).hexdigest().encode() != parts[3]:
            raise ProtocolError(f"checkpoint '{path}': checksum mismatch (the file is corrupted)")
        try:
            return _deserialize(body)
        except Exception as e:  # a verified payload that does not load: another program's file
            raise ProtocolError(f"checkpoint '{path}': cannot be loaded ({e})") from None

    def newest_valid(self, below=None, warn=None):
        """(payload, path) of the newest checkpoint that verifies, optionally of a step below
        `below`; None when there is none. Each damaged file is reported through warn(msg)."""
        for step in reversed(self.steps()):
            if below is not None and step >= below:
                continue
            path = os.path.join(self.dir, self.name(step))
            try:
                return self.read(path), path
            except ProtocolError as e:
                if warn:
                    warn(f"{e}; trying the previous checkpoint")
        return None


def resolve_resume(resume, warn=None):
    """PITSTOP_RESUME → (payload, path), or None when resume is empty. A directory means its
    newest valid checkpoint; a file is used if it verifies, otherwise the newest valid older one
    in its directory (each failure reported through warn). Raises ProtocolError when nothing
    usable is left."""
    if not resume:
        return None
    if os.path.isdir(resume):
        got = Checkpoints(resume).newest_valid(warn=warn)
        if got is None:
            raise ProtocolError(f"PITSTOP_RESUME='{resume}': no valid checkpoint in the directory")
        return got
    try:
        return Checkpoints.read(resume), resume
    except ProtocolError as e:
        m = _CKPT_RE.match(os.path.basename(resume))
        if not m:
            raise
        if warn:
            warn(f"{e}; trying the previous checkpoint")
        got = Checkpoints(os.path.dirname(resume) or ".").newest_valid(below=int(m.group(1)), warn=warn)
        if got is None:
            raise ProtocolError(f"PITSTOP_RESUME='{resume}': it and every older checkpoint beside it are unusable") from None
        return got


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------- records
def _num(x):
    """9 significant digits, as docs/records.md asks."""
    return float(f"{x:.9g}")


def _clean(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return _num(v) if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def format_record(rec):
    """The protocol line of one record (no newline). Top-level fields that are None or not
    finite are left out (records never carry null there)."""
    out = {k: _clean(v) for k, v in rec.items()}
    out = {k: v for k, v in out.items() if v is not None}
    return "PITSTOP " + json.dumps(out, separators=(",", ":"))


# ---------------------------------------------------------------- session
class Session:
    """One generation of a workload. Create it first thing (it installs the SIGUSR1 / SIGTERM
    handlers), call init_process_group() if distributed, then per iteration agree() and
    record_iter(); checkpoint() when agree() said stop (and whenever else you like); return
    finish() as the exit code.

    Owns: the signal handlers it installed (signals=False installs none: a stop can then not be
    asked), the process group when it initialised it. `out` (default sys.stdout) is borrowed;
    records=False writes no records. `group`: the process group of its own collectives (None:
    the default one; Job sets a gloo group when the default one is NCCL)."""

    def __init__(self, env=None, out=None, signals=True, records=True):
        self.env = env if env is not None else Env()
        self.out = out if out is not None else sys.stdout
        self._age0 = process_age_s()          # process start → now
        self._m0 = time.monotonic()
        self._base_t = self.env.clock_s if self.env.clock_s is not None else 0.0
        self.rank, self.world = 0, 1
        self.rdzv_s = 0.0
        self._own_pg = False
        self.stop_signal = None                # "SIGUSR1" / "SIGTERM" received on THIS rank
        self.stop_reason = None                # agreed: the signal some rank received
        self.deadline = None                   # monotonic time the grace period ends (SIGTERM)
        self.first_iter_done = False
        self.ckpt = Checkpoints(self.env.checkpoint_dir) if self.env.checkpoint_dir else None
        self.records = records
        self.group = None
        self._old_handlers = {}
        if signals:
            for sig in (signal.SIGUSR1, signal.SIGTERM):
                self._old_handlers[sig] = signal.signal(sig, self._on_signal)

    def restore_signals(self):
        """Put back the handlers this session replaced."""
        for sig, h in self._old_handlers.items():
            signal.signal(sig, h if h is not None else signal.SIG_DFL)
        self._old_handlers = {}

    # -- signals and the agreement
    def _on_signal(self, signum, _frame):
        if signum == signal.SIGTERM:
            if self.deadline is None:
                self.deadline = time.monotonic() + self.env.grace_s
            self.stop_signal = "SIGTERM"
        elif self.stop_signal is None:
            self.stop_signal = "SIGUSR1"

    def _flag(self):
        return {None: 0.0, "SIGUSR1": 1.0, "SIGTERM": 2.0}[self.stop_signal]

    def agree(self, sums=(), per_rank=()):
        """The once-per-iteration collective: ONE all_reduce (SUM, float64) of
        [sums..., stop flag, per_rank slots...]. `sums`: values added over ranks (loss parts);
        `per_rank`: k values of this rank (e.g. compute_s, wait_s), returned as k lists of
        `world` values. Returns (summed list, per-rank lists, stop). Every rank gets the same
        stop, so all stop after the same step; SIGTERM anywhere wins over SIGUSR1."""
        sums, per_rank = list(sums), list(per_rank)
        k, ns = len(per_rank), len(sums)
        if self.world == 1:
            flag, got_sums, slots = self._flag(), sums, [[v] for v in per_rank]
        else:
            v = torch.zeros(ns + 1 + k * self.world, dtype=torch.float64)
            if ns:
                v[:ns] = torch.tensor(sums, dtype=torch.float64)
            # the flag slot: SIGUSR1 adds 1, SIGTERM adds world+1, so the sum exceeds world
            # exactly when some rank received SIGTERM (SIGUSR1s alone add up to at most world)
            v[ns] = (self.world + 1) if self._flag() == 2.0 else self._flag()
            for j, x in enumerate(per_rank):
                v[ns + 1 + j * self.world + self.rank] = x
            dist.all_reduce(v, op=dist.ReduceOp.SUM, group=self.group)
            got = v.tolist()
            got_sums = got[:ns]
            total = got[ns]
            flag = 2.0 if total > self.world else (1.0 if total > 0 else 0.0)
            slots = [got[ns + 1 + j * self.world: ns + 1 + (j + 1) * self.world] for j in range(k)]
        self.first_iter_done = True
        if flag and self.stop_reason is None:
            self.stop_reason = "SIGTERM" if flag == 2.0 else "SIGUSR1"
        return got_sums, slots, bool(flag)

    # -- distributed start
    def init_process_group(self, backend="gloo", **kw):
        """torch.distributed.init_process_group from the launcher's env:// variables (RANK,
        WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them), timed as rdzv_s. With
        WORLD_SIZE unset or 1 and no torch, stays a single rank. A process group the program
        initialised itself is used as it is."""
        ws = int(os.environ.get("WORLD_SIZE", "1"))
        ready = dist is not None and dist.is_available() and dist.is_initialized()
        if not ready and (ws > 1 or (dist is not None and dist.is_available() and "MASTER_ADDR" in os.environ)):
            if dist is None:
                raise ProtocolError(f"WORLD_SIZE={ws} but torch.distributed cannot be imported")
            t = time.monotonic()
            dist.init_process_group(backend=backend, **kw)
            self.rdzv_s = time.monotonic() - t
            self._own_pg = True
        if dist is not None and dist.is_available() and dist.is_initialized():
            self.rank, self.world = dist.get_rank(), dist.get_world_size()
        return self.rank, self.world

    def broadcast_object(self, obj):
        """Rank 0's obj on every rank (a checkpoint read by rank 0 only: no shared file system)."""
        if self.world == 1:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]

    # -- records
    def now(self):
        """Record time t: seconds since the run started (PITSTOP_CLOCK_S at this process's
        start, or the resumed checkpoint's t, plus this process's monotonic time)."""
        return self._base_t + (time.monotonic() - self._m0) + self._age0

    def emit(self, type_, **fields):
        """Write one record (global rank 0 only)."""
        if self.rank != 0 or not self.records:
            return
        rec = {"type": type_, "run": self.env.run, "gen": self.env.gen, "t": self.now()}
        rec.update(fields)
        self.out.write(format_record(rec) + "\n")
        self.out.flush()

    def age_s(self):
        """Seconds since this process started."""
        return self._age0 + (time.monotonic() - self._m0)

    def record_init(self, config, init_s=None):
        """The init record, at the first iteration: init_s is process start → the first
        iteration's start (default: now)."""
        self.emit("init", init_s=self.age_s() if init_s is None else init_s, rdzv_s=self.rdzv_s,
                  ranks=self.world, nodes=self.env.num_nodes, config=config)

    def record_iter(self, step, epoch, it, batch, step_s, data_s, compute_s, wait_s, loss, indices):
        self.emit("iter", epoch=epoch, iter=it, step=step, batch=batch, step_s=step_s, data_s=data_s,
                  compute_s=list(compute_s), wait_s=list(wait_s), loss=loss,
                  samples_digest=samples_digest(indices))

    # -- checkpoints
    def warn(self, msg):
        """One line on stderr, `pitstop: …` (rank 0 only)."""
        if self.rank == 0:
            print(f"pitstop: {msg}", file=sys.stderr, flush=True)

    def checkpoint(self, state, step, sampler_state=None):
        """Rank 0 writes `state` as the checkpoint after `step` steps (the next step to run);
        other ranks return at once. Writes a checkpoint record. Needs PITSTOP_CHECKPOINT_DIR."""
        if self.ckpt is None:
            raise ProtocolError("PITSTOP_CHECKPOINT_DIR is not set: nowhere to checkpoint")
        if self.rank != 0:
            return None
        t0 = time.monotonic()
        payload = {"pitstop": {"version": PROTOCOL_VERSION, "run": self.env.run, "gen": self.env.gen,
                               "step": step, "t": self.now(), "sampler": sampler_state},
                   "state": state}
        path, n = self.ckpt.save(payload, step)
        self.emit("checkpoint", ckpt_s=time.monotonic() - t0, path=os.path.abspath(path), bytes=n, step=step)
        return path

    def resume(self):
        """The checkpoint named by PITSTOP_RESUME, read by rank 0 and broadcast: (state, meta)
        with meta = {"run","gen","step","t","sampler"}, or (None, None) for a fresh start.
        A damaged file is reported (path and reason) and the previous one used. Also moves the
        record clock to the checkpoint's t when PITSTOP_CLOCK_S is not set."""
        got, err = None, None
        if self.rank == 0 and self.env.resume:
            try:
                got = resolve_resume(self.env.resume, warn=self.warn)
            except ProtocolError as e:
                err = str(e)
            if got is not None:
                self.warn(f"resuming from '{got[1]}' (step {got[0]['pitstop']['step']})")
        got, err = self.broadcast_object((got[0] if got else None, err))
        if err:
            raise ProtocolError(err)
        if got is None:
            return None, None
        meta = got["pitstop"]
        if self.env.clock_s is None:
            self._base_t = meta.get("t", 0.0)
        return got["state"], meta

    # -- the end
    def finish(self, step=None):
        """The end record and the exit code: 0 after a finished job or an agreed stop (its
        checkpoint written by then). Leaves the process group this session created."""
        total = self.now() - self._base_t
        self.emit("end", total_s=total, status="stopped" if self.stop_reason else "done", stop=self.stop_reason)
        if self._own_pg and dist.is_initialized():
            dist.destroy_process_group()
        if self.stop_reason:  # the last word before exit 0: a launcher or test may rely on it
            late = self.deadline is not None and time.monotonic() > self.deadline
            print(f"pitstop: rank {self.rank} stopped with {step} steps done ({self.stop_reason}"
                  f"{', past the grace period' if late else ''})", file=sys.stderr, flush=True)
        return EXIT_OK


# ---------------------------------------------------------------- Job: the few-lines wrapper
def _usage(msg):
    """Bad environment, data or checkpoint: one line on stderr and exit 2 (docs/protocol.md §4)."""
    print(f"pitstop: {msg}", file=sys.stderr, flush=True)
    raise SystemExit(EXIT_USAGE)


def _destroy_pg():
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _inner(obj):
    """The module inside a DistributedDataParallel / DataParallel wrapper, else obj: checkpoints
    hold the bare module's state, so they load with or without the wrapper."""
    return obj.module if torch is not None and isinstance(
        obj, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)) else obj


def _to_cpu(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        out = type(x)((k, _to_cpu(v)) for k, v in x.items())
        if hasattr(x, "_metadata"):  # a module's state_dict: load_state_dict reads its versions
            out._metadata = x._metadata
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cpu(v) for v in x)
    return x


def _settle_workers():
    """At exit, while the interpreter still lives: a moment for gloo's worker threads to finish
    with our comm hook's Python objects. The hook's callback runs on a worker thread, which then
    drops the callback's references; a worker still doing that when the interpreter finalizes
    cannot take the GIL, is ended by pthread_exit, and the process aborts ("terminate called
    without an active exception": 4 of 80 two-rank runs of tests/python/job_test.py's ddp case on
    a loaded 2-core machine, the worker thread caught 'Garbage-collecting'; 0 of 80 with this wait)."""
    time.sleep(0.1)


_settle_workers.registered = False


def _weighted_hook(state, bucket):
    """DDP comm hook: each rank's gradient (of a loss averaged over its own slice) weighed by its
    share of the global batch, then summed: the gradient of the global batch's mean, also when
    the slices differ in size (DDP's own hook averages over ranks)."""
    job, group = state
    t = bucket.buffer()
    t.mul_(job._share)
    fut = dist.all_reduce(t, op=dist.ReduceOp.SUM, group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


class _EpochSampler:
    """What a DataLoader-shaped loop calls on `loader.sampler`: set_epoch is a no-op, the epoch
    is the job's (its step)."""

    def set_epoch(self, epoch):
        pass


class _Loader:
    """job.loader: iterating it runs the rest of the current epoch, one global batch a step,
    this rank's slice of each (docs/python.md). len() is the epoch's steps (all ranks)."""

    def __init__(self, job, kw):
        self.job, self.kw = job, kw
        self.dataset = job.dataset
        self.sampler = _EpochSampler()

    def __len__(self):
        return self.job.sampler.iters_per_epoch

    def __iter__(self):
        return self.job._steps(self.kw)


class Job:
    """A DDP-style training script made resizable under `pitstop run` (docs/python.md):

        job = pitstop.Job(dataset, global_batch)     # after the script's init_process_group, if any
        loader = job.loader                           # instead of DataLoader(dataset, ...)
        job.track(model=model, optimizer=optimizer)   # once they exist: resumed, or made equal on all ranks
        for epoch in job.epochs(N):
            for i, batch in enumerate(loader, job.iter):
                ...                                   # the script's own step, unchanged

    What it does:
      - process group: joins torchrun's (env://, gloo unless backend= says otherwise) when the
        script has not initialised one; without torchrun it is one rank;
      - global sampler: step s trains on the global batch GlobalSampler(len(dataset), batch,
        seed).batch_at(s), this rank its contiguous slice; the batch never changes, so across any
        change of the number of ranks every sample is used once per epoch;
      - gradients: a tracked optimizer's step() first sums its parameters' gradients over the
        ranks, each weighed by its slice's share of the global batch (a tracked
        DistributedDataParallel model gets the same weighing as its comm hook, and its
        optimizer is left to it);
      - every step: one small all_reduce (the stop agreement, the per-rank times, the losses
        given to log()), the records (`PITSTOP {json}` lines on rank 0's stdout);
      - checkpoints: the tracked objects' state_dicts, the step and the sampler, written atomically
        by rank 0 (Checkpoints) at the agreed stop, at each epoch's end (or every
        checkpoint_every steps) and at the end; at the start the newest one is loaded (on every
        rank: rank 0 reads and broadcasts), and the job goes on at its step;
      - a stop (SIGUSR1, SIGTERM on any rank): all ranks finish the same step, rank 0 writes the
        checkpoint, the checkpoint and end records, and every rank exits 0 (SystemExit).

    Without `pitstop run` (no PITSTOP_RUN): no records unless records=True; checkpoints, the
    stop handlers and the resume only with checkpoint_dir= (then a restart, e.g. torchrun's
    --max-restarts, resumes from the newest checkpoint there). Under `pitstop run`,
    PITSTOP_CHECKPOINT_DIR and PITSTOP_RESUME decide.

    Bad environment, data or checkpoint: `pitstop: ...` on stderr and exit 2 (SystemExit), as the
    protocol asks. Invariants: `step` is the next global step and only grows by one per completed
    step; a resumed job has loaded every state its checkpoint holds before its first step; every
    rank runs the same steps."""

    def __init__(self, dataset, batch_size, *, seed=None, drop_last=False, checkpoint_dir=None,
                 checkpoint_every=None, backend=None, records=None, reseed=True, **loader_kw):
        if torch is None:
            _usage("pitstop.Job needs torch (python3-torch)")
        for k in ("batch_size", "shuffle", "sampler", "batch_sampler", "drop_last"):
            if k in loader_kw:
                raise TypeError(f"pitstop.Job: the loader's {k} is the job's (docs/python.md)")
        try:
            env = Env()
        except ProtocolError as e:
            _usage(str(e))
        managed = bool(os.environ.get("PITSTOP_RUN"))
        if not env.checkpoint_dir and checkpoint_dir:
            env.checkpoint_dir = os.fspath(checkpoint_dir)
            if not managed and Checkpoints(env.checkpoint_dir).steps():
                env.resume = env.checkpoint_dir   # a restart outside pitstop: the newest one there
        self.env = env
        self.s = Session(env, signals=bool(env.checkpoint_dir), records=managed if records is None else records)
        self.s.init_process_group(backend or "gloo")
        if self.s._own_pg:
            atexit.register(_destroy_pg)
        self.rank, self.world = self.s.rank, self.s.world
        if self.world > 1 and dist.get_backend() != "gloo":
            self.s.group = dist.new_group(backend="gloo")  # the small collectives stay on the CPU
        try:
            n = len(dataset)
        except TypeError:
            _usage("pitstop.Job needs a dataset with a length (a map-style torch Dataset)")
        if checkpoint_every is not None and checkpoint_every < 1:
            _usage(f"checkpoint_every={checkpoint_every} is below 1")
        try:
            state, meta = self.s.resume()
        except ProtocolError as e:
            _usage(str(e))
        if meta is not None:
            st = meta.get("sampler") or {}
            seed = st.get("seed") if seed is None else seed
        elif seed is None:   # rank 0's: the script's torch.manual_seed, or torch's own random one,
            # below 2^53 so that the records' JSON numbers (doubles to most readers) keep it exact
            seed = self.s.broadcast_object(torch.initial_seed() % (1 << 53))
        try:
            self.sampler = GlobalSampler(n, batch_size, seed, drop_last)
            if meta is not None:
                self.sampler.check_state(meta.get("sampler") or {})
        except ProtocolError as e:
            _usage(str(e))
        small = self.sampler.batch_sizes()[0]
        if small < self.world:
            _usage(f"a global batch of {small} samples (of {n} samples in batches of {batch_size}) leaves some of "
                   f"the {self.world} ranks without a sample: use a larger batch, or drop_last=True")
        self.dataset, self.seed, self.every, self.reseed = dataset, seed, checkpoint_every, reseed
        self.step = self.start = meta["step"] if meta is not None else 0
        self.total = None
        self.n_epochs = None
        self._state = state                    # the checkpoint's states not yet loaded
        self._objs = {}
        self._share, self._wait, self._losses = 1.0, 0.0, {}
        self._saved = self.start if meta is not None else None
        self._epoch_t0 = None
        self._init_sent = False
        loader_kw.setdefault("pin_memory", torch.cuda.is_available())
        self.loader = _Loader(self, loader_kw)

    # -- where the job is
    @property
    def epoch(self):
        """The epoch of the next step."""
        return self.step // self.sampler.iters_per_epoch

    @property
    def iter(self):
        """The next step's iteration within its epoch (enumerate(job.loader, job.iter))."""
        return self.step % self.sampler.iters_per_epoch

    # -- what it saves and synchronises
    def track(self, **objs):
        """Name the objects a checkpoint holds (anything with state_dict / load_state_dict:
        models, optimizers, schedulers, scalers). A resumed job loads them from the checkpoint
        now; a fresh one gives every rank rank 0's model parameters. An optimizer's step() is
        made to sum its gradients over the ranks first, unless all its parameters are in a
        tracked DistributedDataParallel model (which gets the weighing comm hook instead)."""
        for name, o in objs.items():
            if not (hasattr(o, "state_dict") and hasattr(o, "load_state_dict")):
                raise TypeError(f"pitstop.Job.track: {name} has no state_dict/load_state_dict")
        self._objs.update(objs)
        if self._state is not None:
            missing = [k for k in objs if k not in self._state]
            if missing:
                _usage(f"the checkpoint holds no state for {', '.join(missing)} (it holds {', '.join(sorted(self._state)) or 'none'})")
            for k, o in objs.items():
                _inner(o).load_state_dict(self._state.pop(k))
        elif self.world > 1:
            mods = [k for k, o in objs.items() if isinstance(o, torch.nn.Module)]
            got = self.s.broadcast_object({k: _to_cpu(_inner(objs[k]).state_dict()) for k in mods}
                                          if self.rank == 0 else None)
            for k in mods:
                _inner(objs[k]).load_state_dict(got[k])
        if self.world == 1:
            return
        ddps = [o for o in self._objs.values() if isinstance(o, torch.nn.parallel.DistributedDataParallel)]
        in_ddp = {id(p) for m in ddps for p in m.parameters()}
        for m in ddps:
            if not getattr(m, "_pitstop_hook", False):
                m.register_comm_hook((self, m.process_group), _weighted_hook)
                m._pitstop_hook = True
                if not _settle_workers.registered:
                    atexit.register(_settle_workers)  # runs before _destroy_pg (registered earlier)
                    _settle_workers.registered = True
        for o in objs.values():
            if isinstance(o, torch.optim.Optimizer) and not getattr(o, "_pitstop_sync", False):
                params = [p for g in o.param_groups for p in g["params"]]
                if not all(id(p) in in_ddp for p in params):
                    self._sync_optimizer(o, params)

    def _sync_optimizer(self, opt, params):
        orig, job = opt.step, self

        def step(_opt, *a, **kw):
            job._allreduce_grads(params)
            return orig(*a, **kw)
        if getattr(orig, "_with_counter", False):  # an LR scheduler's wrapper stays visible to it
            step._with_counter = True
        opt.step = types.MethodType(step, opt)
        opt._pitstop_sync = True

    def _allreduce_grads(self, params):
        t0 = time.perf_counter()
        groups = {}
        for p in params:
            if p.grad is not None:
                groups.setdefault((p.grad.device, p.grad.dtype), []).append(p.grad)
        for grads in groups.values():
            flat = torch.cat([g.reshape(-1) for g in grads])
            flat.mul_(self._share)
            dist.all_reduce(flat, op=dist.ReduceOp.SUM)
            at = 0
            for g in grads:
                g.copy_(flat[at:at + g.numel()].view_as(g))
                at += g.numel()
        self._wait += time.perf_counter() - t0

    def log(self, **losses):
        """This step's losses (numbers or one-element tensors, each a mean over this rank's
        slice): the iter record carries their global-batch mean. Every rank names the same ones."""
        for k, v in losses.items():
            self._losses[k] = float(v.item() if hasattr(v, "item") else v)

    # -- the loops
    def epochs(self, n):
        """The epochs left of an n-epoch job (from the resumed step's epoch). When the loop is
        done: the last checkpoint, the end record, and the signal handlers put back."""
        self.n_epochs, self.total = n, n * self.sampler.iters_per_epoch
        try:
            for e in range(min(self.epoch, n), n):
                yield e
            if self._saved != self.step:
                self._save()
            self.s.emit("end", total_s=self.s.age_s(), status="done")
        finally:  # also when the loop ends by an exception, or is left by a break
            self.s.restore_signals()

    def _steps(self, kw):
        smp, t_start = self.sampler, time.perf_counter()
        ipe = smp.iters_per_epoch
        epoch = self.epoch
        end = (epoch + 1) * ipe if self.total is None else min((epoch + 1) * ipe, self.total)
        steps = list(range(self.step, end))
        if not steps:
            return
        if self._state:
            _usage(f"the checkpoint holds {', '.join(sorted(self._state))}, which job.track() was not given")
        glob = [smp.batch_at(st)[2] for st in steps]
        mine = [shard(idx, self.rank, self.world) for idx in glob]
        dl = torch.utils.data.DataLoader(self.dataset, batch_sampler=mine, **kw)
        if self._epoch_t0 is None or steps[0] % ipe == 0:
            self._epoch_t0 = t_start
        for k, batch in enumerate(dl):
            st = steps[k]
            if st != self.step:
                raise RuntimeError(f"pitstop.Job: step {st} reached at step {self.step}: "
                                   "iterate job.loader once at a time")
            t_got = time.perf_counter()
            if st == self.start:  # the init record before the script's own first print of the step,
                # so that pitstop run knows from its first line that this workload speaks the protocol
                self._init_s = self.s.age_s() - (t_got - t_start)
                if not self._init_sent:  # once: a script may draw a first batch and drop the loader
                    self._init_sent = True  # (the DDP tutorial's len(next(iter(loader))[0]))
                    self.s.record_init(self._config(), init_s=self._init_s)
                if self.reseed:  # each rank and generation its own random stream (noise, dropout)
                    h = hashlib.sha256(f"pitstop-rng:{self.seed}:{self.rank}:{st}".encode()).digest()
                    torch.manual_seed(int.from_bytes(h[:8], "little") >> 1)
            self._share, self._wait, self._losses = len(mine[k]) / len(glob[k]), 0.0, {}
            yield batch
            self._end_step(st, glob[k], t_start, t_got)
            t_start = time.perf_counter()

    def _end_step(self, st, idx, t_start, t_got):
        compute = time.perf_counter() - t_got - self._wait
        names = sorted(self._losses)
        sums, (comp, wait), stop = self.s.agree([self._share * self._losses[k] for k in names],
                                                [compute, self._wait])
        step_s = time.perf_counter() - t_start
        stop = stop and self.step + 1 != self.total  # a stop after the last step: the job is done
        loss = None if not names else sums[0] if names == ["loss"] else dict(zip(names, sums))
        epoch, it = self.sampler.position(st)
        self.s.record_iter(st, epoch, it, len(idx), step_s, t_got - t_start, comp, wait, loss, idx)
        self.step = st + 1
        if self.step % self.sampler.iters_per_epoch == 0 or self.step == self.total:
            self.s.emit("epoch", epoch=epoch, epoch_s=time.perf_counter() - self._epoch_t0)
            self._epoch_t0 = time.perf_counter()
            if self.every is None and not stop:
                self._save()
        if stop:
            self._save()
            self.s.emit("end", total_s=self.s.age_s(), status="stopped", stop=self.s.stop_reason)
            late = self.s.deadline is not None and time.monotonic() > self.s.deadline
            print(f"pitstop: rank {self.rank} stopped with {self.step} steps done ({self.s.stop_reason}"
                  f"{', past the grace period' if late else ''})", file=sys.stderr, flush=True)
            _destroy_pg()  # the process ends here: gloo's threads must be joined first (else abort)
            raise SystemExit(EXIT_OK)
        if self.every is not None and self.step % self.every == 0:
            self._save()

    def _save(self):
        """The tracked state after self.step steps, by rank 0 (nothing without a checkpoint dir)."""
        if self.s.ckpt is None:
            return
        self._saved = self.step
        if self.rank == 0:
            self.s.checkpoint({k: _inner(o).state_dict() for k, o in self._objs.items()},
                              self.step, self.sampler.state(self.step))

    def _config(self):
        c = {"model": os.path.basename(sys.argv[0]) or "python", "framework": "pytorch " + torch.__version__,
             "samples": self.sampler.n, "batch": self.sampler.batch, "iters_per_epoch": self.sampler.iters_per_epoch,
             "seed": self.seed, "drop_last": self.sampler.drop_last, "start_step": self.start,
             "threads": torch.get_num_threads()}
        if self.total is not None:
            c.update(planned_iters=self.total, epochs=self.n_epochs)
        return c
