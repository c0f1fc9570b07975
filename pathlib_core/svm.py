r"""The entire regularization path of the support vector machine.

The SVM dual with a precomputed kernel ``K`` and labels ``y`` in ``{-1, +1}``,

.. math::

    \min_\alpha \; \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
    \quad \text{s.t.} \quad y^\top \alpha = 0, \quad 0 \le \alpha \le C,
    \qquad Q = (y y^\top) \circ K,

is a parametric QP in ``C`` whose solution is piecewise linear in ``C`` (Hastie, Rosset,
Tibshirani and Zhu 2004, "The entire regularization path for the support vector machine",
JMLR 5:1391-1415; their ``lambda = 1 / C`` and ``alpha_i / C``). The points split into three
sets: the *elbow* ``E`` (``0 < alpha_i < C``, ``y_i f(x_i) = 1``), the *left* set ``L``
(``alpha_i = C``, ``y_i f(x_i) <= 1``) and the *right* set ``R`` (``alpha_i = 0``,
``y_i f(x_i) >= 1``). The decision function is ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``;
the intercept ``b`` is the multiplier of ``y' alpha = 0``.

:func:`svm_path` is a client of the generic engine :func:`pathlib_core.homotopy.parametric_qp_path`
(ties, singular kernels and cycling are handled there). The start at ``C_max`` is computed with
scikit-learn's ``SVC(kernel="precomputed")`` and made exact by the engine's polishing step
(index sets identified, KKT system solved exactly, signs verified).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._svm_fast import trace_svm
from ._validation import (
    as_binary_labels,
    as_kernel,
    as_vector,
    check_choice,
    finite_scalar,
    positive_scalar,
)
from .homotopy import FREE, LOWER, UPPER, HomotopyError, _assemble, _make_problem, _trace
from .kkt import _QPData, _recover_bounds, _residuals
from .path import Event, Path

__all__ = ["SVMSolution", "svm_path", "svm_kkt_residual"]

_SET_NAMES = {"free": "elbow", "lower": "right", "upper": "left"}


@dataclass(frozen=True)
class SVMSolution:
    """SVM solution at one value of ``C``.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Dual coefficients, ``0 <= alpha <= C``.
    intercept : float
        ``b`` in ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``. Where it is not unique (empty
        elbow) it is the midpoint of the interval allowed by the KKT conditions at the
        breakpoints, linearly interpolated in between (see :func:`svm_path`).
    elbow, left, right : ndarray of bool, shape (n,)
        The index sets (``0 < alpha < C``; ``alpha = C``; ``alpha = 0``) of the segment
        containing ``C``; at a breakpoint, those of the segment just above it (larger ``C``),
        at ``C_max`` those at ``C_max``.
    """

    alpha: np.ndarray
    intercept: float
    elbow: np.ndarray = field(repr=False)
    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)

    def decision_function(self, K_test, y) -> np.ndarray:
        """``f`` on test points given ``K_test[i, j] = K(x_i, x_test_j)`` (train rows)."""
        return np.asarray(K_test).T @ (self.alpha * np.asarray(y, dtype=float)) + self.intercept


def svm_kkt_residual(K, y, C: float, alpha, intercept: float) -> float:
    r"""Largest relative KKT residual of ``(alpha, intercept)`` for the SVM dual at ``C``.

    Scaling as in :func:`pathlib_core.kkt.qp_residuals` with ``relative=True``: stationarity
    divided by ``1 + max(|Q alpha|, 1, |b y|, |w|)``, feasibility by ``1 + max(|alpha|, C)``,
    complementarity by ``1 + |objective|``. The bound multipliers are recovered from the
    gradient ``Q alpha - 1 + b y`` (:func:`pathlib_core.kkt.bound_multipliers_from_gradient`).

    The conditions checked are those of the dual (module docstring) with the intercept as
    the multiplier of :math:`y^\top\alpha = 0`:

    .. math::

        Q\alpha - \mathbf 1 + b\,y - w^{lb} + w^{ub} = 0, \qquad y^\top\alpha = 0, \qquad
        0 \le \alpha \le C,

    with complementary bound multipliers :math:`w^{lb}, w^{ub} \ge 0` (a variable within
    ``1e-12 C`` of a bound counts as at it). Precisely, the scales are those of
    :func:`pathlib_core.kkt.qp_residuals`: stationarity uses ``|Q| |alpha|`` entrywise, and
    the equality :math:`y^\top\alpha = 0` is divided by ``1 + sum |alpha|``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel matrix (symmetric to a relative ``1e-8``; it is symmetrized).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    C : float > 0
        Regularization parameter (upper bound of ``alpha``).
    alpha : array_like of shape (n,)
        Dual variables to check.
    intercept : float
        Bias ``b``.

    Returns
    -------
    float
        The largest of the four relative residuals (stationarity, primal feasibility, dual
        feasibility, complementarity); zero (to rounding) exactly at an optimum.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    """
    Kv = as_kernel(K, "K")
    yv = as_binary_labels(y, "y", length=Kv.shape[0], length_of="K")
    Cv = positive_scalar(C, "C")
    av = as_vector(alpha, "alpha", length=Kv.shape[0], length_of="K")
    return _svm_residual(Kv * np.outer(yv, yv), yv, Cv, av, finite_scalar(intercept, "intercept"))


def _svm_residual(Q, y, C, alpha, b) -> float:
    n = y.shape[0]
    d = _QPData(Q, -np.ones(n), np.zeros((0, n)), np.zeros(0), y[None, :], np.zeros(1),
                np.zeros(n), np.full(n, C))
    grad = Q @ alpha - 1.0 + b * y
    w_lb, w_ub = _recover_bounds(grad, alpha, d.lb, d.ub, 1e-12 * max(C, 1e-300))
    return _residuals(d, alpha, np.zeros(0), np.array([b]), w_lb, w_ub, True).max


def _start_alpha(K, y, C) -> np.ndarray:
    """Approximate solution at C with libsvm (exactness comes from the engine's polishing).

    On degenerate data (duplicates, a singular kernel) libsvm may stop at its iteration cap
    with a ``ConvergenceWarning``; the point is only a start, which the engine polishes to an
    exact KKT point (or reports a clear ``HomotopyError``), so the warning is not passed on.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    clf = SVC(kernel="precomputed", C=C, tol=1e-10, cache_size=500, max_iter=10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(K, y)
    alpha = np.zeros(y.shape[0])
    alpha[clf.support_] = np.abs(clf.dual_coef_.ravel())
    return np.clip(alpha, 0.0, C)


def svm_path(K, y, *, C_max: float, C_min: float | None = None, alpha0=None,
             refactor_every: int = 50, solver: str = "lean") -> Path:
    r"""Exact regularization path of the kernel SVM for ``C`` in ``[C_min, C_max]``.

    Solves, for every ``C``, the dual

    .. math::

        \min_\alpha \; \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
        \quad \text{s.t.} \quad y^\top \alpha = 0, \; 0 \le \alpha \le C,
        \qquad Q_{ij} = y_i y_j K_{ij},

    by the piecewise-linear homotopy of Hastie, Rosset, Tibshirani and Zhu (2004), traced
    downward from ``C_max``. In the primer chapter (``notebooks/primer/01_svm_path``) this
    dual is equation ``(svm-dual)``, the optimality conditions that define the index sets
    are ``(svm-stationarity)``-``(svm-sets)``, and the affine solution between two events is
    ``(svm-segment)``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Precomputed kernel matrix (symmetric positive semi-definite; may be singular, e.g. a
        linear kernel with ``d < n`` or duplicate points).
    y : array_like of shape (n,)
        Labels in ``{-1, +1}``; both classes present, any class sizes.
    C_max : float
        Largest ``C`` (> 0); the path starts here.
    C_min : float, optional
        Smallest ``C`` (``0 < C_min <= C_max``). ``None``: trace down until no event is left;
        the path ends at the smallest event ``C_min = C_last``. Below it the index sets no
        longer change and the solution is ``alpha(C) = (C / C_last) alpha(C_last)`` (the last
        segment extends linearly to ``alpha(0) = 0``; the intercept is affine in ``C`` there).
        If there is no event below ``C_max`` the path is the single point ``C_max``.
    alpha0 : array_like of shape (n,), optional
        A (possibly approximate) solution at ``C_max``; default: libsvm via scikit-learn.
    refactor_every : int
        Full re-factorization of the KKT matrix every this many updates (drift control).
    solver : {"lean", "generic"}
        ``"lean"`` (default): an event loop specialised to the SVM (``O(n |E|)`` per event,
        ``E`` the elbow) that hands every degenerate event (ties, empty elbow, singular
        systems) to the generic engine and resumes after it; ``"generic"``: the generic
        engine :func:`pathlib_core.homotopy.parametric_qp_path` for every event. Both give the
        same path; the lean loop is several times faster.

    Returns
    -------
    Path
        ``param_name == "C"``; ``path.at(C)`` is an :class:`SVMSolution`. Events ``"enter"``
        (a point joins the elbow) and ``"leave"`` (it leaves the elbow), with ``info = {"from":
        ..., "to": ...}`` among ``"elbow"``, ``"left"`` (``alpha = C``) and ``"right"``
        (``alpha = 0``). ``kkt_residuals()`` are relative (see :func:`svm_kkt_residual`).
        ``path.info`` has the engine statistics (``n_events``, ``n_refactorizations``,
        ``max_drift``, ``time``, ...).

    Notes
    -----
    *Empty elbow.* When no point is in the elbow the intercept is not determined by the
    linear system, only confined to an interval by the sign conditions of the left and right
    sets (Hastie et al. 2004, sec. 4). The path reports the midpoint of that interval at every
    breakpoint where it is not a single point and interpolates linearly in between (feasible
    because the set of feasible ``(C, b)`` is convex); at the ``C`` where the interval
    shrinks to a point, points enter the elbow and the intercept is continuous there.

    *Singular kernels, duplicates, ties.* See :mod:`pathlib_core.homotopy`: a point whose
    kernel column is dependent on the elbow's stays at its bound with a zero multiplier
    (Hastie et al. 2004, sec. 6); simultaneous events are resolved jointly.

    Raises
    ------
    ValueError
        Bad input (non-finite values, shapes, labels, non-square or non-symmetric ``K``,
        ``C_max <= 0``, ``C_min`` outside ``(0, C_max]``).
    pathlib_core.homotopy.HomotopyError
        A degenerate event that cannot be resolved (reported with the ``C`` concerned).
    """
    Kv = as_kernel(K, "K")
    n = Kv.shape[0]
    yv = as_binary_labels(y, "y", length=n, length_of="K")
    C_max = positive_scalar(C_max, "C_max")
    check_choice(solver, "solver", ("lean", "generic"))
    if C_min is not None:
        C_min = positive_scalar(C_min, "C_min")
        if C_min > C_max:
            raise ValueError(f"C_min must be <= C_max; got C_min={C_min} > C_max={C_max}")
    Q = Kv * np.outer(yv, yv)
    prob = _make_problem(Q, -np.ones(n), None, yv[None, :], np.zeros(1), np.zeros(1),
                         np.zeros(n), None, np.zeros(n), np.ones(n))
    if alpha0 is None:
        x0 = _start_alpha(Kv, yv, C_max)
    else:
        from ._validation import as_vector

        x0 = np.clip(as_vector(alpha0, "alpha0", length=n, length_of="K"), 0.0, C_max)

    def record(p, t):
        st = p.state
        return SVMSolution(p.x, float(p.nu[0]), st == FREE, st == UPPER, st == LOWER)

    def residual(t, rec):
        return _svm_residual(Q, yv, t, rec.alpha, rec.intercept)

    C_end = 0.0 if C_min is None else C_min
    try:
        if solver == "generic":
            path = _trace(prob, C_max, C_end, x0=x0, param_name="C",
                          until_last_event=C_min is None, refactor_every=refactor_every,
                          record=record, residual=residual)
        else:
            params, points, events, info = trace_svm(
                prob, yv, C_max, C_end, x0, until_last_event=C_min is None,
                refactor_every=refactor_every)
            path = _assemble(prob, "C", params, points, events, -1, info, residual, record)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - defensive
        raise HomotopyError(f"linear algebra failure while tracing the SVM path: {exc}") from exc
    path.events = [Event(e.param, e.kind, e.indices,
                         {"from": _SET_NAMES.get(e.info["from"], e.info["from"]),
                          "to": _SET_NAMES.get(e.info["to"], e.info["to"])})
                   for e in path.events]
    return path
