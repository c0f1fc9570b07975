"""The solver's units and tolerances: the exact symmetries of criterion (11), the per-feature
tolerances of the set conditions (20), and what consecutive fits on the same data share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .result import SelectiveResult

__all__: list[str] = []

X_WINDOW = (2.0 ** -16, 2.0 ** 20)  # X whose largest column norm lies here is not rescaled
SET_TOL = 1e-10  # default tolerance of the feature-set conditions (relative to the data scale)


# ----------------------------------------------------------------------------------------
# internal units: the exact symmetries of (11)
# ----------------------------------------------------------------------------------------
def _pow2_below(v: float) -> float:
    """The power of two ``2^e`` with ``v = m 2^e``, ``0.5 <= m < 1`` (1 for ``v = 0``)."""
    if v <= 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(v)[1])


@dataclass(frozen=True)
class _Units:
    r"""The power-of-two change of units between a user's problem and the solver's.

    Criterion (11) has an exact two-parameter symmetry: for ``s, t > 0``,

    .. math::

        J(a, b;\, sX, ty, \gamma s^2, \mu t / s) = t^2\, J(s a / t, b / t;\, X, y, \gamma, \mu)

    for the squared loss (the penalty obeys
    :math:`r_\mu(a / c) = r_{c\mu}(a) / c^2`), so the solution of the problem on
    ``(sX, ty)`` at ``(alpha s^2, mu t / s)`` is ``(t a / s, t b)`` with multipliers
    ``t lambda / s^2`` and ``s = X' lambda`` scaled by ``t / s``. The hinge loss fixes the
    margin at 1, which leaves ``t = 1``. The solver works on ``X / 2^{e_X}`` (largest column
    norm in [1/2, 1)) when the largest column norm of ``X`` is outside ``X_WINDOW`` (inside
    it, ``X`` as it is: scaling it would cost a copy of ``X``) and, for the squared loss, on
    ``y / 2^{e_y}``; with powers of two every conversion is exact, so scaling the user's
    ``y``, or an ``X`` outside the window, by a power of two (with ``alpha`` and ``mu``
    transformed as above) changes the results by exactly that factor, and any other
    scaling changes them by that factor to rounding.
    Scaling single features is not a symmetry: ``r_mu`` is not homogeneous, and feature
    ``i`` scaled by ``d_i`` is the feature of weight ``1 / d_i^2`` and selectivity
    ``mu d_i`` of a weighted penalty; the solver keeps each feature's units and measures
    every feature's conditions against the size of its own terms instead.
    """

    s: float  # X_solver = s X
    t: float  # y_solver = t y
    norms: np.ndarray | None = field(default=None, repr=False)  # column norms of X_solver

    @classmethod
    def of(cls, X, y, loss) -> _Units:
        # one pass over X: its column norms give the scale (a power of two times X has
        # exactly the scaled norms) and the per-feature tolerances (_FeatureTol)
        norms = np.sqrt(np.einsum("ij,ij->j", X, X))
        big = float(norms.max(initial=0.0))
        # X of moderate size is used as it is (scaling it is a copy of X, which costs as much
        # as a small fit: 2-3 ms at 196 x 6600)
        s = 1.0 if X_WINDOW[0] <= big < X_WINDOW[1] else 1.0 / _pow2_below(big)
        t = 1.0 / _pow2_below(float(np.abs(y).max(initial=0.0))) if loss == "squared" else 1.0
        return cls(s, t, norms * s if s != 1.0 else norms)

    def context(self, X, tol) -> _FitContext:
        """The :class:`_FitContext` of the solver's data ``X``; ``row_scale`` bounds the
        features' 1-norms (``sqrt(N)`` times the largest 2-norm)."""
        return _FitContext(_FeatureTol(X, tol, self.norms),
                           row_scale=math.sqrt(X.shape[0]) * float(self.norms.max(initial=0.0)))

    def data(self, X, y):
        return (X if self.s == 1.0 else X * self.s), (y if self.t == 1.0 else y * self.t)

    def alpha_in(self, alpha):
        g = alpha * self.s * self.s
        if not (np.isfinite(g) and g >= np.finfo(float).tiny):
            raise ValueError(f"alpha = {alpha:g} is out of floating-point range relative to the "
                             f"scale of X (alpha / max|X|^2 = {g:g} in the solver's units)")
        return g

    def mu_in(self, mu):
        return mu * self.t / self.s

    def mu_out(self, mu):
        return mu * self.s / self.t

    def result_in(self, res: SelectiveResult) -> SelectiveResult:
        """A user's warm start in the solver's units."""
        info = dict(res.info)
        if "mu" in info:
            info["mu"] = self.mu_in(info["mu"])
        return SelectiveResult(coef=res.coef * (self.t / self.s), intercept=res.intercept * self.t,
                               dual=res.dual * (self.t / self.s / self.s), active=res.active,
                               n_iter=res.n_iter, objective=res.objective * self.t * self.t,
                               gap=res.gap, method=res.method, info=info)

    def result_out(self, res: SelectiveResult) -> SelectiveResult:
        """A solver's result in the user's units."""
        info = dict(res.info)
        if "mu" in info:
            info["mu"] = self.mu_out(info["mu"])
        return SelectiveResult(coef=res.coef * (self.s / self.t), intercept=res.intercept / self.t,
                               dual=res.dual * (self.s * self.s / self.t), active=res.active,
                               n_iter=res.n_iter, objective=res.objective / (self.t * self.t),
                               gap=res.gap, method=res.method, info=info)


