"""The machine a benchmark ran on, and its limits: memory bandwidth and matrix throughput.

The limits are measured in the same run as the kernels, so each kernel's achieved fraction of them
is read against the load the machine had at that moment (the figures are shared-machine figures
when other jobs run).
"""

from __future__ import annotations

import os
import platform
from typing import NamedTuple

import numpy as np

from benchmarks._timing import alternate


class MachineLimits(NamedTuple):
    """Measured limits. Attributes:

    bandwidth_gbs: memory bandwidth, GB/s, from a large array copy (bytes read + bytes written).
    gflops_f64, gflops_f32: matrix throughput, GFLOP/s, from a square BLAS matmul (2 n^3 flops).
    copy_bytes: size of the copied array; matmul_n: matrix order.
    """

    bandwidth_gbs: float
    gflops_f64: float
    gflops_f32: float
    copy_bytes: int
    matmul_n: int


def machine_info() -> dict:
    """CPU model, logical CPUs (``os.cpu_count``), memory, load average, library versions."""
    import jax

    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    try:
        import sklearn

        skl = sklearn.__version__
    except ImportError:
        skl = None
    return {
        "cpu_model": model,
        "nproc": os.cpu_count(),
        "memory_gib": mem_gib,
        "loadavg": load,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
        "scikit_learn": skl,
    }


def _best(fn, repeats: int) -> float:
    return min(alternate({"fn": fn}, repeats, warmup=False)[0]["fn"], default=float("inf"))


def machine_limits(*, copy_mib: int = 256, matmul_n: int = 2048, repeats: int = 5) -> MachineLimits:
    """Measure memory bandwidth (array copy) and BLAS matmul throughput; best of ``repeats``.

    Args:
      copy_mib: size of the copied float64 array in MiB (well above the last-level cache).
      matmul_n: order of the square matrices multiplied (``numpy.matmul``, i.e. the BLAS numpy uses).
      repeats: timings per figure; the best (least disturbed) one is kept.

    Returns:
      ``MachineLimits``. Bandwidth counts each copied byte twice (one read, one write).
    """
    n = copy_mib * 2**20 // 8
    src = np.ones(n)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # touch the pages
    t_copy = _best(lambda: np.copyto(dst, src), repeats)
    flops = 2.0 * matmul_n**3
    out = {}
    for dt in (np.float64, np.float32):
        a = np.ones((matmul_n, matmul_n), dt) / matmul_n
        b = np.ones((matmul_n, matmul_n), dt)
        _ = a @ b  # warm-up
        out[dt] = flops / _best(lambda a=a, b=b: a @ b, max(2, repeats // 2)) / 1e9
    return MachineLimits(
        bandwidth_gbs=2 * src.nbytes / t_copy / 1e9,
        gflops_f64=out[np.float64],
        gflops_f32=out[np.float32],
        copy_bytes=int(src.nbytes),
        matmul_n=matmul_n,
    )
