"""pitstop.py — the workload side of pitstop's protocol (docs/protocol.md), in one file.

Put this directory on PYTHONPATH; nothing to install. Standard library only, plus
torch.distributed when it is importable (without it: one rank, pickle checkpoints).

What it gives a training script:
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
    short when batch does not divide n. A step maps to (epoch, i) by step // iters_per_epoch, so
    its state is the step alone and resuming mid-epoch needs no replay. None of it depends on
    the world size: `shard()` splits a global batch among the ranks afterwards."""

    def __init__(self, n, batch, seed):
        if n < 1 or batch < 1:
            raise ProtocolError(f"sampler needs n >= 1 and batch >= 1 (n={n}, batch={batch})")
        self.n, self.batch, self.seed = n, batch, seed
        self.iters_per_epoch = -(-n // batch)
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
        return {"n": self.n, "batch": self.batch, "seed": self.seed, "next_step": next_step}

    def check_state(self, st):
        """Raise ProtocolError unless a checkpoint's sampler state fits this sampler (the global
        batch and the data never change across generations)."""
        for k in ("n", "batch", "seed"):
            if st.get(k) != getattr(self, k):
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

    Owns: the signal handlers it installed, the process group when it initialised it.
    `out` (default sys.stdout) is borrowed."""

    def __init__(self, env=None, out=None):
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
        signal.signal(signal.SIGUSR1, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)

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
            dist.all_reduce(v, op=dist.ReduceOp.SUM)
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
        WORLD_SIZE unset or 1 and no torch, stays a single rank."""
        ws = int(os.environ.get("WORLD_SIZE", "1"))
        if ws > 1 or (dist is not None and dist.is_available() and "MASTER_ADDR" in os.environ):
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
        dist.broadcast_object_list(box, src=0)
        return box[0]

    # -- records
    def now(self):
        """Record time t: seconds since the run started (PITSTOP_CLOCK_S at this process's
        start, or the resumed checkpoint's t, plus this process's monotonic time)."""
        return self._base_t + (time.monotonic() - self._m0) + self._age0

    def emit(self, type_, **fields):
        """Write one record (global rank 0 only)."""
        if self.rank != 0:
            return
        rec = {"type": type_, "run": self.env.run, "gen": self.env.gen, "t": self.now()}
        rec.update(fields)
        self.out.write(format_record(rec) + "\n")
        self.out.flush()

    def record_init(self, config):
        """The init record, at the first iteration: init_s is process start → now."""
        self.emit("init", init_s=self._age0 + (time.monotonic() - self._m0), rdzv_s=self.rdzv_s,
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
