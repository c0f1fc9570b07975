"""The published GAGA code (Qu, Li, Zhao and Gu, NeurIPS 2022 supplementary material) as a peer.

It is never vendored: ``load(path)`` imports ``GAGA.py`` from a local checkout given by the
user (``--peer-gaga PATH`` of ``bench_gaga.py`` and ``bench_gaga_svm.py``); without one the
rows that use it are skipped. What it computes, read from its source:

- ``GAGA_Lasso_linear(X, y, w, up, low)``: warm alternate convex search with scikit-learn's
  ``Lasso(alpha=0.006, tol=1e-6)`` on a fixed age grid of step 0.1 from ``low`` to ``up``
  (stopping each ACS when ``||w - w_prev|| <= 1e-6``), with the loss ``r^2`` and weights
  ``v = max(0, 1 - r^2 / lambda)``. In this package's units (loss ``r^2 / (2n)``, penalty
  ``alpha ||w||_1``) that is the Lasso with ``alpha = 0.006`` at ages ``lambda / (2n)``.
- ``GAGA_svm_linear(X, y, v, lam_sequence, C)``: ACS with scikit-learn's ``SVC`` (RBF,
  ``gamma = 1 / (n_features X.var())``) at each age of ``lam_sequence``, with an ODE step
  between ages when the sets do not change.
- ``GAGA_Logistic_linear(X, y, v, lam_sequence, C)``: the same for logistic regression
  (scikit-learn's ``LogisticRegression``, ``tol=1e-5``).

Run under the pinned scikit-learn with one adaptation (:class:`_CurrentSklearn`).
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path


def load(path: Path):
    """The published ``GAGA`` module from the checkout ``path`` (``ValueError`` if absent)."""
    path = Path(path)
    src = path / "GAGA.py"
    if not src.is_file():
        raise ValueError(f"--peer-gaga: no GAGA.py in {path} (expected a checkout of "
                         "github.com/diyang-lee/GAGA)")
    sys.path.insert(0, str(path))
    try:
        spec = importlib.util.spec_from_file_location("published_gaga", src)
        mod = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(path))
    mod.linear_model = _CurrentSklearn()
    return mod


class _CurrentSklearn:
    """The one adaptation to current scikit-learn: ``Lasso(warm_start=1)`` is rejected since
    scikit-learn 1.2 (a bool is required); it is passed as ``True``. Everything else is the
    published code as it is."""

    def __getattr__(self, name):
        from sklearn import linear_model

        return getattr(linear_model, name)

    @staticmethod
    def Lasso(**kw):  # noqa: N802 - scikit-learn's name
        from sklearn.linear_model import Lasso

        if "warm_start" in kw:
            kw["warm_start"] = bool(kw["warm_start"])
        return Lasso(**kw)


def time_against(ours, peer_run, residual, point, ages, repeat: int) -> dict:
    """Time our path (``ours()``) and the published code (``peer_run(path)``, given our path
    for its starting weights) on the same ages, and each side's largest partial-optimum
    residual: ``residual(coef, intercept, age)`` at the ages the published code returned for
    it, at every age for ours (``point(solution) -> (coef, intercept)``)."""
    import numpy as np
    from _common import best_time

    t_path, path = best_time(ours, repeat=repeat)
    t_peer, out = best_time(lambda: peer_run(path), repeat=max(1, repeat // 2))
    sp = np.asarray(out[0] if isinstance(out, tuple) else out)
    reached = ages[:len(sp)]
    return {"t_path": t_path, "t_peer": t_peer, "n_returned": len(sp),
            "last_age": float(reached[-1]) if len(sp) else float("nan"),
            "res_peer": max(residual(z[:-1], float(z[-1]), a)
                            for z, a in zip(sp, reached, strict=True)),
            "res_ours": max(residual(*point(path.at(a)), a) for a in ages)}
