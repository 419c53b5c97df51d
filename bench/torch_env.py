"""torch_env.py — what bench's PyTorch scripts (torch_train.py, esrgan_torch.py) share:

  torch_ready(threads, blas_threads, blas_core, seed)
                           set_blas, then imports torch with `threads` OpenMP threads,
                           denormals flushed (as pitstop: Adam/momentum buffers decay into
                           denormals, slow on this CPU) and the seed set; returns torch
  set_blas(threads, core)  OpenBLAS reads its thread count and kernel choice when the
                           library loads: set them before torch is imported (re-executing
                           the script once when the environment differs). core "" leaves
                           the kernels to OpenBLAS's autodetection.
  blas_library()           the BLAS library torch actually loaded (from /proc/self/maps):
                           Debian's torch calls whatever libblas.so.3 the alternatives
                           system points at — OpenBLAS (libopenblas0-pthread) or the
                           reference BLAS, several times slower (DCGAN 7 img/s against
                           30-49 with OpenBLAS on a fresh machine). bench/vs-pytorch refuses
                           to compare against anything but OpenBLAS.
"""
import os
import sys


def set_blas(threads, core):
    want = {"OPENBLAS_NUM_THREADS": str(threads)}
    if core:
        want["OPENBLAS_CORETYPE"] = core
    if any(os.environ.get(k) != v for k, v in want.items()) or (not core and "OPENBLAS_CORETYPE" in os.environ):
        env = dict(os.environ)
        env.update(want)
        if not core:
            env.pop("OPENBLAS_CORETYPE", None)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_library():
    """'openblas' when an OpenBLAS library is mapped into this process, else the path of
    the libblas mapped ('none' if no BLAS is loaded yet: call after a matrix product)."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in os.path.basename(p).lower():
                paths.add(p)
    if any("openblas" in p for p in paths):
        return "openblas"
    return ",".join(sorted(paths)) or "none"


def torch_ready(threads, blas_threads, blas_core, seed):
    set_blas(blas_threads, blas_core)
    import torch
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(seed)
    return torch