class _FeatureTol:
    """Per-feature tolerance of the set conditions (20) at multipliers ``lam``:
    ``tol (||x^i|| ||lam|| + mu)``, a bound on the size of the terms of ``s_i = x^i' lam``
    and of ``mu`` (Cauchy-Schwarz: ``|x^i|' |lam| <= ||x^i|| ||lam||``), so each feature's
    conditions are held relative to its own scale whatever the units of the others."""

    def __init__(self, X, tol, norms=None):
        self.tol = float(tol)
        if norms is None:
            norms = np.sqrt(np.einsum("ij,ij->j", X, X))
        self.norms = norms
        self.unit = self.tol * norms
        with np.errstate(divide="ignore"):
            self.inv = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), np.inf)

    def at(self, lam, mu, lam_norm=None) -> np.ndarray:
        """The tolerances at ``lam`` (``lam_norm``: ``||lam||`` if known)."""
        ln = float(np.sqrt(lam @ lam)) if lam_norm is None else lam_norm
        return self.unit * ln + self.tol * float(mu)

    def coef(self, lam, y, alpha) -> np.ndarray:
        """Tolerance of a kink coefficient ``a_i`` (for its sign, and below which it is
        rounding): ``tol (||y|| + alpha ||lam||) / ||x^i||``, the size of ``a_i`` whose
        contribution ``x^i a_i`` to the scores is ``tol`` times the terms of the object
        conditions. ``mu`` is no scale for it: in a lasso-like fit (large ``mu``) every
        active coefficient is far below ``mu``."""
        return self.tol * (float(np.sqrt(y @ y)) + alpha * float(np.sqrt(lam @ lam))) \
            * self.inv

    def bind(self, mu):
        """``lam -> self.at(lam, mu)`` (the form :mod:`.cuts` takes)."""
        return lambda lam: self.at(lam, mu)


@dataclass
class _FitContext:
    """What consecutive fits on the same data share (:func:`selectivity_path`): the
    per-feature tolerances; for the hinge loss the working-set LP of the cutting-plane search
    (its rows and basis carry over to the next ``mu``); for the squared loss the last inner
    system solved, ``(P, K, sig, S)`` (see :func:`_solve_inner`), so that the next fit's first
    iteration, which starts on the same sets, needs no new factorization."""

    ft: _FeatureTol
    row_scale: float | None = None  # N max|X|, a bound of the features' 1-norms
    lp: object = None
    inner: tuple | None = None
    scores: tuple | None = None  # (lam, X' lam), the last such product a fit computed
    checked: tuple | None = None  # (lam, coef, b, largest KKT residual) of a checked point

    def scores_of(self, lam):
        """``X' lam`` if :attr:`scores` holds it for this very array ``lam``, else None."""
        return self.scores[1] if self.scores is not None and self.scores[0] is lam else None
