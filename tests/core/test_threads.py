"""The package's BLAS controls: one thread inside the engines, and the kernels named."""

import os

import numpy as np
import pytest

from pathlib_core.core.threads import blas_controller, blas_kernels, single_blas_thread


def test_single_blas_thread_limits_inside_and_restores_after():
    before = [i["num_threads"] for i in blas_controller().info() if i["user_api"] == "blas"]

    @single_blas_thread
    def inside():
        return [i["num_threads"] for i in blas_controller().info() if i["user_api"] == "blas"]

    assert inside() and all(n == 1 for n in inside())
    after = [i["num_threads"] for i in blas_controller().info() if i["user_api"] == "blas"]
    assert after == before


def test_blas_kernels_names_the_loaded_library():
    np.dot(np.ones((4, 4)), np.ones((4, 4)))
    name = blas_kernels()
    assert name != "unknown"
    assert any(lib in name for lib in ("openblas", "mkl", "blis"))


@pytest.mark.skipif(os.environ.get("OPENBLAS_CORETYPE") is None,
                    reason="run outside make (the Makefile pins OPENBLAS_CORETYPE)")
def test_pinned_openblas_kernels_are_in_use():
    # make and CI export OPENBLAS_CORETYPE=Haswell; OpenBLAS must honour it, else the
    # regression cases on ill-conditioned kernels depend on the CPU's own kernels
    wanted = os.environ["OPENBLAS_CORETYPE"].lower()
    found = [(info.get("architecture") or "").lower() for info in blas_controller().info()
             if info.get("internal_api") == "openblas"]
    if not found:
        pytest.skip("no OpenBLAS loaded (the pin concerns OpenBLAS only)")
    assert found == [wanted] * len(found)
