r"""Selective ridge regularization solved in the dual (many more features than objects).

The selective-ridge paper ({cite}`selectiveridge`, "the paper" below) fits a generalized linear
model :math:`z = a^\top x + b` with the criterion (its eq. (11))

.. math::

    J(a, b) = \gamma \sum_{i=1}^{n} r_\mu(a_i) + \sum_{j=1}^{N} q(y_j, a^\top x_j + b),
    \qquad
    r_\mu(a) = \begin{cases} 2\mu|a|, & |a| \le \mu \\ \mu^2 + a^2, & |a| > \mu\end{cases}
             = 2\mu|a| + \max(0, |a| - \mu)^2,

with the squared loss :math:`q(y, z) = (y - z)^2` (regression, eq. (7)) or the hinge loss
:math:`q(y, z) = \max(0, 1 - yz)` (SVM, eq. (8)).

The dual (eqs. (22), (26)) has one multiplier per object. In the paper's scaling
(:math:`a_i = s_i` for a strongly active feature) it reads

.. math::

    \min_{\lambda \in \mathbb{R}^N} W(\lambda) = \tfrac12 \sum_{i=1}^n \max(0, s_i^2 - \mu^2)
      + \sum_{j=1}^N \varphi(y_j, \lambda_j),
    \qquad s = X^\top \lambda, \quad \textstyle\sum_j \lambda_j = 0,

with :math:`\varphi(y, \lambda) = \tfrac{\gamma}{2}\lambda^2 - y\lambda` (Theorem 1, eq. (33))
or :math:`\varphi(y, \lambda) = -y\lambda` on :math:`0 \le y\lambda \le 1/(2\gamma)` (Theorem 2,
eq. (36)). Strong duality: :math:`\min J = -2\gamma \min W`.

The coefficients follow feature by feature from :math:`s = X^\top\lambda` (eq. (20)):
:math:`a_i = s_i` where :math:`|s_i| > \mu`, :math:`a_i = 0` where :math:`|s_i| < \mu`. **A
difference from the paper**: the penalty is linear on :math:`[0, \mu]`, so a feature can also
sit exactly at :math:`|s_i| = \mu` with :math:`0 \le \operatorname{sign}(s_i) a_i \le \mu`
(a lasso-like regime that eq. (20) leaves out; it occurs on sets of data of positive measure).
Our dual iteration therefore works with three feature sets -- ``P`` (:math:`|s_i| > \mu`),
``K`` (:math:`s_i = \pm\mu`, the coefficient is the multiplier of that equality) and ``Z`` --
and each inner problem is the paper's inner problem (34) / (37) plus at most ``N`` equality
rows :math:`x^{i\top}\lambda = \pm\mu`. All linear algebra is ``N x N`` (objects); the only
work in ``n`` is ``X_P X_P^T`` and ``X^T lambda``, both linear in ``n``.

When the set iteration does not settle (squared loss), an augmented Lagrangian search in the
``N`` multipliers (:mod:`pathlib_core.selective_ridge.alm`, after {cite}`li2018ssnal`) proposes the
feature sets and the set iteration re-solves exactly on them. If that fails, an exact homotopy
in ``mu`` takes over: for fixed sets the solution of the inner system is affine in ``mu``, so
it is followed from sets known to be optimal at a larger ``mu`` (a warm start, or the empty
model at ``mu_0``) down to the target, one set change per breakpoint (``_mu_homotopy``).
For the hinge loss the dual is a linear program as long as no feature is strong, and a QP in
a split of ``s`` otherwise; fits start from the sets of these problems, found by constraint
generation over the features (:mod:`pathlib_core.selective_ridge.cuts`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..core.qp import solve_lp, solve_qp
from ..core.solution_path import Event, FunctionSegment, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import (
    as_binary_labels,
    as_matrix,
    as_vector,
    check_all_finite,
    check_choice,
    finite_scalar,
    positive_int,
    positive_scalar,
)
from .alm import alm_sets
from .cuts import _box, _lam_scale, hinge_lp_sets, hinge_qp_exact, hinge_qp_sets

__all__ = [
    "SelectiveResult",
    "selective_fit",
    "selectivity_path",
    "mu_0",
    "selective_penalty",
    "primal_objective",
    "dual_objective",
    "duality_gap",
    "kkt_residuals",
    "eeg_like",
    "SelectiveRidgeRegressor",
    "SelectiveRidgeClassifier",
]

LOSSES = ("squared", "hinge")
STALL_ITER = 8  # squared loss, warm start: set iterations before the ALM search takes over
SET_ITER = 20  # squared loss, cold start: set iterations before the ALM search takes over
POLISH_ITER = 10  # set iterations from the sets the ALM search or the hinge LP proposes
HINGE_STALL_WINDOW = 15  # hinge loss: iterations without progress before the search / cvxpy
EXACT_SPLIT_ROWS = 2  # hinge: exact split-QP solve up to this many tight rows per object
POLISH_GAP = 1e-12  # hinge: a split-QP solution with a smaller relative gap is not re-solved
GAP_GUARD = 1e-6  # a "converged" fit whose relative duality gap exceeds this is refused
KKT_GUARD = 1e-8  # ... and one whose largest componentwise KKT residual exceeds this
X_WINDOW = (2.0 ** -16, 2.0 ** 20)  # X whose largest column norm lies here is not rescaled
SET_TOL = 1e-10  # default tolerance of the feature-set conditions (relative to the data scale)
USE_ALM = True  # tests switch the ALM search off to exercise the homotopy fallback alone
METHODS = ("dual", "primal")


# ----------------------------------------------------------------------------------------
# objectives
# ----------------------------------------------------------------------------------------
def selective_penalty(a, mu: float) -> np.ndarray:
    r"""Selective ridge penalty :math:`r_\mu(a) = 2\mu|a| + \max(0, |a|-\mu)^2` (eq. (11)).

    Applied element by element:

    .. math::

        r_\mu(a) = \begin{cases} 2\mu|a|, & |a| \le \mu, \\
                                  \mu^2 + a^2, & |a| > \mu, \end{cases}

    i.e. a lasso-like (linear) penalty on :math:`[-\mu, \mu]` continued by a ridge-like
    (quadratic) one; both pieces have the same value :math:`2\mu^2` and the same slope
    :math:`2\mu` at :math:`|a| = \mu`, so :math:`r_\mu` is convex and continuously
    differentiable away from :math:`a = 0`. At :math:`\mu = 0` it is the ridge penalty
    :math:`a^2`.

    Parameters
    ----------
    a : array_like of float
        Coefficients, any shape (a scalar is accepted).
    mu : float
        Selectivity :math:`\mu \ge 0`, finite.

    Returns
    -------
    ndarray of float
        :math:`r_\mu(a)` with the shape of ``a`` (a NumPy scalar for scalar ``a``); sum it
        for the penalty term :math:`\sum_i r_\mu(a_i)` of (11).

    Raises
    ------
    ValueError
        ``a`` not numeric or with NaN / inf entries, or ``mu`` negative, NaN / inf or not a
        real number (naming the argument).
    """
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a must be a numeric array or scalar; got {type(a).__name__}") from exc
    check_all_finite(arr, "a")
    mu = positive_scalar(mu, "mu", allow_zero=True)
    return _selective_penalty(arr, mu)


def _selective_penalty(a, mu):
    """:func:`selective_penalty` on trusted input (the solver's internal use)."""
    a = np.abs(np.asarray(a, dtype=float))
    return 2.0 * mu * a + np.maximum(0.0, a - mu) ** 2


def _loss(y, z, loss: str) -> np.ndarray:
    if loss == "squared":
        return (y - z) ** 2
    return np.maximum(0.0, 1.0 - y * z)


def _scores(X, coef) -> np.ndarray:
    """``X @ coef`` from the nonzero coefficients only (a selective model is sparse: a
    path's grid points would otherwise each pay several full ``N x n`` products)."""
    nz = np.flatnonzero(coef)
    return X[:, nz] @ coef[nz] if 2 * nz.size < coef.size else X @ coef


def _primal_objective(X, y, coef, intercept, *, gamma, mu, loss, z=None) -> float:
    r"""Criterion (11): :math:`\gamma\sum_i r_\mu(a_i) + \sum_j q(y_j, a^\top x_j + b)`
    (``z``: the scores ``X a + b`` if known)."""
    z = _scores(X, coef) + intercept if z is None else z
    return float(gamma * _selective_penalty(coef, mu).sum() + _loss(y, z, loss).sum())


def _dual_objective(X, y, lam, *, gamma, mu, loss, s=None) -> float:
    r"""Dual criterion :math:`W(\lambda)` of eq. (22) with :math:`\varphi` of (33) / (36).

    Feasibility (:math:`\sum\lambda_j = 0`, the box for the hinge loss) is not checked here.
    ``s``: ``X' lam`` if the caller has it already.
    """
    s = X.T @ lam if s is None else s
    w = 0.5 * np.maximum(0.0, s * s - mu * mu).sum()
    if loss == "squared":
        w += 0.5 * gamma * float(lam @ lam) - float(y @ lam)
    else:
        w -= float(y @ lam)
    return float(w)


def _dual_infeasibility(y, lam, gamma, loss) -> float:
    """Largest relative violation of the dual constraints: ``|1' lam| / sum |lam_j|`` and, for
    the hinge loss, the box ``0 <= y_j lam_j <= 1 / (2 gamma)`` relative to its width."""
    tot = float(np.abs(lam).sum())
    v = abs(float(lam.sum())) / tot if tot > 0 else 0.0
    if loss == "hinge":
        c_box = 0.5 / gamma
        u = y * lam
        v = max(v, float(np.max(np.maximum(0.0, -u))) / c_box,
                float(np.max(u - c_box, initial=0.0)) / c_box)
    return v


def _gap_terms(X, y, coef, intercept, lam, *, gamma, mu, loss, s=None, J=None):
    """``(J, D, scale)``: the primal value (11), the dual value ``-2 gamma W(lam)`` and the sum
    of the absolute values of the terms of ``J - D`` (the scale of the gap; a feature with
    ``|s_i| > mu`` brings the terms ``s_i^2`` and ``mu^2`` of ``s_i^2 - mu^2``, which cancel
    where ``|s_i|`` is close to ``mu``)."""
    s = X.T @ lam if s is None else s
    if J is None:
        J = _primal_objective(X, y, coef, intercept, gamma=gamma, mu=mu, loss=loss)
    abs_s = np.abs(s)
    over = abs_s > mu
    pen = float(((abs_s[over] - mu) * (abs_s[over] + mu)).sum())
    pen_terms = float((abs_s[over] ** 2).sum()) + mu * mu * int(over.sum())
    ylam = float(y @ lam)
    D = -gamma * pen + 2.0 * gamma * ylam
    scale = J + gamma * pen_terms + 2.0 * gamma * float(np.abs(y) @ np.abs(lam))
    if loss == "squared":
        ll = float(lam @ lam)
        D -= gamma * gamma * ll
        scale += gamma * gamma * ll
    return J, D, scale


def _duality_gap(X, y, coef, intercept, lam, *, gamma, mu, loss, s=None, J=None) -> float:
    r"""Relative duality gap :math:`(J(a, b) + 2\gamma W(\lambda))` over the sum of the absolute
    values of its terms, plus the relative dual infeasibility of ``lam``.

    Zero (to rounding) exactly when ``(coef, intercept)`` is optimal for (11) and ``lam``
    is optimal for the dual; invariant under the exact symmetries of (11) (see
    :func:`duality_gap`). ``s``: ``X' lam``, ``J``: the primal value, if the caller has
    them already.
    """
    J, D, scale = _gap_terms(X, y, coef, intercept, lam, gamma=gamma, mu=mu, loss=loss, s=s,
                             J=J)
    rel = (J - D) / scale if scale > 0 else 0.0
    return float(rel + _dual_infeasibility(y, lam, gamma, loss))


def _ratio(v, scale):
    """``v / scale`` element by element, 0 where both vanish."""
    return np.divide(v, scale, out=np.zeros_like(v), where=scale > 0)


def _kkt_residuals(X, y, coef, intercept, lam, *, gamma, mu, loss, s=None, s_terms=None,
                   features=True, z=None) -> dict:
    """The residuals of :func:`kkt_residuals` for trusted arrays (``s = X' lam`` if known).

    ``s_terms``: the sizes of the terms of ``s`` (``|X|' |lam|`` by default; the solver's
    own check passes the bound ``||x^i|| ||lam||`` of :class:`_FeatureTol`, which saves a
    pass over ``|X|``); ``features=False``: objects and bias only; ``z``: the scores
    ``X a + b`` if known."""
    X = np.asarray(X, float)
    a = np.asarray(coef, float)
    lam = np.asarray(lam, float)
    absa = np.abs(a)
    nz = np.flatnonzero(a)
    feat = np.zeros(0)
    if features:
        s = X.T @ lam if s is None else s
        # features: s_i = sign(a_i) max(mu, |a_i|) where a_i != 0, |s_i| <= mu where a_i = 0,
        # each against |x_i|' |lam| (the terms of s_i) plus its other side
        if s_terms is None:
            s_terms = np.abs(X).T @ np.abs(lam)
        v = np.maximum(0.0, np.abs(s) - mu)
        side = np.full(a.size, float(mu))
        side[nz] = np.maximum(mu, absa[nz])
        v[nz] = np.abs(s[nz] - np.sign(a[nz]) * side[nz])
        feat = _ratio(v, s_terms + side)
    # objects, against the terms of the scores z_j = x_j' a + b
    fit = np.abs(X[:, nz]) @ absa[nz] + abs(float(intercept))
    if z is None:
        z = _scores(X, a) + intercept
    if loss == "squared":
        # gamma lam_j = y_j - z_j (33)
        obj = _ratio(np.abs(gamma * lam - y + z), gamma * np.abs(lam) + np.abs(y) + fit)
    else:
        # 0 <= u_j = y_j lam_j <= 1/(2 gamma), u_j at the upper bound where y_j z_j < 1 and
        # at 0 where y_j z_j > 1 (36): complementarity as the smaller of the multiplier's
        # share of its range and the margin's slack relative to 1 + |terms of z_j|
        c_box = 0.5 / gamma
        u = y * lam / c_box
        m = y * z
        ms = 1.0 + fit
        box = np.maximum(0.0, -u) + np.maximum(0.0, u - 1.0)
        comp = (np.minimum(np.clip(u, 0.0, 1.0), np.maximum(0.0, m - 1.0) / ms)
                + np.minimum(np.clip(1.0 - u, 0.0, 1.0), np.maximum(0.0, 1.0 - m) / ms))
        obj = box + comp
    tot = float(np.abs(lam).sum())
    bias = abs(float(lam.sum())) / tot if tot > 0 else 0.0
    feat_max = float(feat.max(initial=0.0))
    obj_max = float(obj.max(initial=0.0))
    return {"features": feat_max, "objects": obj_max, "bias": bias,
            "max": max(feat_max, obj_max, bias)}


# ----------------------------------------------------------------------------------------
# result type and validation
# ----------------------------------------------------------------------------------------
@dataclass
class SelectiveResult:
    """Solution of the selective ridge problem (11) at one ``(gamma, mu)``.

    Attributes
    ----------
    coef : ndarray of shape (n,)
        Direction vector ``a``.
    intercept : float
        Bias ``b``.
    dual : ndarray of shape (N,)
        The ``N`` Lagrange multipliers (the paper's scaling, ``a_i = x^{i'} lambda`` for a
        strongly active feature); NaN-free zeros for ``method="primal"`` when unavailable.
    active : ndarray of bool, shape (n,)
        Features with a non-zero coefficient.
    n_iter : int
        Outer iterations (dual) or solver iterations (primal).
    objective : float
        ``J(a, b)`` of eq. (11).
    gap : float
        Relative duality gap (see :func:`duality_gap`); NaN for the primal method.
    method : str
    info : dict
        ``"strong"`` (mask of features with ``|s_i| > mu``), ``"kink"`` (mask with
        ``|s_i| = mu``), ``"time"`` (seconds), ``"mu"`` (the selectivity solved for; a warm
        start at a larger ``mu`` lets the homotopy start from its sets), ``"homotopy_steps"``
        (breakpoints of the homotopy in ``mu``, 0 if it was not needed), ``"alm_newton"``
        (Newton systems of the augmented Lagrangian search for the sets, 0 if it was not
        needed), ``"lp_rounds"`` and ``"qp_rounds"`` (LP solves and interior-point rounds of
        the hinge loss's searches, 0 if not run), ``"rescued"`` (the cvxpy restart was used),
        solver details.
    """

    coef: np.ndarray
    intercept: float
    dual: np.ndarray
    active: np.ndarray
    n_iter: int
    objective: float
    gap: float
    method: str
    info: dict = field(default_factory=dict, repr=False)


def _check(X, y, gamma, mu, loss):
    X = as_matrix(X, "X")
    loss = check_choice(loss, "loss", LOSSES)
    if loss == "hinge":
        y = as_binary_labels(y, "y", length=X.shape[0])
    else:
        y = as_vector(y, "y", length=X.shape[0], length_of="X")
    gamma = positive_scalar(gamma, "gamma")
    if mu is not None:
        mu = positive_scalar(mu, "mu", allow_zero=True)
    return X, y, gamma, mu, loss


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
    ``(sX, ty)`` at ``(gamma s^2, mu t / s)`` is ``(t a / s, t b)`` with multipliers
    ``t lambda / s^2`` and ``s = X' lambda`` scaled by ``t / s``. The hinge loss fixes the
    margin at 1, which leaves ``t = 1``. The solver works on ``X / 2^{e_X}`` (largest column
    norm in [1/2, 1)) when the largest column norm of ``X`` is outside ``X_WINDOW`` (inside
    it, ``X`` as it is: scaling it would cost a copy of ``X``) and, for the squared loss, on
    ``y / 2^{e_y}``; with powers of two every conversion is exact, so scaling the user's
    ``y``, or an ``X`` outside the window, by a power of two (with ``gamma`` and ``mu``
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

    def gamma_in(self, gamma):
        g = gamma * self.s * self.s
        if not (np.isfinite(g) and g >= np.finfo(float).tiny):
            raise ValueError(f"gamma = {gamma:g} is out of floating-point range relative to the "
                             f"scale of X (gamma / max|X|^2 = {g:g} in the solver's units)")
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

    def coef(self, lam, y, gamma) -> np.ndarray:
        """Tolerance of a kink coefficient ``a_i`` (for its sign, and below which it is
        rounding): ``tol (||y|| + gamma ||lam||) / ||x^i||``, the size of ``a_i`` whose
        contribution ``x^i a_i`` to the scores is ``tol`` times the terms of the object
        conditions. ``mu`` is no scale for it: in a lasso-like fit (large ``mu``) every
        active coefficient is far below ``mu``."""
        return self.tol * (float(np.sqrt(y @ y)) + gamma * float(np.sqrt(lam @ lam))) \
            * self.inv

    def bind(self, mu):
        """``lam -> self.at(lam, mu)`` (the form :mod:`.selective_cuts` takes)."""
        return lambda lam: self.at(lam, mu)


# ----------------------------------------------------------------------------------------
# public certificates (validated; the solver calls the private versions on trusted arrays)
# ----------------------------------------------------------------------------------------
def _check_point(X, y, gamma, mu, loss, coef=None, intercept=None, lam=None):
    X, y, gamma, mu, loss = _check(X, y, gamma, mu, loss)
    if mu is None:
        raise ValueError("mu must be given (>= 0)")
    out = [X, y, gamma, mu, loss]
    if coef is not None:
        out.append(as_vector(coef, "coef", length=X.shape[1], length_of="X'"))
        out.append(finite_scalar(intercept, "intercept"))
    if lam is not None:
        out.append(as_vector(lam, "lam", length=X.shape[0], length_of="X"))
    return out


def primal_objective(X, y, coef, intercept, *, gamma, mu, loss) -> float:
    r"""Criterion (11): :math:`\gamma\sum_i r_\mu(a_i) + \sum_j q(y_j, a^\top x_j + b)`.

    Arguments are validated (``ValueError`` naming the argument); see :func:`selective_fit`.
    The value computed is

    .. math::

        J(a, b) = \gamma \sum_{i=1}^{n} r_\mu(a_i) + \sum_{j=1}^{N} q(y_j, a^\top x_j + b),

    with :math:`r_\mu` of :func:`selective_penalty` and :math:`q(y, z) = (y - z)^2` (squared
    loss, eq. (7)) or :math:`q(y, z) = \max(0, 1 - yz)` (hinge loss, eq. (8)).

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    coef : array_like of shape (n,)
        Direction vector :math:`a`.
    intercept : float
        Bias :math:`b`.
    gamma : float > 0
        Regularization weight :math:`\gamma`.
    mu : float >= 0
        Selectivity :math:`\mu`.
    loss : {"squared", "hinge"}
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)). Keyword-only, no default.

    Returns
    -------
    float
        :math:`J(a, b)`; equal to :attr:`SelectiveResult.objective` at a fitted point.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``gamma <= 0``, ``mu < 0`` or missing, hinge labels
        outside {-1, +1} or a single class, unknown ``loss``.
    """
    X, y, gamma, mu, loss, coef, intercept = _check_point(X, y, gamma, mu, loss, coef,
                                                          intercept)
    return _primal_objective(X, y, coef, intercept, gamma=gamma, mu=mu, loss=loss)


def dual_objective(X, y, lam, *, gamma, mu, loss) -> float:
    r"""Dual criterion :math:`W(\lambda)` of eq. (22) with :math:`\varphi` of (33) / (36).

    Feasibility of ``lam`` is not checked here (see :func:`duality_gap`). In the scaling of
    the module notes (eqs. (22), (26)), with :math:`s = X^\top\lambda`,

    .. math::

        W(\lambda) = \tfrac12 \sum_{i=1}^{n} \max(0, s_i^2 - \mu^2)
            + \sum_{j=1}^{N} \varphi(y_j, \lambda_j),
        \qquad
        \varphi(y, \lambda) = \begin{cases}
            \tfrac{\gamma}{2}\lambda^2 - y\lambda & \text{squared loss (33)}, \\
            -y\lambda & \text{hinge loss (36)},
        \end{cases}

    to be minimized subject to :math:`\sum_j \lambda_j = 0` and, for the hinge loss, the box
    :math:`0 \le y_j\lambda_j \le 1/(2\gamma)`. At the optima,
    :math:`\min J = -2\gamma \min W`.

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    lam : array_like of shape (N,)
        Dual multipliers :math:`\lambda`, one per object, in the scaling of the module notes
        (:math:`a_i = x^{i\top}\lambda` for a strongly active feature), as in
        :attr:`SelectiveResult.dual`.
    gamma : float > 0
        Regularization weight :math:`\gamma`.
    mu : float >= 0
        Selectivity :math:`\mu`.
    loss : {"squared", "hinge"}
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)). Keyword-only, no default.

    Returns
    -------
    float
        :math:`W(\lambda)`, evaluated as written whether or not ``lam`` is feasible.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``gamma <= 0``, ``mu < 0`` or missing, hinge labels
        outside {-1, +1} or a single class, unknown ``loss``.
    """
    X, y, gamma, mu, loss, lam = _check_point(X, y, gamma, mu, loss, lam=lam)
    return _dual_objective(X, y, lam, gamma=gamma, mu=mu, loss=loss)


def duality_gap(X, y, coef, intercept, lam, *, gamma, mu, loss) -> float:
    r"""Relative duality gap: :math:`J(a, b) + 2\gamma W(\lambda)` over the size of its terms.

    Zero (to rounding) exactly when ``(coef, intercept)`` is optimal for (11) and ``lam`` is
    optimal for the dual; the relative dual infeasibility of ``lam`` is added, so an
    infeasible ``lam`` cannot produce a small value. Precisely, with
    :math:`s = X^\top\lambda` and :math:`\pi = \sum_{|s_i| > \mu} (s_i^2 + \mu^2)`,

    .. math::

        \mathrm{gap} = \frac{J(a, b) + 2\gamma W(\lambda)}
            {J(a, b) + \gamma\pi + 2\gamma\,|y|^\top|\lambda| + [\gamma^2 \lVert\lambda\rVert^2]}
            + v(\lambda),

    where :math:`J` is (11) (:func:`primal_objective`), :math:`W` the dual criterion of
    eqs. (22) / (26) (:func:`dual_objective`), the bracketed term is present for the squared
    loss only (the denominator is the sum of the absolute values of the terms of the
    numerator: :math:`\pi` holds those of :math:`\max(0, s_i^2 - \mu^2)`, which cancel
    where :math:`|s_i|` is close to :math:`\mu`), and :math:`v(\lambda)` is the largest
    relative violation of the dual
    constraints: :math:`|\sum_j\lambda_j| / \sum_j |\lambda_j|`, and for the hinge loss also
    of :math:`0 \le y_j\lambda_j \le 1/(2\gamma)` relative to the width :math:`1/(2\gamma)`.
    By weak duality :math:`J(a, b) \ge -2\gamma W(\lambda)` for any feasible
    :math:`\lambda`, so the value is non-negative up to rounding. It is invariant under the
    exact symmetries of (11) (see :func:`selective_fit`), whatever the units of ``X`` and
    ``y``. A gap measures the objective only: a point can be wrong in a coordinate whose
    terms are small and still show a small gap; :func:`kkt_residuals` checks every
    condition against its own terms.

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    coef : array_like of shape (n,)
        Direction vector :math:`a`.
    intercept : float
        Bias :math:`b`.
    lam : array_like of shape (N,)
        Dual multipliers :math:`\lambda`, one per object, in the scaling of the module notes
        (:math:`a_i = x^{i\top}\lambda` for a strongly active feature), as in
        :attr:`SelectiveResult.dual`.
    gamma : float > 0
        Regularization weight :math:`\gamma`.
    mu : float >= 0
        Selectivity :math:`\mu`.
    loss : {"squared", "hinge"}
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)). Keyword-only, no default.

    Returns
    -------
    float
        The relative gap above; :attr:`SelectiveResult.gap` of a dual fit.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``gamma <= 0``, ``mu < 0`` or missing, hinge labels
        outside {-1, +1} or a single class, unknown ``loss``.
    """
    X, y, gamma, mu, loss, coef, intercept, lam = _check_point(X, y, gamma, mu, loss, coef,
                                                               intercept, lam)
    return _duality_gap(X, y, coef, intercept, lam, gamma=gamma, mu=mu, loss=loss)


def kkt_residuals(X, y, coef, intercept, lam, *, gamma, mu, loss) -> dict:
    r"""Optimality conditions of (11) at ``(a, b)`` with multipliers ``lam`` (eqs. (17)-(20)).

    With :math:`s = X^\top\lambda` the conditions are, feature by feature (eq. (20) plus the
    kink regime): :math:`a_i = s_i` if :math:`|a_i| > \mu`; :math:`|s_i| = \mu` with the sign
    of :math:`a_i` if :math:`0 < |a_i| \le \mu`; :math:`|s_i| \le \mu` if :math:`a_i = 0`;
    :math:`\sum_j \lambda_j = 0` (the bias); and object by object: squared loss
    :math:`\lambda = (y - Xa - b)/\gamma` (eq. (33)); hinge loss
    :math:`0 \le y_j\lambda_j \le 1/(2\gamma)` with :math:`y_j\lambda_j = 1/(2\gamma)` where
    :math:`y_j z_j < 1` and :math:`= 0` where :math:`y_j z_j > 1` (eq. (36)).

    Each condition is measured against the size of its own terms (componentwise, so that the
    residuals do not depend on the units of ``X``, ``y`` or of any single feature, and a
    wrong point cannot look like rounding because other coordinates are large):

    - feature :math:`i`: :math:`|s_i - \operatorname{sign}(a_i)\max(\mu, |a_i|)|` (or
      :math:`\max(0, |s_i| - \mu)` where :math:`a_i = 0`) over
      :math:`|x^i|^\top|\lambda| + \max(\mu, |a_i|)`;
    - object :math:`j`, squared loss: :math:`|\gamma\lambda_j - y_j + z_j|` over
      :math:`\gamma|\lambda_j| + |y_j| + |x_j|^\top|a| + |b|`; hinge loss: the box violation
      of :math:`u_j = 2\gamma y_j\lambda_j \in [0, 1]` plus the complementarity
      :math:`\min(u_j, (m_j - 1)_+/\sigma_j) + \min(1 - u_j, (1 - m_j)_+/\sigma_j)` with the
      margin :math:`m_j = y_j z_j` and :math:`\sigma_j = 1 + |x_j|^\top|a| + |b|`;
    - bias: :math:`|\sum_j\lambda_j| / \sum_j|\lambda_j|`.

    A computed optimum gives values near the rounding unit (1e-16 to 1e-13).

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    coef : array_like of shape (n,)
        Direction vector :math:`a`.
    intercept : float
        Bias :math:`b`.
    lam : array_like of shape (N,)
        Dual multipliers :math:`\lambda`, one per object, in the scaling of the module notes
        (:math:`a_i = x^{i\top}\lambda` for a strongly active feature), as in
        :attr:`SelectiveResult.dual`.
    gamma : float > 0
        Regularization weight :math:`\gamma`.
    mu : float >= 0
        Selectivity :math:`\mu`.
    loss : {"squared", "hinge"}
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)). Keyword-only, no default.

    Returns
    -------
    dict
        ``"features"``, ``"objects"``, ``"bias"`` (the largest relative violation in each
        group, as above) and ``"max"``.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``gamma <= 0``, ``mu < 0`` or missing, hinge labels
        outside {-1, +1} or a single class, unknown ``loss``.
    """
    X, y, gamma, mu, loss, coef, intercept, lam = _check_point(X, y, gamma, mu, loss, coef,
                                                               intercept, lam)
    return _kkt_residuals(X, y, coef, intercept, lam, gamma=gamma, mu=mu, loss=loss)


# ----------------------------------------------------------------------------------------
# bias given the coefficients
# ----------------------------------------------------------------------------------------
def _best_intercept(f, y, loss, hint=None) -> float:
    """Exact minimizer of ``sum_j q(y_j, f_j + b)`` over ``b`` (the closest one to ``hint``)."""
    if loss == "squared":
        return float(np.mean(y - f))
    # hinge: convex piecewise linear in b with breakpoints b = y_j - f_j (1/y = y)
    bps = np.unique(y - f)
    vals = np.array([np.maximum(0.0, 1.0 - y * (f + b)).sum() for b in bps])
    best = vals.min()
    cand = bps[vals <= best + 1e-12 * max(1.0, best)]
    lo, hi = float(cand.min()), float(cand.max())
    if hint is None or not np.isfinite(hint):
        return 0.5 * (lo + hi)
    return float(min(hi, max(lo, hint)))


# ----------------------------------------------------------------------------------------
# the empty model and mu_0 (eqs. (39)-(40))
# ----------------------------------------------------------------------------------------
def _empty_dual(X, y, gamma, loss):
    """A solution of the truncated dual (39) whose ``max_i |x^{i'} lambda|`` is smallest."""
    N = X.shape[0]
    if loss == "squared":
        # min gamma/2 |lam|^2 - y'lam s.t. 1'lam = 0  ->  lam = (y - mean y) / gamma (unique)
        return (y - y.mean()) / gamma
    # hinge: the LP (39) min -y'lam on the box, 1'lam = 0 has optimum -min(N+, N-)/gamma
    # (u_j = y_j lam_j); pick among its solutions the one with the smallest ||X' lam||_inf.
    # The LP is homogeneous in the box width 1/(2 gamma): it is solved on the unit box and
    # its solution scaled, so that its tolerances do not depend on gamma
    c_box = 0.5 / gamma
    n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
    opt = float(min(n_pos, n_neg))
    lb, ub = _box(y, 0.5)
    n = X.shape[1]
    # variables (lam, t): min t  s.t.  +-x^i'lam - t <= 0 for the rows i in a working set W,
    # 1'lam = 0, y'lam = 2 opt. Constraint generation: only a few of the 2 n rows are tight,
    # so start from the rows largest at the central solution (majority class spread evenly)
    # and add the most violated rows until none is left; the LP over all 2 n rows (dense,
    # 2 n x (N + 1)) cost 1.3 s at 196 x 6600, this a few milliseconds. Same optimum: a
    # solution of the restricted LP that violates no row solves the full one.
    c = np.zeros(N + 1)
    c[-1] = 1.0
    A = np.vstack([np.append(np.ones(N), 0.0), np.append(y, 0.0)])
    b = np.array([0.0, 2.0 * opt])
    lb_t, ub_t = np.append(lb, 0.0), np.append(ub, np.inf)
    lam = y * np.where(y > 0, opt / n_pos, opt / n_neg)  # feasible: 1'lam = 0, y'lam = 2 opt
    if n_pos == n_neg:
        # balanced classes: every y_j lam_j = 1 / (2 gamma), the only feasible point
        return c_box * lam
    s = X.T @ lam
    # a row counts as violated beyond rounding of its own terms (|x^i|'|lam| <= ||x^i|| ||lam||)
    row_tol = 1e-12 * np.sqrt(np.einsum("ij,ij->j", X, X))
    W = np.argsort(-np.abs(s), kind="stable")[:min(n, 2 * N)]
    for _ in range(n):  # each round adds a row: at most n rounds (in practice 1-3)
        XW = X[:, W].T
        G = np.vstack([np.hstack([XW, -np.ones((W.size, 1))]),
                       np.hstack([-XW, -np.ones((W.size, 1))])])
        res = solve_lp(c, G=G, h=np.zeros(2 * W.size), A=A, b=b, lb=lb_t, ub=ub_t)
        if res.status != "optimal":  # pragma: no cover - the LP is feasible and bounded
            raise RuntimeError(f"mu_0 LP failed: {res.status}")
        lam = np.clip(res.x[:N], lb, ub)
        s = np.abs(X.T @ lam)
        s[W] = -np.inf
        viol = np.flatnonzero(s > res.x[-1] * (1.0 + 1e-12) + row_tol * np.linalg.norm(lam))
        if viol.size == 0:
            return c_box * lam
        W = np.concatenate([W, viol[np.argsort(-s[viol], kind="stable")[:N]]])
    raise RuntimeError("mu_0 LP: constraint generation did not finish")  # pragma: no cover


@single_blas_thread
def mu_0(X, y, *, gamma, loss="squared") -> float:
    r"""Smallest selectivity that gives the empty model, eq. (40).

    :math:`\mu_0 = \max_i |x^{i\top}\lambda^0|` where :math:`\lambda^0` solves the truncated
    dual (39) (no active feature). For the hinge loss (39) can have many solutions; we take
    the one with the smallest :math:`\max_i|x^{i\top}\lambda|` (a small LP), so that
    ``mu >= mu_0`` is exactly the range of selectivities with all-zero coefficients.

    .. math::

        \mu_0 = \max_{1 \le i \le n} \big|x^{i\top}\lambda^0\big|,
        \qquad
        \lambda^0 \in \operatorname*{arg\,min}_{\sum_j \lambda_j = 0}
            \sum_{j=1}^{N} \varphi(y_j, \lambda_j),

    with :math:`\varphi` as in :func:`dual_objective` (for the hinge loss restricted to the box
    :math:`0 \le y_j\lambda_j \le 1/(2\gamma)`); :math:`x^i` is the :math:`i`-th column of
    ``X`` (feature :math:`i` over all objects). For the squared loss
    :math:`\lambda^0 = (y - \bar y\,\mathbf 1)/\gamma`, so
    :math:`\mu_0 = \max_i |x^{i\top}(y - \bar y\,\mathbf 1)| / \gamma`.

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    gamma : float > 0
        Regularization weight :math:`\gamma` (keyword-only).
    loss : {"squared", "hinge"}, default "squared"
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)).

    Returns
    -------
    float
        :math:`\mu_0 \ge 0`; 0 when no feature correlates with the dual solution (then the
        empty model is optimal for every ``mu``).

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``gamma <= 0``, hinge labels outside {-1, +1} or a
        single class, unknown ``loss``.
    """
    X, y, gamma, _, loss = _check(X, y, gamma, None, loss)
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    return float(units.mu_out(_mu_0(Xs, ys, units.gamma_in(gamma), loss)))


def _mu_0(X, y, gamma, loss) -> float:
    """:func:`mu_0` on trusted arrays (the solver's units)."""
    lam = _empty_dual(X, y, gamma, loss)
    return float(np.max(np.abs(X.T @ lam), initial=0.0))


# ----------------------------------------------------------------------------------------
# the dual iteration
# ----------------------------------------------------------------------------------------
def _equilibration(M, N):
    """Powers of two ``d`` such that ``diag(d) M diag(d)`` has a unit-size diagonal on its
    first ``N`` rows (``H + gamma I`` of the inner system) and border rows whose largest entry
    is of unit size: the symmetric scaling that makes the system's pivots and its condition
    estimate independent of the units of ``lambda`` (which are ``1 / gamma`` where ``H`` is
    small, as for a lasso-like fit, and smaller where ``H`` dominates)."""
    d = np.ones(len(M))
    dg = np.diag(M)[:N]
    pos = dg > 0
    d[:N][pos] = np.exp2(np.round(-0.5 * np.log2(dg[pos])))
    if len(M) > N:
        rowmax = np.max(np.abs(M[N:, :N]) * d[:N], axis=1)
        big = rowmax > 0
        d[N:][big] = np.exp2(np.round(-np.log2(rowmax[big])))
    return d


def _backward_ok(M, S, R, rtol) -> bool:
    """Normwise backward error of ``S`` as a solution of ``M S = R``, column by column:
    ``||M s - r|| <= rtol (||M||_F ||s|| + ||r||)`` (2-norms; the Frobenius norm bounds the
    spectral one), and ``S`` finite."""
    if not np.all(np.isfinite(S)):
        return False
    res = np.linalg.norm(M @ S - R, axis=0)
    nM = float(np.linalg.norm(M))
    return bool(np.all(res <= rtol * (nM * np.linalg.norm(S, axis=0)
                                      + np.linalg.norm(R, axis=0))))


def _sym_solve(M, R, rtol):
    """``(S, ok)``: ``M S = R`` by the symmetric indefinite factorization; ``ok`` False if
    the matrix is singular to working precision (scipy's condition estimate) or the
    backward error exceeds ``rtol``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            S = scipy.linalg.solve(M, R, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
        return None, False
    return S, _backward_ok(M, S, R, rtol)


def _solve_bordered(M, R, N):
    """Solve the symmetric inner system ``M S = R`` (``N`` multiplier rows, then the border
    rows of the bias and the kink features): by the symmetric indefinite factorization of
    ``M``; where that fails, of ``M`` after the scaling of :func:`_equilibration` (a graded
    matrix, e.g. ``gamma`` tiny next to ``X_P X_P'``, looks singular before it); where the
    scaled matrix is singular to working precision (dependent kink rows, e.g. duplicated
    features), by the minimum-norm least-squares solution. Returns ``(S, ok)``; ``ok`` is
    False unless the (scaled) system is solved with a small backward error (1e-10 for a
    factorization, 1e-7 for the least-squares solution of a consistent singular system)."""
    S, ok = _sym_solve(M, R, 1e-10)
    if ok:
        return S, True
    d = _equilibration(M, N)
    Ms = M * d[:, None] * d[None, :]
    Rs = R * d[:, None]
    Ss, ok = _sym_solve(Ms, Rs, 1e-10)
    if not ok:
        try:
            Ss = scipy.linalg.lstsq(Ms, Rs, check_finite=False)[0]
        except (np.linalg.LinAlgError, ValueError):
            return np.zeros_like(R), False
        ok = _backward_ok(Ms, Ss, Rs, 1e-7)
    return Ss * d[:, None], ok


def _solve_inner(X, y, gamma, mu, loss, P, K, sig, lam0, affine=False):
    """Inner problem (34)/(37) on the strong set ``P`` plus equalities ``x^{i'} lam = sig mu``
    for the kink set ``K``. Returns ``(lam, b, a_K, ok)``; with ``affine`` (squared loss) also
    the ``(N + 1 + |K|, 2)`` array ``S`` whose columns solve the system for the right-hand
    sides ``[y; 0; 0]`` and ``[0; 0; sig]``: the solution at any ``mu`` on the same sets is
    ``S @ [1, mu]`` (the system's matrix does not depend on ``mu``)."""
    N = X.shape[0]
    XP = X[:, P]
    H = XP @ XP.T  # N x N, the only Gram matrix ever formed
    XK = X[:, K]
    if loss == "squared":
        H = H + gamma * np.eye(N)
        k = XK.shape[1]
        M = np.zeros((N + 1 + k, N + 1 + k))
        M[:N, :N] = H
        M[:N, N] = 1.0
        M[N, :N] = 1.0
        M[:N, N + 1:] = XK
        M[N + 1:, :N] = XK.T
        R = np.zeros((N + 1 + k, 2))
        R[:N, 0] = y
        R[N + 1:, 1] = sig
        S, ok = _solve_bordered(M, R, N)
        sol = S[:, 0] + mu * S[:, 1]
        out = sol[:N], float(sol[N]), sol[N + 1:], ok
        return out + (S,) if affine else out
    # hinge (37): the QP in u = lambda / sc with its objective divided by sc (see _lam_scale:
    # the multipliers of the equality rows, b and a_K, are unchanged)
    sc = _lam_scale(gamma, mu, N * float(np.abs(XK).max()) if len(K) else None)
    lb, ub = _box(y, gamma)
    lb, ub = lb / sc, ub / sc
    A = np.vstack([np.ones((1, N)), XK.T])
    b = np.concatenate([[0.0], sig * (mu / sc)])
    H = (0.5 * sc) * (H + H.T)
    res = solve_qp(H, -y, A=A, b=b, lb=lb, ub=ub, warm_start=np.clip(lam0 / sc, lb, ub))
    if res.status != "optimal":
        return (lam0, math.nan, np.zeros(len(K)), False) + ((None,) if affine else ())
    aK = res.nu[1:].copy()
    if len(K) > 1:
        # dependent kink rows (duplicated or collinear features) share their multiplier in
        # many ways, and the solver gives a redundant row none; of all splits with the same
        # X_K a_K take the minimum-norm one (duplicates share equally), so that a feature
        # is not sent to the strong set only because its twin's share landed on it
        aK = np.linalg.lstsq(XK, XK @ aK, rcond=None)[0]
    return (sc * res.x, float(res.nu[0]), aK, True) + ((None,) if affine else ())


def _violations(s, mu, P, K, sig, aK, ftol, n, max_enter=None, atol=None):
    """Feature-set conditions violated at ``s = X' lam``: ``(size, index, new set, sign)``.

    ``ftol``: the tolerance of each feature's conditions (a scalar or one per feature; see
    :class:`_FeatureTol`); ``atol``: that of the sign of a kink coefficient (``ftol`` if not
    given; see :meth:`_FeatureTol.coef`). With ``max_enter`` only the
    ``max_enter`` largest violations of zero features (which enter the kink set) are
    listed, largest first; the others are all listed."""
    if np.ndim(ftol) == 0:
        ftol = np.full(n, float(ftol))
    inZ = np.ones(n, bool)
    inZ[P] = False
    inZ[K] = False
    zv = np.where(inZ, np.abs(s) - mu, -np.inf)
    enter = np.flatnonzero(zv > ftol)
    if max_enter is not None and len(enter) > max_enter:
        enter = enter[np.argpartition(-zv[enter], max_enter - 1)[:max_enter]]
    enter = enter[np.argsort(-zv[enter], kind="stable")]
    moves = [(float(zv[i]), int(i), "K", float(np.sign(s[i]))) for i in enter]
    fP = ftol[P]
    sP = np.abs(s[P])
    vP = mu - sP
    for j in np.flatnonzero(vP > fP):
        i = int(P[j])
        moves.append((float(vP[j]), i, "K" if sP[j] > fP[j] else "Z", float(np.sign(s[i]))))
    fK = ftol[K]
    aK_tol = fK if atol is None else (np.full(len(K), float(atol)) if np.ndim(atol) == 0
                                      else atol[K])
    sa = sig * aK
    for j in np.flatnonzero(sa < -aK_tol):
        moves.append((float(-sa[j]), int(K[j]), "Z", 0.0))
    for j in np.flatnonzero(sa > mu + fK):
        moves.append((float(sa[j] - mu), int(K[j]), "P", 0.0))
    return moves


def _apply_moves(P, K, sig, moves):
    setP = dict.fromkeys(P.tolist())
    setK = dict(zip(K.tolist(), sig.tolist(), strict=True))
    for _, i, to, sg in moves:
        setP.pop(i, None)
        setK.pop(i, None)
        if to == "P":
            setP[i] = None
        elif to == "K":
            setK[i] = float(sg)
    Pn = np.array(sorted(setP), dtype=int)
    Kn = np.array(sorted(setK), dtype=int)
    return Pn, Kn, np.array([setK[i] for i in Kn], dtype=float)


def _coef_from(s, P, K, aK, n):
    """Coefficients (20): ``a_i = s_i`` on the strong set ``P``, the kink multipliers on ``K``,
    zero elsewhere (a feature with ``|s_i|`` above ``mu`` only by rounding stays at zero)."""
    a = np.zeros(n)
    a[P] = s[P]
    a[K] = aK
    return a


def _dual_cvxpy(X, y, gamma, mu, loss):
    """The dual (22) in ``N`` variables solved by cvxpy (Clarabel): the rescue start.

    Used only when the set iteration stalls; its solution fixes the feature sets, after which
    the set iteration re-solves exactly (see :func:`selective_fit`).
    """
    import cvxpy as cp

    N = X.shape[0]
    lam = cp.Variable(N)
    s = X.T @ lam
    W = 0.5 * cp.sum(cp.pos(cp.square(s) - mu * mu))
    cons = [cp.sum(lam) == 0]
    if loss == "squared":
        W = W + 0.5 * gamma * cp.sum_squares(lam) - y @ lam
    else:
        W = W - y @ lam
        c_box = 0.5 / gamma
        cons += [cp.multiply(y, lam) >= 0, cp.multiply(y, lam) <= c_box]
    prob = cp.Problem(cp.Minimize(W), cons)
    # only a start: its feature sets are re-solved exactly and certified by the duality gap,
    # so cvxpy's "Solution may be inaccurate" (status optimal_inaccurate) is not passed on
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                       tol_feas=1e-12, max_iter=500)
        except cp.error.SolverError:
            return None
    if lam.value is None:
        return None
    return np.asarray(lam.value, float)


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


def _dual_fit(X, y, gamma, mu, loss, warm, max_iter, tol, max_active=None,
              stall_window=None, ft=None, ctx=None):
    """The set iteration; ``max_active``: give up (not converged) once the strong and kink
    sets together hold more features than that; ``stall_window``: give up when, from the
    tenth iteration on, the number of violated set conditions has not fallen by 10 % within
    that many iterations (the iteration wanders between sets without settling); ``ft``: the
    per-feature tolerances (:class:`_FeatureTol`, ``tol`` if not given); ``ctx`` (squared
    loss): reuse and record the inner system of :class:`_FitContext`."""
    N, n = X.shape
    if ctx is not None:
        ft = ctx.ft
    if ft is None:
        ft = _FeatureTol(X, tol)
    affine = loss == "squared" and ctx is not None
    if warm is not None:
        lam = warm.dual.copy()
        s = None
        kink = warm.info.get("kink")
        K = np.flatnonzero(kink) if kink is not None else np.zeros(0, int)
        # keep the previous sets: features that were zero enter through the kink set (as
        # violators), not directly as strong ones (that overshoots at a smaller mu)
        strong = warm.info.get("strong")
        if strong is None:
            s = X.T @ lam
            strong = np.abs(s) > mu
        P = np.flatnonzero(strong & ~np.isin(np.arange(n), K))
        sig = np.sign(X[:, K].T @ lam)
        sig[sig == 0] = 1.0
    else:
        lam = np.zeros(N)
        s = None
        P = np.zeros(0, int) if mu > 0 else np.arange(n)
        K = np.zeros(0, int)
        sig = np.zeros(0)
    # the previous fit's last system, if it was solved on these sets: its solution at this
    # mu costs no factorization (the system is affine in mu)
    cached = None
    if affine and warm is not None and ctx.inner is not None:
        P0, K0, sig0, S0 = ctx.inner
        if np.array_equal(P0, P) and np.array_equal(K0, K) and np.array_equal(sig0, sig):
            cached = S0
    S = None
    seen = set()
    single = False
    n_repeat = 0  # repeated sets so far; each repeat lengthens the run of single changes
    n_single_left = 0
    b = math.nan
    aK = np.zeros(len(K))
    n_iter = 0
    converged = False
    prev = None  # (P, K, sig, moves) before the last set update
    tried_first = False  # the last update was a single change after a failed inner problem
    good = (P, K, sig, aK)  # the sets of the last solved inner problem
    best_moves, best_iter = math.inf, 0  # stall detection (stall_window)
    while n_iter < max_iter:
        if max_active is not None and len(P) + len(K) > max_active:
            break
        n_iter += 1
        if cached is not None:
            S_new, cached = cached, None
            sol = S_new[:, 0] + mu * S_new[:, 1]
            lam_new, b_new, aK_new, ok = sol[:N], float(sol[N]), sol[N + 1:], True
        elif affine:
            lam_new, b_new, aK_new, ok, S_new = _solve_inner(X, y, gamma, mu, loss, P, K, sig,
                                                             lam, affine=True)
        else:
            lam_new, b_new, aK_new, ok = _solve_inner(X, y, gamma, mu, loss, P, K, sig, lam)
        if not ok:
            # inconsistent / infeasible kink rows: go back to the last solved sets and from
            # now on make one change at a time (the next largest violation if one fails)
            if prev is None:
                break
            single = True
            P, K, sig, moves = prev
            moves = sorted(moves, key=lambda m: -m[0])[1:] if tried_first else moves
            if not moves:
                break
            moves = sorted(moves, key=lambda m: -m[0])
            prev = (P, K, sig, moves)
            tried_first = True
            P, K, sig = _apply_moves(P, K, sig, moves[:1])
            continue
        tried_first = False
        lam, b, aK = lam_new, b_new, aK_new
        good = (P, K, sig, aK)
        if affine:
            S = S_new
        s = X.T @ lam
        # at most N - 1 kink rows can be independent of 1'lam = 0, and entering in small
        # blocks (at most doubling the active set) avoids the wild overshoots of adding
        # every violator at once
        room = max(1, min(N - 1 - len(K), max(4, len(P) + len(K))))
        moves = _violations(s, mu, P, K, sig, aK, ft.at(lam, mu), n, max_enter=room,
                            atol=ft.coef(lam, y, gamma) if len(K) else None) if mu > 0 else []
        if not moves:
            converged = True
            break
        if stall_window is not None and n_iter >= 10:
            if len(moves) < 0.9 * best_moves:
                best_moves, best_iter = len(moves), n_iter
            elif n_iter - best_iter >= stall_window:
                break
        key = (tuple(P), tuple(K), tuple(sig))
        if key in seen:
            single = True
            n_repeat += 1
            n_single_left = n_repeat
        seen.add(key)
        prev = (P, K, sig, moves)
        if single:
            # one change (the largest violation) after a repeated set; block moves resume
            # after a solved inner problem unless a set repeats again
            moves = sorted(moves, key=lambda m: -m[0])
            prev = (P, K, sig, moves)
            tried_first = True
            moves = moves[:1]
            single = n_single_left > 0
            n_single_left = max(0, n_single_left - 1)
        else:
            enter = sorted((m for m in moves if m[2] == "K"), key=lambda m: -m[0])[:room]
            moves = [m for m in moves if m[2] != "K"] + enter
        P, K, sig = _apply_moves(P, K, sig, moves)
    P, K, sig, aK = good
    if s is None:
        s = X.T @ lam  # (the loop keeps s = X' lam for the last solved lam)
    if ctx is not None:
        ctx.scores = (lam, s)
        if affine:
            ctx.inner = (P, K, sig, S) if converged else None
    aK = np.where(np.abs(aK) > ft.coef(lam, y, gamma)[K], aK, 0.0)
    coef = _coef_from(s, P, K, aK, n)
    f = _scores(X, coef)
    b = _best_intercept(f, y, loss, hint=b)
    kink = np.zeros(n, bool)
    kink[K] = True
    strong = np.zeros(n, bool)
    strong[P] = True
    return lam, coef, b, n_iter, converged, strong, kink


def _mu_homotopy(X, y, gamma, mu_t, start, ft, max_steps):
    """Exact homotopy in ``mu`` for the squared loss, from a certified point down to ``mu_t``.

    For fixed feature sets ``(P, K, sig)`` the inner system (34)-(35) with the kink rows has
    the right-hand side ``[y; 0; sig * mu]``, so its solution ``(lambda, b, a_K)`` is affine in
    ``mu``, and so is ``s = X' lambda``. Starting from ``start = (mu_s, P, K, sig)`` (sets that
    are optimal at ``mu_s >= mu_t``; ``None``: the empty model at ``mu_0``), we follow this
    affine piece downwards to the largest ``mu`` where one set condition of (20) becomes tight
    (a zero feature reaches ``|s_i| = mu``, a strong one falls back to it, a kink coefficient
    reaches 0 or ``mu``), move that one feature and continue. Returns the same tuple as
    :func:`_dual_fit` (``converged`` is True only if the conditions hold at ``mu_t``, to the
    per-feature tolerances ``ft``, a :class:`_FeatureTol`).
    """
    return _mu_homotopy_multi(X, y, gamma, [mu_t], start, ft, max_steps)[0]


def _homotopy_fail(N, n, steps=0):
    return (np.zeros(N), np.zeros(n), math.nan, steps, False, np.zeros(n, bool),
            np.zeros(n, bool))


REFRESH = 200  # rank-one / bordering updates of the inverse between exact refactorizations


class _InnerInverse:
    """The inverse of the inner matrix (sel-inner) for sets ``(P, K)``, kept up to date.

    ``M = [[X_P X_P' + gamma I, 1, X_K], [1', 0, 0], [X_K', 0, 0]]`` with the kink rows in
    insertion order. A feature entering / leaving ``P`` is a symmetric rank-one change of the
    top-left block (Sherman-Morrison), a kink row added / removed is a bordering step; each
    costs ``O(m^2)`` with ``m = N + 1 + |K|``. Every ``REFRESH`` updates, and whenever an
    update's pivot is tiny, the inverse is recomputed from ``M``. ``ok`` turns False when
    ``M`` is singular.
    """

    def __init__(self, X, gamma, P, K):
        self.X, self.gamma = X, gamma
        self.N = X.shape[0]
        self.P = set(int(i) for i in P)
        self.K = [int(i) for i in K]
        self.G = X[:, sorted(self.P)] @ X[:, sorted(self.P)].T
        self.n_updates = 0
        self.ok = self.refresh()

    def matrix(self):
        N, k = self.N, len(self.K)
        M = np.zeros((N + 1 + k, N + 1 + k))
        M[:N, :N] = self.G
        M[np.arange(N), np.arange(N)] += self.gamma
        M[:N, N] = 1.0
        M[N, :N] = 1.0
        XK = self.X[:, self.K]
        M[:N, N + 1:] = XK
        M[N + 1:, :N] = XK.T
        return M

    def refresh(self):
        self.G = self.X[:, sorted(self.P)] @ self.X[:, sorted(self.P)].T
        M = self.matrix()
        # inverted after the symmetric power-of-two scaling of _equilibration (the units of
        # lambda are 1 / gamma where X_P X_P' is small); checked on the scaled matrix
        d = _equilibration(M, self.N)
        Ms = M * d[:, None] * d[None, :]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                Minv_s = scipy.linalg.solve(Ms, np.eye(len(M)), assume_a="sym",
                                            check_finite=False)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            return False
        if not np.allclose(Ms @ Minv_s, np.eye(len(M)), rtol=0, atol=1e-8):
            return False
        Minv = Minv_s * d[:, None] * d[None, :]
        self.Minv = 0.5 * (Minv + Minv.T)
        self.n_updates = 0
        return True

    def _counted(self):
        self.n_updates += 1
        if self.n_updates >= REFRESH:
            return self.refresh()
        return True

    def _pivot_ok(self, d, scale):
        return abs(d) > 1e-9 * scale

    def toggle_strong(self, i, enter):
        """Feature ``i`` enters (``enter``) or leaves ``P``."""
        xi = self.X[:, i]
        sgn = 1.0 if enter else -1.0
        (self.P.add if enter else self.P.discard)(i)
        self.G += sgn * np.outer(xi, xi)
        u = self.Minv[:, : self.N] @ xi
        den = 1.0 + sgn * float(xi @ u[: self.N])
        if not self._pivot_ok(den, 1.0 + abs(float(xi @ u[: self.N]))):
            return self.refresh()
        self.Minv -= (sgn / den) * np.outer(u, u)
        return self._counted()

    def add_kink(self, i):
        xi = self.X[:, i]
        w = self.Minv[:, : self.N] @ xi
        d = -float(xi @ w[: self.N])
        self.K.append(i)
        # the new pivot against the size of its terms (a row dependent on the border gives
        # rounding there, whatever the units of the inverse)
        if not self._pivot_ok(d, float(np.abs(xi) @ (np.abs(self.Minv[: self.N, : self.N])
                                                       @ np.abs(xi)))):
            return self.refresh()
        m = len(w)
        Minv = np.empty((m + 1, m + 1))
        Minv[:m, :m] = self.Minv + np.outer(w, w) / d
        Minv[:m, m] = Minv[m, :m] = -w / d
        Minv[m, m] = 1.0 / d
        self.Minv = Minv
        return self._counted()

    def remove_kink(self, i):
        p = self.K.index(i)
        self.K.pop(p)
        q = self.N + 1 + p
        g = self.Minv[q, q]
        # the pivot against the size of the terms of its row of Minv M = I
        if not self._pivot_ok(g, 1e-3 * float(np.abs(self.Minv[q]).max())):
            return self.refresh()
        f = np.delete(self.Minv[:, q], q)
        E = np.delete(np.delete(self.Minv, q, axis=0), q, axis=1)
        self.Minv = E - np.outer(f, f) / g
        return self._counted()


def _mu_homotopy_multi(X, y, gamma, targets, start, ft, max_steps):
    """:func:`_mu_homotopy` through several targets (decreasing) in one pass.

    Returns one :func:`_dual_fit`-style tuple per target; its ``n_iter`` entry is the number
    of breakpoints passed since the previous target. After a failure every remaining target
    gets a tuple with ``converged == False``.

    Cost per breakpoint: the inverse of the inner matrix is kept up to date by rank-one and
    bordering updates (:class:`_InnerInverse`, ``O((N + |K|)^2)``), plus two products
    ``X' lambda`` (``O(N n)``). The solution at each target is re-solved exactly from the
    matrix of its sets (no drift reaches a returned result).
    """
    N, n = X.shape
    targets = [float(t) for t in targets]
    out = []
    if start is None:
        lam0 = _empty_dual(X, y, gamma, "squared")
        mu_c = float(np.max(np.abs(X.T @ lam0), initial=0.0))
        P, K, sig = np.zeros(0, int), np.zeros(0, int), np.zeros(0)
    else:
        mu_c, P, K, sig = start
    if not targets or mu_c < targets[0]:
        return [_homotopy_fail(N, n) for _ in targets]
    XT = np.ascontiguousarray(X.T)
    inv = _InnerInverse(X, gamma, P, K)
    signs = dict(zip((int(i) for i in K), (float(s) for s in sig), strict=True))
    last = -1
    steps = 0
    q = 0  # next target
    rhs = np.concatenate([y, [0.0]])
    while inv.ok:
        steps += 1
        if steps > max_steps:
            break
        K = np.array(inv.K, dtype=int)
        P = np.fromiter(inv.P, dtype=int, count=len(inv.P))
        sig = np.array([signs[i] for i in inv.K], dtype=float)
        k = len(K)
        Minv = inv.Minv
        sol_a = Minv[:, : N + 1] @ rhs
        sol_d = Minv[:, N + 1:] @ sig if k else np.zeros(N + 1)
        la, ld = sol_a[:N], sol_d[:N]
        sa, sd = XT @ la, XT @ ld  # two matrix-vector products beat one (n x 2) product
        ka, kd = sol_a[N + 1:], sol_d[N + 1:]
        # constraints c(mu) = alpha + beta * mu >= 0, with the feature and its new set
        inZ = np.ones(n, bool)
        inZ[P] = False
        inZ[K] = False
        z = np.flatnonzero(inZ)
        sP = np.sign(sa[P] + mu_c * sd[P])
        alpha = np.concatenate([-sa[z], sa[z], sP * sa[P], sig * ka, -sig * ka])
        beta = np.concatenate([1 - sd[z], 1 + sd[z], sP * sd[P] - 1, sig * kd, 1 - sig * kd])
        idx = np.concatenate([z, z, P, K, K])
        # going down in mu, c decreases where beta > 0; it crosses zero at -alpha / beta
        # (c is in the units of s; beta * mu_c is its change over [0, mu_c])
        grow = beta * mu_c > 1e-12 * np.abs(alpha)
        cross = np.full(len(alpha), -np.inf)
        cross[grow] = -alpha[grow] / beta[grow]
        cross[(idx == last) & (cross >= mu_c * (1.0 - 1e-12))] = -np.inf
        j = int(np.argmax(cross)) if len(cross) else -1
        mu_next = float(cross[j]) if j >= 0 else -np.inf
        # every target in [mu_next, mu_c] lies on this affine piece: solve it exactly there
        while q < len(targets) and targets[q] >= mu_next:
            out.append(_homotopy_point(X, y, gamma, targets[q], inv, sig, ft, steps))
            steps = 0
            if not out[-1][4]:
                return out + [_homotopy_fail(N, n) for _ in targets[q + 1:]]
            q += 1
        if q == len(targets):
            return out
        mu_c = min(mu_c, mu_next)
        i, last = int(idx[j]), int(idx[j])
        # the new set of feature i: a zero / strong feature reaching |s_i| = mu enters the
        # kink set; a kink coefficient reaching 0 leaves to Z, reaching +-mu goes to P
        n_z, n_p = len(z), len(P)
        if j < 2 * n_z + n_p:  # Z or P -> K
            if i in inv.P:
                inv.ok = inv.toggle_strong(i, enter=False)
            sgn = (1.0 if j < n_z else -1.0) if j < 2 * n_z else sP[j - 2 * n_z]
            signs[i] = float(sgn) if sgn != 0 else 1.0
            if inv.ok:
                inv.ok = inv.add_kink(i)
        else:  # K -> Z or K -> P
            inv.ok = inv.remove_kink(i)
            signs.pop(i, None)
            if inv.ok and j >= 2 * n_z + n_p + k:
                inv.ok = inv.toggle_strong(i, enter=True)
        if len(inv.K) >= N:
            break
    return out + [_homotopy_fail(N, n, steps) for _ in targets[q:]]


def _homotopy_point(X, y, gamma, mu_t, inv, sig, ft, steps):
    """The exact solution at ``mu_t`` for the current sets, certified by the set conditions."""
    N, n = X.shape
    K = np.array(inv.K, dtype=int)
    P = np.array(sorted(inv.P), dtype=int)
    inv.G = X[:, P] @ X[:, P].T
    M = inv.matrix()
    rhs = np.concatenate([y, [0.0], sig * mu_t])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(M, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        return _homotopy_fail(N, n, steps)
    lam, aK = sol[:N], sol[N + 1:]
    s = X.T @ lam
    atol = ft.coef(lam, y, gamma)
    if _violations(s, mu_t, P, K, sig, aK, ft.at(lam, mu_t), n, atol=atol):
        return _homotopy_fail(N, n, steps)
    aK = np.where(np.abs(aK) > atol[K], aK, 0.0)
    coef = _coef_from(s, P, K, aK, n)
    b = _best_intercept(X @ coef, y, "squared")
    kink = np.zeros(n, bool)
    kink[K] = True
    strong = np.zeros(n, bool)
    strong[P] = True
    return lam, coef, b, steps, True, strong, kink


def _primal_fit(X, y, gamma, mu, loss, solver=None):
    import cvxpy as cp

    N, n = X.shape
    a = cp.Variable(n)
    b = cp.Variable()
    absa = cp.abs(a)
    pen = 2 * mu * cp.sum(absa) + cp.sum_squares(cp.pos(absa - mu))
    z = X @ a + b
    if loss == "squared":
        fit = cp.sum_squares(y - z)
    else:
        fit = cp.sum(cp.pos(1 - cp.multiply(y, z)))
    prob = cp.Problem(cp.Minimize(gamma * pen + fit))
    solver = solver or "CLARABEL"
    opts = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11,
            "max_iter": 500} if solver == "CLARABEL" else {}
    prob.solve(solver=solver, **opts)
    if prob.status not in ("optimal", "optimal_inaccurate") or a.value is None:
        raise RuntimeError(f"cvxpy primal solve failed: {prob.status}")
    n_iter = int(getattr(prob.solver_stats, "num_iters", 0) or 0)
    return np.asarray(a.value, float), float(b.value), n_iter, prob.status


@single_blas_thread
def selective_fit(X, y, *, gamma, mu, loss="squared", method="dual", warm_start=None,
                  max_iter=200, tol=SET_TOL) -> SelectiveResult:
    r"""Fit the selective ridge criterion (11) at one ``(gamma, mu)``.

    .. math::

        \min_{a, b}\; \gamma \sum_{i=1}^{n} \big(2\mu|a_i| + \max(0, |a_i|-\mu)^2\big)
            + \sum_{j=1}^{N} q(y_j, a^\top x_j + b)

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows, features in columns (``n >> N`` is the intended regime).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or class labels -1 / +1 (``loss="hinge"``; both
        classes present).
    gamma : float > 0
        Regularization weight.
    mu : float >= 0
        Selectivity. ``mu = 0`` is ridge regression / the L2 SVM penalty; ``mu >= mu_0(X, y)``
        gives ``coef == 0``.
    loss : {"squared", "hinge"}
        Link function (7) or (8).
    method : {"dual", "primal"}
        ``"dual"``: the active-feature-set iteration (27)-(32) on the ``N`` multipliers, with
        inner problem the ``(N+1) x (N+1)`` system (34)-(35) (squared loss; extended by the
        kink rows, see the module notes) or a size-``N`` QP solved by
        :func:`pathlib_core.core.qp.solve_qp` (hinge, (37)). ``"primal"``: (11) with cvxpy
        (Clarabel), the reference.
        If the set iteration stalls (squared loss: ``SET_ITER`` = 20 iterations from a cold
        start, ``STALL_ITER`` = 8 from a warm start), an augmented Lagrangian search in the
        ``N`` multipliers proposes the feature sets (:mod:`pathlib_core.selective_ridge.alm`) and
        the set iteration re-solves exactly on them (``info["alm_newton"]`` counts its
        Newton systems). If that fails, the exact homotopy in ``mu`` takes over (for fixed
        sets the solution is affine in ``mu``; it is followed from the warm start's sets, or
        from the empty model at ``mu_0``, to ``mu``, one set change per breakpoint); only if
        that fails too, the iteration restarts from the sets of a cvxpy solve of the dual.
        For the hinge loss the sets are searched first (:mod:`pathlib_core.selective_ridge.cuts`):
        the dual's linear program, exact when no feature is strong, by constraint generation
        with HiGHS (``info["lp_rounds"]`` LP solves); if its multipliers ask for strong
        features, the split QP (interior-point rounds, ``info["qp_rounds"]``, then one exact
        active-set solve on the tight rows). The sets found are re-solved by the set iteration
        and checked. A warm start seeds both with its active features (one that has strong
        features skips the LP). Only if the search fails does the set iteration run, until
        it stops making progress (from its tenth iteration on, the number of violated set
        conditions has not fallen by 10 % within ``HINGE_STALL_WINDOW`` = 15 iterations);
        the cvxpy restart is the last resort. Every returned result meets the same set
        conditions (20).
    warm_start : SelectiveResult, optional
        A previous dual solution (e.g. at a nearby ``mu``): its multipliers and feature sets
        start the iteration.
    max_iter : int >= 1
        Cap on outer iterations of the dual method. A float is accepted only with an
        integral value (``200.0``); ``0.5`` is rejected, not truncated.
    tol : float > 0
        Tolerance of the feature-set conditions (20), relative to each feature's own terms:
        feature ``i`` is held to ``tol (||x^i|| ||lambda|| + mu)`` (see the notes on scale).

    Returns
    -------
    SelectiveResult

    Raises
    ------
    ValueError
        Bad input, naming the argument (``gamma <= 0``, ``mu < 0``, hinge labels that are not
        two classes, NaN / inf, mismatched shapes, unknown ``loss`` / ``method``,
        ``max_iter`` not an integer >= 1).
    RuntimeError
        The dual iteration did not reach its optimality conditions within ``max_iter``, or
        its result's relative duality gap exceeds 1e-6 or a componentwise KKT residual
        (:func:`kkt_residuals`) exceeds 1e-8 (never a silently unconverged result).

    Notes
    -----
    Scale. Criterion (11) has the exact symmetry ``(X, y, gamma, mu) -> (s X, t y,
    gamma s^2, mu t / s)``, whose solution is ``(t a / s, t b)`` with multipliers
    ``t lambda / s^2`` (hinge loss: ``t = 1``; see :class:`_Units`). The fit runs on
    ``X / 2^k`` when the largest column norm of ``X`` lies outside ``[2^-16, 2^20)`` and, for the
    squared loss, on ``y / 2^l`` (powers of two: exact), and the results are converted
    back; so a power-of-two scaling of such an ``X`` or of ``y`` scales the results by
    exactly the factors above. Scaling single features is not a symmetry (``r_mu`` is not
    homogeneous: feature ``i`` scaled by ``d_i`` is a feature of penalty weight
    ``1 / d_i^2`` and selectivity ``mu d_i``), so every condition is held relative to the
    size of its own terms instead: feature scales from ``1e-8`` to ``1e8`` in one matrix
    give certified fits. The hinge loss's linear programs and QPs are solved in multipliers
    divided by their box width, so that the solvers' absolute tolerances meet a problem of
    unit size whatever ``gamma`` is.
    """
    X, y, gamma, mu, loss = _check(X, y, gamma, mu, loss)
    if mu is None:  # pragma: no cover - _check always returns a number here
        raise ValueError("mu is required")
    method = check_choice(method, "method", METHODS)
    if warm_start is not None and not isinstance(warm_start, SelectiveResult):
        raise ValueError("warm_start must be a SelectiveResult from selective_fit; got "
                         f"{type(warm_start).__name__}")
    if warm_start is not None and warm_start.dual.shape != (X.shape[0],):
        raise ValueError(f"warm_start must come from a problem with {X.shape[0]} objects")
    max_iter = positive_int(max_iter, "max_iter")
    tol = positive_scalar(tol, "tol")
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    warm = None if warm_start is None else units.result_in(warm_start)
    res = _selective_fit(Xs, ys, units.gamma_in(gamma), units.mu_in(mu), loss, method, warm,
                         max_iter, tol, units.context(Xs, tol))
    return units.result_out(res)


def _selective_fit(X, y, gamma, mu, loss, method, warm_start, max_iter, tol,
                   ctx: _FitContext) -> SelectiveResult:
    """:func:`selective_fit` on validated arguments in the solver's units (see
    :class:`_Units`); ``ctx`` is shared by the fits of one path."""
    t0 = time.perf_counter()
    if method == "primal":
        coef, b, n_iter, status = _primal_fit(X, y, gamma, mu, loss)
        J = _primal_objective(X, y, coef, b, gamma=gamma, mu=mu, loss=loss)
        big = max(mu, float(np.abs(coef).max(initial=0.0)))
        return SelectiveResult(coef=coef, intercept=b, dual=np.zeros(X.shape[0]),
                               active=np.abs(coef) > 1e-8 * big, n_iter=n_iter,
                               objective=J, gap=math.nan, method="primal",
                               info={"time": time.perf_counter() - t0, "status": status})
    # squared loss: a set iteration that has not settled within its budget hands over to the
    # search for the sets (cheaper than letting it cycle up to max_iter); hinge loss: the
    # stall rule of _dual_fit hands over to the cvxpy restart
    squared = loss == "squared" and mu > 0
    budget = min(max_iter, SET_ITER if warm_start is None else STALL_ITER) if squared \
        else max_iter
    # hinge loss: search the sets first, by the dual's linear program (exact when no feature
    # is strong, the usual case down to about 0.01 mu_0 on the EEG-like data) and then the
    # split QP (strong features included); a warm start seeds both with its active features,
    # and one with strong features (which stay strong at a smaller mu) skips the LP. The set
    # iteration runs only if the search fails
    hinge = loss == "hinge" and mu > 0
    counts = {"lp_rounds": 0, "qp_rounds": 0}
    warm_strong = warm_start is not None and np.any(warm_start.info.get("strong", False))
    out = _hinge_search(X, y, gamma, mu, max_iter, tol, warm_start, not warm_strong, counts,
                        ctx) if hinge else None
    if out is None:
        # a set iteration (cold or warm) whose sets outgrow N objects is in the regime where
        # it stalls: the search below is cheaper than letting it run its budget
        lam, coef, b, n_iter, converged, strong, kink = _dual_fit(
            X, y, gamma, mu, loss, warm_start, budget, tol,
            max_active=X.shape[0] if squared and USE_ALM else None,
            stall_window=HINGE_STALL_WINDOW if loss == "hinge" else None, ctx=ctx)
    else:
        lam, coef, b, n_iter, converged, strong, kink = out
    rescued = False
    homotopy_steps = 0
    alm_newton = 0
    if not converged and squared and USE_ALM:
        # the set iteration has not found the sets: search them with the augmented Lagrangian
        # method (N x N Newton systems), re-solve exactly on them and check (20)
        def certify(strong_a, kink_a, lam_a):
            return _resolve_on_sets(X, y, gamma, mu, loss, lam_a, strong_a, kink_a, max_iter,
                                    tol, ctx.ft)

        coef0 = warm_start.coef if warm_start is not None else None
        out, alm_newton = alm_sets(X, y, gamma, mu, certify, coef0=coef0)
        if out is not None:
            lam, coef, b, it2, converged, strong, kink = out
            n_iter += it2
    if not converged and loss == "squared" and mu > 0:
        # the set iteration stalled: follow the exact homotopy in mu (affine pieces, one set
        # change per breakpoint) from the warm start's sets, or from the empty model at mu_0
        start = None
        if warm_start is not None and warm_start.info.get("mu", -1.0) >= mu and \
                "strong" in warm_start.info:
            ws = warm_start.info
            K0 = np.flatnonzero(ws["kink"])
            sig0 = np.sign(X.T @ warm_start.dual)[K0]
            sig0[sig0 == 0] = 1.0
            start = (float(ws["mu"]), np.flatnonzero(ws["strong"]), K0, sig0)
        out = _mu_homotopy(X, y, gamma, mu, start, ctx.ft, max_steps=10 * X.shape[1] + 1000)
        if not out[4] and start is not None:
            out = _mu_homotopy(X, y, gamma, mu, None, ctx.ft, max_steps=10 * X.shape[1] + 1000)
        if out[4]:
            lam, coef, b, homotopy_steps, converged, strong, kink = out
            n_iter += homotopy_steps
    if not converged:
        # the set iteration stalled (it can cycle between feature sets): start it again
        # from the feature sets of a generic convex solve of the same N-variable dual
        lam0 = _dual_cvxpy(X, y, gamma, mu, loss)
        if lam0 is not None:
            s0 = X.T @ lam0
            # the interior-point solution is accurate to about 1e-6 relative on some scales
            # (its tolerances are absolute): a feature within 1e-4 mu of the kink starts in
            # the kink set, and the set iteration removes those that do not belong there
            delta = 1e-4 * mu
            start = SelectiveResult(coef=coef, intercept=b, dual=lam0, active=coef != 0,
                                    n_iter=0, objective=math.nan, gap=math.nan,
                                    method="dual",
                                    info={"kink": np.abs(np.abs(s0) - mu) <= delta})
            lam, coef, b, it2, converged, strong, kink = _dual_fit(
                X, y, gamma, mu, loss, start, max_iter, tol, ft=ctx.ft)
            n_iter += it2
            rescued = True
    return _certified_result(X, y, gamma, mu, loss, lam, coef, b, n_iter, converged, strong,
                             kink, t0, s=ctx.scores_of(lam), ctx=ctx, rescued=rescued,
                             homotopy_steps=homotopy_steps, alm_newton=alm_newton, **counts)


def _resolve_on_sets(X, y, gamma, mu, loss, lam, strong, kink, max_iter, tol, ft=None):
    """The set iteration started at proposed sets (a search's): at most ``POLISH_ITER``
    iterations; the :func:`_dual_fit` tuple if the set conditions (20) are met, else None."""
    start = SelectiveResult(coef=np.zeros(X.shape[1]), intercept=0.0, dual=lam,
                            active=strong | kink, n_iter=0, objective=math.nan, gap=math.nan,
                            method="dual", info={"strong": strong, "kink": kink})
    out = _dual_fit(X, y, gamma, mu, loss, start, min(max_iter, POLISH_ITER), tol, ft=ft)
    return out if out[4] else None


def _point_residual(X, y, rec, *, gamma, mu, loss, absX=None) -> float:
    """Certificate of one fitted point: the largest componentwise KKT residual
    (:func:`kkt_residuals`); rounding level (1e-16 to 1e-13) at an optimum, in any units.
    ``absX``: ``|X|`` if the caller keeps it. (The duality gap, a sum over all features, is
    kept in the record; with features of very different scales its rounding is that of the
    largest terms, 1e-12 relative on a problem whose conditions all hold to 1e-14.)"""
    s_terms = None if absX is None else absX.T @ np.abs(rec.dual)
    return float(_kkt_residuals(X, y, rec.coef, rec.intercept, rec.dual, gamma=gamma, mu=mu,
                                loss=loss, s_terms=s_terms)["max"])


def _objects_ok(X, y, coef, b, lam, gamma, mu, s=None):
    """The object and bias conditions of a hinge-loss solution found outside the set
    iteration (whose inner problem meets them by construction): box, complementarity of
    ``lambda`` with the margins, ``1' lambda = 0`` (:func:`kkt_residuals`, to 1e-9)."""
    r = _kkt_residuals(X, y, coef, b, lam, gamma=gamma, mu=mu, loss="hinge", s=s,
                       features=False)
    return max(r["objects"], r["bias"]) <= 1e-9


def _hinge_search(X, y, gamma, mu, max_iter, tol, warm, use_lp, counts, ctx):
    """Hinge loss: a solution from the cutting-plane LP (``use_lp``; certified directly when
    no multiplier exceeds ``mu``) or else from the split QP (:mod:`.selective_cuts`:
    interior-point rounds, then one exact active-set solve, whose sets the set iteration
    re-solves). Both start from the active features and multipliers of ``warm`` (the QP from
    the LP's). Returns the :func:`_dual_fit` tuple, or ``None`` unless the set conditions (20)
    and the object conditions are met; ``counts`` gets the LP solves and interior-point
    rounds. The LP model is kept in ``ctx.lp`` for the next fit of a path."""
    N, n = X.shape
    ftol = ctx.ft.bind(mu)  # lam -> the per-feature tolerances at lam
    rows, lam0 = (None, None) if warm is None else (np.flatnonzero(warm.coef), warm.dual)
    if warm is not None:
        # the rows that the warm multipliers violate at this mu (at most N, the largest)
        # are the likely new rows of the LP (or of the split QP when the LP is skipped):
        # with them the first solve is usually the last
        s_w = ctx.scores_of(warm.dual)
        s_w = np.abs(X.T @ warm.dual if s_w is None else s_w)
        over = np.flatnonzero(s_w > mu + ftol(warm.dual))
        over = over[np.argsort(-s_w[over], kind="stable")[:N]]
        rows = np.union1d(rows, over)
    if use_lp:
        cut = hinge_lp_sets(X, y, gamma, mu, ftol, rows=rows, lp=ctx.lp, row_scale=ctx.row_scale)
        if cut is None:
            ctx.lp = None  # a failed search: the next fit builds a fresh model
            return None
        lam, coef, b, strong, kink, counts["lp_rounds"], ctx.lp = cut
        if not strong.any():
            # no multiplier above mu: the LP solution solves the dual; check (20) on it
            s = ctx.lp.s
            ctx.scores = (lam, s)
            K = np.flatnonzero(coef)
            if not _violations(s, mu, np.zeros(0, int), K, np.sign(s[K]), coef[K], ftol(lam),
                               n, atol=ctx.ft.coef(lam, y, gamma)):
                # the object conditions too, by the certificate the result gets (kept for it)
                z = _scores(X, coef) + b
                kkt = _kkt_residuals(X, y, coef, b, lam, gamma=gamma, mu=mu, loss="hinge", s=s,
                                     s_terms=ctx.ft.norms * float(np.sqrt(lam @ lam)), z=z)
                if max(kkt["objects"], kkt["bias"]) <= 1e-9:
                    ctx.checked = (lam, coef, b, kkt["max"])
                    return lam, coef, b, 1, True, strong, coef != 0
            # not met to the tolerance: re-solve on its sets by the set iteration
            return _resolve_on_sets(X, y, gamma, mu, "hinge", lam, strong, kink, max_iter, tol,
                                    ctx.ft)
        # strong features are wanted: the split QP, from the LP's rows and multipliers
        rows, lam0 = np.flatnonzero(strong | kink), lam
    if rows is None:
        return None
    found = hinge_qp_sets(X, y, gamma, mu, ftol, rows, lam0, ctx.row_scale)
    if found is None:
        return None
    lam_i, strong_i, kink_i, W, z, counts["qp_rounds"] = found
    if strong_i.sum() + kink_i.sum() > EXACT_SPLIT_ROWS * N:
        # too many tight rows for the dense exact solve of the split QP: the set iteration
        # (N x N inner problems) re-solves on the interior-point sets, or the search fails
        return _resolve_on_sets(X, y, gamma, mu, "hinge", lam_i, strong_i, kink_i, max_iter,
                                tol, ctx.ft)
    exact = hinge_qp_exact(X, y, gamma, mu, ftol, W, z, ctx.row_scale)
    if exact is None:
        return None
    lam, coef, b, rounds = exact
    s = X.T @ lam
    ft_lam = ftol(lam)
    strong = (coef != 0) & (np.abs(s) > mu + ft_lam)
    kink = (coef != 0) & ~strong
    coef[strong] = s[strong]  # (20): equal to the multiplier, up to rounding
    P, K = np.flatnonzero(strong), np.flatnonzero(kink)
    if _violations(s, mu, P, K, np.sign(s[K]), coef[K], ft_lam, n,
                   atol=ctx.ft.coef(lam, y, gamma)) or \
            not _objects_ok(X, y, coef, b, lam, gamma, mu, s):
        # the split QP's multipliers missed the conditions (its coefficients come from
        # multipliers, which are less accurate than s where the coefficients are small
        # next to the bias): the set iteration re-solves on its sets, or the search fails
        return _resolve_on_sets(X, y, gamma, mu, "hinge", lam, strong, kink, max_iter, tol,
                                ctx.ft)
    ctx.scores = (lam, s)
    if abs(_duality_gap(X, y, coef, b, lam, gamma=gamma, mu=mu, loss="hinge", s=s)) \
            <= POLISH_GAP:
        # already exact to rounding: a re-solve cannot improve it (on duplicated binary
        # features it can even fail after POLISH_ITER iterations, 0.15 s each on hiva)
        return lam, coef, b, rounds, True, strong, kink
    # the same sets through the set iteration's own inner problem (N multipliers): usually
    # one iteration, and a cleaner duality gap than the split QP's larger system
    out = _resolve_on_sets(X, y, gamma, mu, "hinge", lam, strong, kink, max_iter, tol, ctx.ft)
    if out is not None:
        return out[:3] + (rounds + out[3],) + out[4:]
    return lam, coef, b, rounds, True, strong, kink


def _homotopy_fits(X, y, gamma, start_fit, mus, max_iter, ctx, tol=SET_TOL):
    """Squared-loss fits at the decreasing ``mus`` from one homotopy pass that starts at the
    sets of ``start_fit``; a grid point the pass does not certify is fitted on its own."""
    t0 = time.perf_counter()
    info = start_fit.info
    K0 = np.flatnonzero(info["kink"])
    sig0 = np.sign(X.T @ start_fit.dual)[K0]
    sig0[sig0 == 0] = 1.0
    start = (float(info["mu"]), np.flatnonzero(info["strong"]), K0, sig0)
    outs = _mu_homotopy_multi(X, y, gamma, mus, start, ctx.ft,
                              max_steps=10 * X.shape[1] + 1000)
    fits = []
    prev = start_fit
    for mu, out in zip(mus, outs, strict=True):
        if out[4]:
            lam, coef, b, steps, converged, strong, kink = out
            prev = _certified_result(X, y, gamma, mu, "squared", lam, coef, b, steps,
                                     converged, strong, kink, t0, ft=ctx.ft,
                                     homotopy_steps=steps)
        else:
            prev = _selective_fit(X, y, gamma, mu, "squared", "dual", prev, max_iter, tol, ctx)
        fits.append(prev)
        t0 = time.perf_counter()
    return fits


def _certified_result(X, y, gamma, mu, loss, lam, coef, b, n_iter, converged, strong, kink,
                      t0, s=None, ctx=None, ft=None, **info) -> SelectiveResult:
    """The :class:`SelectiveResult` of a dual solution, with its duality gap; raises
    ``RuntimeError`` if the set conditions were not met, or if they were and yet the
    duality gap or a componentwise optimality condition (:func:`kkt_residuals`) is not small
    (never an unconverged result). ``s``: ``X' lam`` if already known; ``ctx``: remember
    ``(lam, s)`` for the next fit; ``ft``: the per-feature tolerances (``ctx.ft`` by
    default)."""
    z = _scores(X, coef) + b
    J = _primal_objective(X, y, coef, b, gamma=gamma, mu=mu, loss=loss, z=z)
    if s is None:
        s = X.T @ lam
    if ft is None:
        ft = ctx.ft if ctx is not None else _FeatureTol(X, SET_TOL)
    if converged and coef.any() and np.all(np.abs(s) <= mu + ft.at(lam, mu)):
        # no |s_i| above mu: the empty model can be optimal too, as at mu = mu_0 for the hinge
        # loss (several optima, e.g. duplicated features at |a_i| = mu); prefer it (41) when
        # it is one (the same lambda certifies it through the duality gap below)
        b0 = _best_intercept(np.zeros(X.shape[0]), y, loss, hint=b)
        J0 = _primal_objective(X, y, np.zeros_like(coef), b0, gamma=gamma, mu=mu, loss=loss)
        if J0 <= J * (1.0 + 1e-12):
            coef, b, J = np.zeros_like(coef), b0, J0
            z = np.full(X.shape[0], b0)
            kink = np.zeros_like(kink)
            strong = np.zeros_like(strong)
    gap = _duality_gap(X, y, coef, b, lam, gamma=gamma, mu=mu, loss=loss, s=s, J=J)
    kkt = math.nan
    if converged and not abs(gap) <= GAP_GUARD:
        converged = False  # the set conditions held, yet primal and dual disagree: refuse
    if converged:
        done = ctx.checked if ctx is not None else None
        if done is not None and done[0] is lam and done[1] is coef and done[2] == b:
            kkt = done[3]  # this very point was checked by the search that found it
        else:
            kkt = _kkt_residuals(X, y, coef, b, lam, gamma=gamma, mu=mu, loss=loss, s=s,
                                 s_terms=ft.norms * float(np.sqrt(lam @ lam)), z=z)["max"]
        converged = kkt <= KKT_GUARD
    if not converged:
        raise RuntimeError(f"selective_fit: the dual iteration stopped after {n_iter} "
                           f"iterations without meeting its optimality conditions "
                           f"(relative duality gap {gap:.3g}, largest relative KKT residual "
                           f"{kkt:.3g})")
    if ctx is not None:
        ctx.scores = (lam, s)
    return SelectiveResult(coef=coef, intercept=b, dual=lam, active=coef != 0, n_iter=n_iter,
                           objective=J, gap=gap, method="dual",
                           info={"time": time.perf_counter() - t0, "strong": strong,
                                 "kink": kink, "mu": mu, "rescued": False,
                                 "homotopy_steps": 0, "alm_newton": 0, "lp_rounds": 0,
                                 "qp_rounds": 0, **info})


# ----------------------------------------------------------------------------------------
# the rough regularization path along the selectivity axis (section V, eq. (42))
# ----------------------------------------------------------------------------------------
@single_blas_thread
def selectivity_path(X, y, *, gamma, loss="squared", n_mu=20, ratio=1e-6, max_iter=200
                     ) -> SolutionPath:
    r"""Rough regularization path over the selectivity grid (42), from ``mu_0`` downwards.

    The grid is ``mu_l = mu_0 * ratio ** ((n_mu - 1 - l) / (n_mu - 1))``, ``l = 0..n_mu-1``
    (log-spaced from ``ratio * mu_0`` to ``mu_0``, eq. (42) with ``ratio = 10^{-6}``). The fit
    at ``mu_0`` is the empty model (41); each next, smaller ``mu`` starts the dual iteration
    from the previous solution (warm start), as in section V.B of the paper. For the squared
    loss, a grid point whose set iteration stalls is finished as a single fit would be (the
    augmented Lagrangian search for the sets, started from the previous coefficients, see
    :func:`selective_fit`); if the homotopy in ``mu`` had to finish it, the remaining grid
    points come from one homotopy pass that continues from it. A grid point starting on the
    previous point's sets takes its first iterate from that point's inner system, whose
    solution is affine in ``mu`` (no new factorization). Each point is certified by the
    same set conditions and duality gap as a single fit.

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``; ``n >> N`` is the
        intended regime).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    gamma : float > 0
        Regularization weight :math:`\gamma`, fixed along the path (keyword-only).
    loss : {"squared", "hinge"}, default "squared"
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)).
    n_mu : int >= 2, default 20
        Number of grid points, ``mu_0`` included. A float is accepted only with an integral
        value (``20.0``); a non-integral one such as ``2.7`` is rejected, not truncated.
    ratio : float in (0, 1), default 1e-6
        Smallest grid point relative to ``mu_0`` (the grid spans ``[ratio * mu_0, mu_0]``).
    max_iter : int >= 1, default 200
        Cap on the outer iterations of the dual method at each grid point (passed to
        :func:`selective_fit`, also for the re-solves of ``at(mu)``); an integer, checked
        before any fit (as ``n_mu``).

    Returns
    -------
    SolutionPath
        ``param_name == "selectivity"``, increasing breakpoints = the grid, traced in
        decreasing order (``direction=-1``). Records are :class:`SelectiveResult`; ``at(mu)``
        between grid points re-solves warm-started from the grid point above (exact, not an
        interpolation). Events ``"enter"`` / ``"leave"`` list the features whose active
        status changed between consecutive grid points (reported at the smaller ``mu``).
        ``kkt_residuals()`` gives, per grid point, the largest componentwise residual of
        :func:`kkt_residuals` (each optimality condition of (11) against the size of its own
        terms, in the user's units and invariant under the problem's exact symmetries); the
        relative duality gap of each point is its record's ``gap``. ``info`` holds
        ``"mu_0"``, ``"n_iter"`` (per grid point, in tracing order) and ``"time"``.

    Raises
    ------
    ValueError
        Bad input, naming the argument (as :func:`selective_fit`; also ``n_mu`` not an
        integer >= 2, ``max_iter`` not an integer >= 1, or ``ratio`` outside (0, 1)), or
        ``mu_0 == 0`` (no feature correlates with ``y``: the path would be empty).
    RuntimeError
        A grid point whose dual iteration did not meet its optimality conditions (see
        :func:`selective_fit`).
    """
    X, y, gamma, _, loss = _check(X, y, gamma, None, loss)
    n_mu = positive_int(n_mu, "n_mu", minimum=2)
    max_iter = positive_int(max_iter, "max_iter")
    ratio = positive_scalar(ratio, "ratio")
    if ratio >= 1:
        raise ValueError(f"ratio must be in (0, 1); got {ratio}")
    t0 = time.perf_counter()
    # the fits run in the solver's units (an exact power-of-two change, see _Units); the grid
    # and the results are converted back, so a power-of-two scaling of X or y scales them
    # exactly
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    gs = units.gamma_in(gamma)
    m0s = _mu_0(Xs, ys, gs, loss)
    if m0s <= 0:
        raise ValueError("mu_0 is 0 for these data (no feature correlates with y): the "
                         "selectivity path is empty")
    grid_s = m0s * ratio ** (np.arange(n_mu - 1, -1, -1) / (n_mu - 1))
    grid_s[-1] = m0s
    grid = units.mu_out(grid_s)
    m0 = float(grid[-1])
    fits: list[SelectiveResult] = []
    prev = None
    down = [float(mu) for mu in grid_s[::-1]]
    # one context for all grid points: the per-feature tolerances once, and for the hinge
    # loss one working-set LP whose rows and basis carry over from each mu to the next
    ctx = units.context(Xs, SET_TOL)
    while len(fits) < n_mu:
        mu = down[len(fits)]
        prev = _selective_fit(Xs, ys, gs, mu, loss, "dual", prev, max_iter, SET_TOL, ctx)
        fits.append(prev)
        if prev.info.get("homotopy_steps", 0) > 0 and len(fits) < n_mu:
            # squared loss: the set iteration stalled here and the homotopy in mu finished
            # the fit; further down it would stall again, so one homotopy pass from this
            # point's sets serves every remaining grid point
            fits += _homotopy_fits(Xs, ys, gs, prev, down[len(fits):], max_iter, ctx)
    fits = [units.result_out(f) for f in fits[::-1]]  # increasing mu, the user's units
    events = []
    for k in range(n_mu - 1):
        lo, hi = fits[k].active, fits[k + 1].active
        enter = np.flatnonzero(lo & ~hi)
        leave = np.flatnonzero(~lo & hi)
        if len(enter):
            events.append(Event(grid[k], "enter", enter))
        if len(leave):
            events.append(Event(grid[k], "leave", leave))

    def _refit_from(start):
        def fn(t):
            return selective_fit(X, y, gamma=gamma, mu=float(t), loss=loss, warm_start=start,
                                 max_iter=max_iter)
        return fn

    segs = [FunctionSegment(grid[k], grid[k + 1], _refit_from(fits[k + 1]), rec_lo=fits[k],
                            rec_hi=fits[k + 1], kind="refit") for k in range(n_mu - 1)]

    abs_x = []  # |X|, formed on the first call

    def residual(t, rec):
        if not abs_x:
            abs_x.append(np.abs(X))
        return _point_residual(X, y, rec, gamma=gamma, mu=t, loss=loss, absX=abs_x[0])

    return SolutionPath("selectivity", segs, events, residual=residual, direction=-1,
                info={"mu_0": m0, "n_iter": [f.n_iter for f in fits[::-1]],
                      "time": time.perf_counter() - t0, "loss": loss, "gamma": gamma})


# ----------------------------------------------------------------------------------------
# EEG-like data (the paper's EEG set is proprietary)
# ----------------------------------------------------------------------------------------
def eeg_like(*, n_objects=196, n_channels=66, n_samples=100, target_fraction=0.5,
             evoked_amplitude=1.0, seed):
    r"""Synthetic evoked-potential data shaped like the paper's EEG set (section VI.A).

    Each object is one EEG fragment: ``n_channels`` channels x ``n_samples`` time samples,
    concatenated channel by channel into ``n = n_channels * n_samples`` features. The
    generator:

    - **noise** = a few shared latent sources (spatial pattern x slowly varying time course,
      with variances falling geometrically, so that the eigenvalues of ``X X'`` fall quickly
      as in the paper) + spatially smooth channel noise (covariance ``exp(-|c - c'| / 8)``
      over the channel index) that is AR(1) in time (coefficient 0.9);
    - **targets** (``y = +1``) add an evoked component: a positive bump peaking about 30% of
      the way into the fragment (a P300-like wave), strongest on a band of channels;
      non-targets (``y = -1``) do not.

    Parameters
    ----------
    n_objects, n_channels, n_samples : int
    target_fraction : float in (0, 1)
    evoked_amplitude : float
        Amplitude of the evoked bump relative to the unit noise scale.
    seed : int or numpy.random.Generator

    Returns
    -------
    X : ndarray of shape (n_objects, n_channels * n_samples)
    y : ndarray of shape (n_objects,) with values -1 / +1 (both present)
    """
    from ..datasets import as_generator

    rng = as_generator(seed)
    n_objects = positive_int(n_objects, "n_objects")
    n_channels = positive_int(n_channels, "n_channels")
    n_samples = positive_int(n_samples, "n_samples")
    if not 0 < target_fraction < 1:
        raise ValueError(f"target_fraction must be in (0, 1); got {target_fraction}")
    if n_objects < 2:
        raise ValueError(f"n_objects must be at least 2; got {n_objects}")
    n_pos = min(n_objects - 1, max(1, int(round(target_fraction * n_objects))))
    y = np.full(n_objects, -1.0)
    y[rng.permutation(n_objects)[:n_pos]] = 1.0
    ch = np.arange(n_channels)
    t = np.arange(n_samples) / n_samples
    # spatially smooth channel noise, AR(1) in time
    C = np.exp(-np.abs(ch[:, None] - ch[None, :]) / 8.0)
    Lc = np.linalg.cholesky(C + 1e-10 * np.eye(n_channels))
    e = rng.standard_normal((n_objects, n_samples, n_channels)) @ Lc.T
    noise = np.empty_like(e)
    noise[:, 0] = e[:, 0]
    rho = 0.9
    for k in range(1, n_samples):
        noise[:, k] = rho * noise[:, k - 1] + math.sqrt(1 - rho ** 2) * e[:, k]
    # shared latent sources with geometrically falling variance
    n_src = 8
    for r in range(n_src):
        pattern = np.cos(math.pi * (r + 1) * (ch + 0.5) / n_channels) + 0.3
        course = np.sin(2 * math.pi * (r + 1) * t + rng.uniform(0, 2 * math.pi))
        amp = rng.standard_normal(n_objects) * 6.0 * 0.55 ** r
        noise += amp[:, None, None] * course[None, :, None] * pattern[None, None, :]
    # evoked component for targets
    bump = np.exp(-0.5 * ((t - 0.3) / 0.05) ** 2)
    topo = np.exp(-0.5 * ((ch - 0.6 * n_channels) / (0.15 * n_channels)) ** 2)
    evoked = evoked_amplitude * bump[:, None] * topo[None, :]
    noise[y > 0] += evoked[None]
    X = noise.transpose(0, 2, 1).reshape(n_objects, n_channels * n_samples)
    return X, y


# ----------------------------------------------------------------------------------------
# scikit-learn estimators
# ----------------------------------------------------------------------------------------
try:  # scikit-learn is a declared dependency; keep the import local to this section
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError:  # pragma: no cover
    raise


class SelectiveRidgeRegressor(RegressorMixin, BaseEstimator):
    r"""Selective ridge regression (criterion (11) with the squared loss), fitted in the dual.

    Parameters
    ----------
    gamma : float > 0, default 1.0
    mu : float >= 0, default 0.1
        Selectivity; ``mu = 0`` is ridge regression.
    method : {"dual", "primal"}, default "dual"

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``lambda`` (one per training object).
    n_iter_ : int
    """

    def __init__(self, gamma=1.0, mu=0.1, method="dual"):
        self.gamma = gamma
        self.mu = mu
        self.method = method

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        res = selective_fit(X, y, gamma=self.gamma, mu=self.mu, loss="squared",
                            method=self.method)
        self.coef_, self.intercept_ = res.coef, res.intercept
        self.dual_coef_, self.n_iter_ = res.dual, res.n_iter
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


class SelectiveRidgeClassifier(ClassifierMixin, BaseEstimator):
    r"""Selective-ridge SVM (criterion (11) with the hinge loss), fitted in the dual.

    Two classes are fitted directly (Theorem 2); more classes one-vs-rest.

    Parameters
    ----------
    gamma : float > 0, default 1.0
    mu : float >= 0, default 0.1
    method : {"dual", "primal"}, default "dual"

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_features,) for two classes, else (n_classes, n_features)
    intercept_ : float or ndarray of shape (n_classes,)
    """

    def __init__(self, gamma=1.0, mu=0.1, method="dual"):
        self.gamma = gamma
        self.mu = mu
        self.method = method

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError("y must contain at least two classes; got one class")
        targets = ([self.classes_[1]] if len(self.classes_) == 2 else list(self.classes_))
        coefs, icpts = [], []
        for c in targets:
            yy = np.where(y == c, 1.0, -1.0)
            res = selective_fit(X, yy, gamma=self.gamma, mu=self.mu, loss="hinge",
                                method=self.method)
            coefs.append(res.coef)
            icpts.append(res.intercept)
        if len(self.classes_) == 2:
            self.coef_, self.intercept_ = coefs[0], icpts[0]
        else:
            self.coef_, self.intercept_ = np.array(coefs), np.array(icpts)
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.coef_.ndim == 1:
            return X @ self.coef_ + self.intercept_
        return X @ self.coef_.T + self.intercept_

    def predict(self, X):
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]
