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
  isa_fields(torch)        what this process actually runs, as result-line fields:
                           aten=AVX2|AVX512|... (PyTorch's own kernels: ATEN_CPU_CAPABILITY
                           caps it; Debian's 1.13 picks AVX2 on this AVX-512 CPU unless told
                           avx512), openblas_core=Haswell|SkylakeX|... (OpenBLAS's
                           openblas_get_corename) and mkldnn=0|1 (oneDNN available to torch; its
                           instruction set shows in ONEDNN_VERBOSE's 'info,cpu,isa' line).
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


def isa_fields(torch):
    cap = "?"
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            cap = line.split(":", 1)[1].strip().replace(" ", "_")
    core = "?"
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "openblas" in line.split()[-1].lower()}
    for lib in sorted(libs):
        try:
            import ctypes
            fn = ctypes.CDLL(lib).openblas_get_corename
            fn.restype = ctypes.c_char_p
            core = fn().decode()
            break
        except (OSError, AttributeError):
            continue
    return f"aten={cap} openblas_core={core} mkldnn={int(torch.backends.mkldnn.is_available())}"


def torch_ready(threads, blas_threads, blas_core, seed):
    set_blas(blas_threads, blas_core)
    import torch
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(seed)
    return torch
