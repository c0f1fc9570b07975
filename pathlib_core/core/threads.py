"""BLAS threads of the package's own small-matrix loops.

The path engines spend their time in many small dense products (a few hundred rows at most).
There, a multi-threaded BLAS only adds synchronisation, and on a machine whose cores are
busy it is much slower: the threads wait for cores (measured on a 2-core machine: the Lasso
path on 400 x 120 at 1.4x scikit-learn's ``lars_path`` time with one BLAS thread, 7-14x with
two while another process ran). Like scikit-learn (through ``threadpoolctl``), the package
limits the BLAS to one thread inside its engines, whatever ``OMP_NUM_THREADS`` says, and
restores the caller's setting on return.

:func:`single_blas_thread` is a decorator for the public entry points of the engines. The
limit costs a few microseconds per call: the controller (which lists the loaded BLAS
libraries) is built once, on first use, after scipy's BLAS is loaded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["single_blas_thread", "blas_controller", "blas_kernels"]

F = TypeVar("F", bound=Callable)
_controller = None


def blas_controller():
    """The package's ``threadpoolctl.ThreadpoolController`` (built on first use)."""
    global _controller
    if _controller is None:
        import scipy.linalg  # noqa: F401  (loads scipy's BLAS, which numba kernels call too)
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


def blas_kernels() -> str:
    """The loaded BLAS libraries and the CPU kernels they use, e.g. ``'openblas Haswell'``.

    OpenBLAS picks its kernels by CPU unless ``OPENBLAS_CORETYPE`` names them; the kernels'
    rounding differs, so records of a run name them beside the machine.
    """
    seen = []
    for info in blas_controller().info():
        if info.get("user_api") == "blas":
            item = f"{info.get('internal_api')} {info.get('architecture') or ''}".strip()
            if item not in seen:
                seen.append(item)
    return ", ".join(seen) or "unknown"


def single_blas_thread(func: F) -> F:
    """Run ``func`` with one BLAS thread (the caller's setting is restored afterwards)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with blas_controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
