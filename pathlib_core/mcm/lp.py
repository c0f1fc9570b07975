r"""The Minimal Complexity Machine (MCM) and conformal kernel optimization.

The MCM of Jayadeva (2015) learns ``f(x) = sum_j lambda_j K(x_j, x) + b`` by the linear
program of eqs. (30)-(33) of the course notes on the MCM and on conformal kernel optimization
(Badge, Soman, Chandra and Jayadeva 2021), the text this package reproduces:

.. math::

    \min_{\lambda, b, h, q} \; h + C \sum_i q_i
    \quad \text{s.t.} \quad
    h \ge y_i f(x_i) + q_i, \quad 1 \le y_i f(x_i) + q_i, \quad q_i \ge 0,

where ``h`` bounds ``h_MCM`` (eq. (14)), whose square is an exact bound on the VC dimension
(eq. (13)). :func:`fit_mcm` solves it with HiGHS and returns the primal-dual pair.

Well-posedness. With a full-rank kernel matrix the LP can *interpolate*: ``K lambda + b 1 = y``
has a solution for every ``b``, it gives ``y_i f(x_i) = 1`` for all ``i``, hence ``h = 1``,
``q = 0`` and the objective ``1``, which is the smallest value any feasible point can have
(``h >= y_i f(x_i) + q_i >= 1``). ``C`` then has no effect and generically every ``lambda_j`` is
non-zero. The option ``l1 > 0`` adds ``l1 * sum_j |lambda_j|`` to the objective (a norm of
``lambda``, as later MCM variants do), which keeps the problem a linear program, makes the
interpolating solutions costly and yields sparse ``lambda``.

The conformal kernel optimization of Badge et al. is in :mod:`pathlib_core.mcm.conformal`, the
scikit-learn estimators in :mod:`pathlib_core.mcm.estimators`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse
from scipy.optimize import linprog

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.kkt import KKTResiduals, lp_residuals
from ..core.threads import single_blas_thread
from ..core.validation import (
    as_binary_labels,
    as_kernel,
    as_matrix,
    check_choice,
    positive_scalar,
)

__all__ = ["MCMResult", "fit_mcm", "at_larger_C", "mcm_lp", "LP_METHODS", "C_RESOLVE", "C_MIN"]

#: ``method`` values accepted by :func:`fit_mcm` (scipy's HiGHS front ends).
LP_METHODS = ("highs", "highs-ds", "highs-ipm")
#: largest slack penalty solved as given: a larger ``C`` is solved at this value, which is the
#: solution for every larger ``C`` when it has no slack (see :func:`fit_mcm`)
C_RESOLVE = 1e12
#: smallest slack penalty accepted: below it the multipliers of the LP, whose differences
#: carry C next to the unit cost of h, are not resolved by HiGHS (feasibility tolerances
#: 1e-10), and its solution cannot be certified
C_MIN = 1e-8


def _pow2_inverse(v: float) -> float:
    """``2^-e`` with ``v = m 2^e``, ``0.5 <= m < 1`` (1 for ``v = 0``): ``v`` times it lies in
    ``[1/2, 1)``."""
    return 1.0 if v <= 0 else float(np.ldexp(1.0, -np.frexp(v)[1]))


# ---------------------------------------------------------------------------------------------
# The linear program
# ---------------------------------------------------------------------------------------------

class _KernelExpansion:
    """``decision_function`` of a model ``f(x) = sum_j lambda_j K(x_j, x) + b`` held as
    ``coef`` (``lambda``) and ``intercept`` (``b``): the records of :func:`fit_mcm` and of the
    path (:mod:`pathlib_core.mcm.path`)."""

    coef: np.ndarray
    intercept: float

    def decision_function(self, K_test) -> np.ndarray:
        """``f(x) = sum_j lambda_j K(x_j, x) + b`` for rows ``K_test[i, j] = K(x_i^test, x_j)``."""
        K_test = as_matrix(K_test, "K_test")
        if K_test.shape[1] != self.coef.shape[0]:
            raise ValueError(f"K_test must have {self.coef.shape[0]} columns (one per training "
                             f"point); got {K_test.shape[1]}")
        return K_test @ self.coef + self.intercept


@dataclass(repr=False)
class MCMResult(_KernelExpansion, FitResult):
    """Solution of the kernel MCM linear program (eqs. (30)-(33), optionally with ``l1``).

    Attributes
    ----------
    coef : ndarray of shape (n,)
        ``lambda``.
    intercept : float
        ``b``.
    h : float
        The bound ``h`` (``h >= 1`` at any feasible point).
    slack : ndarray of shape (n,)
        ``q``.
    objective : float
        ``h + C sum q + l1 sum |lambda|``.
    dual_upper, dual_lower : ndarray of shape (n,)
        Multipliers ``z^h >= 0`` of the constraints (31) ``y_i f(x_i) + q_i <= h`` and
        ``z^1 >= 0`` of (32) ``y_i f(x_i) + q_i >= 1``.
    dual_slack : ndarray of shape (n,)
        Multipliers of ``q_i >= 0``.
    support : ndarray of int
        Indices with ``|lambda_j| > sv_tol * max |lambda|`` (relative, so that it does not
        depend on the units of ``K``).
    kkt : KKTResiduals
        Residuals of the LP optimality conditions (absolute) of the LP actually solved.
    status, method, n_iter : str, str, int
        HiGHS status, the scipy method name and the iteration count.
    C, l1 : float
        The parameters.
    polish : float
        Largest change of a ``q_i`` or of ``h`` applied after HiGHS to make (31)-(32) hold
        exactly (HiGHS's tolerances apply to its scaled LP; a ``q_i`` at its bound stays 0,
        and with ``l1 > 0`` the tight rows are first corrected onto the LP's vertex);
        typically below 1e-12.
    rank : int
        Eigen-directions of ``K`` used (``l1 = 0``, see :func:`fit_mcm`); ``n`` when ``l1 > 0``.
    lp : dict
        The LP solved, in ``kkt.lp_residuals`` form (``c, G, h, lb, ub``), its design matrix
        ``A`` (``f = A theta + b``) and its primal-dual vector (``x, z, w_lb, w_ub``).
    """

    coef: np.ndarray
    intercept: float
    h: float
    slack: np.ndarray
    objective: float
    dual_upper: np.ndarray
    dual_lower: np.ndarray
    dual_slack: np.ndarray
    support: np.ndarray
    kkt: KKTResiduals
    status: str
    method: str
    n_iter: int
    C: float
    l1: float
    polish: float = 0.0
    rank: int = 0
    lp: dict = field(repr=False, default_factory=dict)

    @property
    def n_support(self) -> int:
        return int(self.support.size)


def _lp_matrices(A, y, *, C: float, l1: float, split: bool) -> dict:
    """``min c'x s.t. G x <= h, lb <= x`` for ``f = A theta + b`` (see :func:`mcm_lp`)."""
    n, p = A.shape
    YA = y[:, None] * A
    blocks = [YA, -YA] if split else [YA]
    n_th = 2 * p if split else p
    one, eye = np.ones((n, 1)), np.eye(n)
    G = np.vstack([
        np.hstack(blocks + [y[:, None], -one, eye]),
        np.hstack([-B for B in blocks] + [-y[:, None], np.zeros((n, 1)), -eye]),
    ])
    hvec = np.concatenate([np.zeros(n), -np.ones(n)])
    c = np.concatenate([np.full(n_th, float(l1)) if split else np.zeros(p), [0.0, 1.0],
                        np.full(n, float(C))])
    lb = np.concatenate([np.zeros(n_th) if split else np.full(p, -np.inf),
                         [-np.inf, -np.inf], np.zeros(n)])
    return {"c": c, "G": G, "h": hvec, "lb": lb, "ub": np.full(c.shape[0], np.inf), "n": n,
            "p": p, "split": split}


def _solve_sparse(A, y, *, C: float, l1: float, split: bool, null, method: str, n_lb):
    r"""Solve the LP of :func:`_lp_matrices` through an equivalent sparse reformulation.

    The dense form repeats the ``n x p`` block ``Y A`` in both constraint families (31) and
    (32). Here the margins ``g_i = y_i f(x_i)`` are separate variables, so (31)-(32) become the
    sparse rows ``g_i + q_i - h <= 0`` and ``-g_i - q_i <= -1``, and ``f`` is tied to the model
    by equalities:

    * *margin form* (``l1 > 0``, or a rank-deficient range form): ``Y A theta + y b - g = 0``
      (``n`` dense rows instead of ``2n``);
    * *null-space form* (``l1 = 0`` and ``K`` of full numerical rank): the variables are ``f``
      itself, which is unrestricted because ``f - b 1`` may be any vector of the range of
      ``U``, and ``theta = U'(f - b 1)``. The LP has no dense row at all. (With dropped
      eigenvectors ``V`` the restriction ``V'(f - b 1) = 0`` would be needed; HiGHS meets such
      equalities only to its feasibility tolerance, and projecting afterwards cost up to
      1e-6 in the objective on data with duplicates, so that case uses the margin form.)

    Both have the same feasible set in ``(f, b, h, q)`` and the same inequality rows, so the
    multipliers ``z`` of (31)-(32) and of ``q >= 0`` are those of the dense LP (the equality
    multipliers are eliminated by stationarity in ``g`` or ``f``). Returns the dense-form
    primal ``x = (theta, b, h, q)``, ``z``, the bound multipliers ``w_lb`` and HiGHS's
    iteration count.
    """
    n, p = A.shape
    n_th = 2 * p if split else p
    eye = scipy.sparse.identity(n, format="csr")
    col = scipy.sparse.csr_matrix(np.ones((n, 1)))
    use_null = (not split) and null.shape[1] == 0
    if use_null:
        # variables (f, b, h, q)
        Yd = scipy.sparse.diags(y)
        A_ub = scipy.sparse.bmat([[Yd, None, -col, eye], [-Yd, None, None, -eye]],
                                 format="csc")
        # b's column has no inequality entries: bmat needs a shape for it
        A_ub = scipy.sparse.hstack([A_ub[:, :n], scipy.sparse.csc_matrix((2 * n, 1)),
                                    A_ub[:, n:]], format="csc")
        m = null.shape[1]
        if m:
            A_eq = np.hstack([null.T, -(null.sum(axis=0))[:, None], np.zeros((m, n + 1))])
            b_eq = np.zeros(m)
        else:
            A_eq = b_eq = None
        c = np.concatenate([np.zeros(n + 1), [1.0], np.full(n, float(C))])
        bounds = [(None, None)] * (n + 2) + [(0.0, None)] * n
        q_at = n + 2
    else:
        # variables (theta, b, h, q, g)
        YA = y[:, None] * A
        blocks = [YA, -YA] if split else [YA]
        A_eq = np.hstack(blocks + [y[:, None], np.zeros((n, 1 + n)), -np.eye(n)])
        b_eq = np.zeros(n)
        zero_th = scipy.sparse.csr_matrix((n, n_th + 1))
        A_ub = scipy.sparse.bmat([[zero_th, -col, eye, eye], [zero_th, None, -eye, -eye]],
                                 format="csc")
        c = np.concatenate([np.full(n_th, float(l1)) if split else np.zeros(p), [0.0, 1.0],
                            np.full(n, float(C)), np.zeros(n)])
        bounds = ([(v if np.isfinite(v) else None, None) for v in n_lb]
                  + [(None, None)] * n)
        q_at = n_th + 2
    b_ub = np.concatenate([np.zeros(n), -np.ones(n)])
    res = _highs(c, A_ub, b_ub, A_eq, b_eq, bounds, method)
    v = np.asarray(res.x, dtype=float)
    lower = np.asarray(res.lower.marginals, dtype=float)
    x = np.empty(n_th + 2 + n)
    w_lb = np.zeros(n_th + 2 + n)
    if use_null:
        f, b = v[:n], v[n]
        x[:p] = A.T @ (f - b)
        x[p:] = v[n:]
    else:
        x[:] = v[:n_th + 2 + n]
        w_lb[:n_th] = np.where(np.isfinite(n_lb[:n_th]), lower[:n_th], 0.0)
    w_lb[n_th + 2:] = lower[q_at:q_at + n]
    z = -np.asarray(res.ineqlin.marginals, dtype=float)
    nit = getattr(res, "nit", None)
    return x, z, w_lb, int(nit) if nit is not None else -1


#: HiGHS's feasibility tolerances (its defaults, 1e-7, let a row of (32) miss by 1e-7, which
#: a large C turns into an objective error of C * 1e-7)
#: HiGHS's options for the LPs of :func:`fit_mcm`. Presolve is off: it finds little to remove
#: in these LPs (dense kernel rows, no fixed or singleton columns) and costs more than it
#: saves. Measured on the MCM-l1 grid of one outer fold (27 grid points x 3 inner folds,
#: the same 81 validation accuracies either way): german 69.5 s -> 64.2 s, mammographic
#: 24.9 s -> 18.7 s. (The parametric solver of :mod:`pathlib_core.mcm.path` keeps it: there
#: it changed where the paths on low-rank kernels fail, and slowed them.)
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
                  "presolve": False}
#: HiGHS's iterations are capped at this many times the LP's rows plus columns (a solve takes
#: one to three times its rows): on a numerically low-rank kernel the simplex can cycle
#: without end, and the cap turns that into a reported failure
ITERATION_FACTOR = 10
#: the interior-point method's own cap: where it succeeds it needs tens of iterations (at
#: most 60 over the profiled LPs of the reproduction), while the simplex cap above, which
#: scipy also hands to the IPM, let a stalled IPM run for minutes before failing
IPM_ITERATION_LIMIT = 1000


def iteration_limit(n_rows: int, n_cols: int) -> int:
    """The cap on HiGHS's iterations for an LP of that size (:data:`ITERATION_FACTOR`)."""
    return int(ITERATION_FACTOR * (n_rows + n_cols))


def _refine_vertex(lp, x, z, w_lb):
    """One least-squares correction of an LP solution onto its own vertex: the rows with a
    positive multiplier (tight by complementarity) are made to hold with equality, the
    variables with a positive bound multiplier stay exactly at their bound, and the others
    move by the minimum-norm correction. HiGHS meets its feasibility tolerance on its
    internally scaled LP, which leaves such rows off by about 1e-9 after unscaling; the
    correction brings them to rounding level without touching complementarity. Kept only if
    it does not increase the largest violation of ``G x <= h``."""
    G, h = lp["G"], lp["h"]
    tight = z > 0
    free = ~(w_lb > 0)
    if not tight.any() or not free.any():
        return x
    r = h[tight] - G[tight] @ x
    delta = np.linalg.lstsq(G[np.ix_(tight, free)], r, rcond=None)[0]
    xn = x.copy()
    xn[free] += delta
    xn = np.maximum(xn, lp["lb"])
    if np.max(G @ xn - h) <= max(np.max(G @ x - h), 0.0):
        return xn
    return x


def _refine_duals(lp, z, w_lb):
    """The dual counterpart of :func:`_refine_vertex`: the multipliers of the tight rows are
    corrected (minimum norm) so that the reduced costs of the variables off their bounds
    vanish, and the bound multipliers are recomputed from stationarity. HiGHS's dual
    tolerance leaves those reduced costs at about 1e-10 of its scaled costs. Kept only if
    every multiplier stays non-negative and stationarity improves."""
    c, G = lp["c"], lp["G"]
    tight = z > 0
    free = ~(w_lb > 0)
    if not tight.any():
        return z, w_lb
    grad = c + G.T @ z
    r_free = grad[free]
    dz = np.linalg.lstsq(G[np.ix_(tight, free)].T, -r_free, rcond=None)[0]
    zn = z.copy()
    zn[tight] += dz
    wn = np.where(free, 0.0, c + G.T @ zn)
    if np.any(zn < 0) or np.any(wn < 0):
        return z, w_lb
    old = np.abs(grad - w_lb).max()
    new = np.abs(c + G.T @ zn - wn).max()
    return (zn, wn) if new <= old else (z, w_lb)


def _highs(c, A_ub, b_ub, A_eq, b_eq, bounds, method):
    """``linprog`` (HiGHS, :data:`_HIGHS_OPTIONS`, iterations capped by
    :func:`iteration_limit`, and by :data:`IPM_ITERATION_LIMIT` for the interior point). If
    HiGHS does not report an optimal solution with ``method``, the other methods of
    :data:`LP_METHODS` are tried; if none does,
    :class:`~pathlib_core.core.exceptions.SolverError` says so."""
    tried = []
    rows = A_ub.shape[0] + (0 if A_eq is None else np.shape(A_eq)[0])
    options = dict(_HIGHS_OPTIONS, maxiter=iteration_limit(rows, len(c)))
    for m in [method] + [m for m in LP_METHODS if m != method]:
        opts = options if m != "highs-ipm" else dict(
            options, maxiter=min(options["maxiter"], IPM_ITERATION_LIMIT))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                          method=m, options=opts)
        if res.status == 0 and res.x is not None:
            return res
        tried.append(f"{m}: status {res.status} ({res.message})")
    raise SolverError("the MCM linear program was not solved by HiGHS (" + "; ".join(tried)
                     + "); the LP is feasible and bounded, so this is a numerical failure")


@single_blas_thread
def mcm_lp(K, y, *, C: float, l1: float = 0.0) -> dict:
    r"""The kernel MCM exactly as written in eqs. (30)-(33): ``min c'x s.t. G x <= h, x >= lb``.

    Variables ``x = (lambda, b, h, q)`` when ``l1 == 0`` and ``x = (lambda^+, lambda^-, b, h,
    q)`` (``lambda = lambda^+ - lambda^-``, both ``>= 0``) when ``l1 > 0``. The rows of ``G``
    are eq. (31) ``y_i (K_i lambda + b) + q_i - h <= 0`` then eq. (32)
    ``-y_i (K_i lambda + b) - q_i <= -1``. :func:`fit_mcm` solves this form when ``l1 > 0``
    and the equivalent range form (see there) when ``l1 == 0``.

    .. math::

        \min_x \; c^\top x \quad \text{s.t.} \quad G x \le h, \quad lb \le x \le ub,
        \qquad
        c^\top x = h_{\mathrm{MCM}} + C \sum_{i=1}^n q_i + \ell_1 \sum_{j=1}^n
            (\lambda^+_j + \lambda^-_j),

    where :math:`h_{\mathrm{MCM}}` is the variable ``h`` of the MCM (not the right-hand side
    ``h`` of the LP) and the last sum is present only with the split variables (``l1 > 0``).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Training kernel matrix (symmetric to a relative ``1e-8``; it is symmetrized).
    y : array_like of shape (n,)
        Labels in {-1, +1}; both classes must be present.
    C : float > 0
        Slack penalty (keyword-only, no default).
    l1 : float >= 0, default 0.0
        Weight of ``sum_j |lambda_j|``; ``l1 > 0`` selects the split variables.

    Returns
    -------
    dict
        ``"c"`` (objective, length ``m``), ``"G"`` (shape ``(2n, m)``, the rows of (31) then
        of (32)), ``"h"`` (length ``2n``: zeros then ``-1``), ``"lb"`` (``0`` for ``q`` and
        for ``lambda^+`` / ``lambda^-``, ``-inf`` otherwise), ``"ub"`` (all ``+inf``),
        ``"n"`` (number of points), ``"p"`` (number of columns of ``K``, i.e. ``n``) and
        ``"split"`` (``l1 > 0``); ``m = n + 2 + n`` without and ``m = 2n + 2 + n`` with the
        split. The arrays are in the form :func:`pathlib_core.core.kkt.lp_residuals` takes.
        Arguments are checked as in :func:`fit_mcm` (``ValueError`` naming the argument).

    Raises
    ------
    ValueError
        A non-square, non-symmetric or non-finite ``K``, labels that are not -1 / +1 or of one
        class only, ``C <= 0`` or ``l1 < 0``.
    """
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    C = positive_scalar(C, "C")
    l1 = positive_scalar(l1, "l1", allow_zero=True)
    return _lp_matrices(K, y, C=C, l1=l1, split=l1 > 0)


@single_blas_thread
def fit_mcm(K, y, *, C: float = 1.0, l1: float = 0.0, method: str = "highs",
            sv_tol: float = 1e-8, rank_tol: float = 1e-10) -> MCMResult:
    r"""Solve the kernel Minimal Complexity Machine LP (eqs. (30)-(33) of the MCM notes).

    .. math::

        \min_{\lambda, b, h, q} \; h + C \sum_{i=1}^M q_i + \ell_1 \sum_{j=1}^M |\lambda_j|
        \quad \text{s.t.} \quad
        h \ge y_i \Big(\sum_j \lambda_j K(x_j, x_i) + b\Big) + q_i, \quad
        1 \le y_i \Big(\sum_j \lambda_j K(x_j, x_i) + b\Big) + q_i, \quad q_i \ge 0.

    ``l1 = 0`` (the default) is the paper's LP; ``l1 > 0`` adds the norm of ``lambda`` that
    makes the problem well posed with a full-rank kernel (see the module docstring).

    How it is solved. With ``l1 > 0`` the LP is passed to HiGHS as written (:func:`mcm_lp`).
    With ``l1 = 0`` only ``K lambda`` enters the LP, so ``lambda`` is not identified when ``K``
    is singular, and directions of ``K`` with tiny eigenvalues let the LP reach other optima
    through ``|lambda| ~ 1 / eigenvalue`` (on RBF kernels of low-dimensional data HiGHS's dual
    simplex and interior point then return different objective values, both "optimal"). We
    therefore solve the same LP over ``f = U beta + b``, where ``K = U S U'`` restricted to the
    eigenvalues ``> rank_tol * max``, and return the minimum-norm representer
    ``lambda = U S^{-1} beta`` (then ``K lambda = U beta`` exactly, and every ``lambda_j`` is
    in general non-zero: the plain MCM's support vectors are not a property of the model).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Training kernel matrix (symmetric; need not be positive definite for the LP).
    y : array_like of shape (n,)
        Labels in {-1, +1}; both classes must be present.
    C : float
        Slack penalty, > 0.
    l1 : float
        Weight of ``sum |lambda_j|``, >= 0.
    method : {"highs", "highs-ds", "highs-ipm"}
        HiGHS algorithm (``"highs"`` lets HiGHS choose; ``"highs-ds"`` dual simplex;
        ``"highs-ipm"`` interior point with crossover).
    sv_tol : float
        ``j`` is a support vector when ``|lambda_j| > sv_tol * max_k |lambda_k|``.
    rank_tol : float
        Relative eigenvalue cut-off of the range form (``l1 = 0`` only).

    Scale and extreme parameters. The LP is solved for ``K / 2^e`` (largest entry in
    ``[1/2, 1)``) and ``l1 / 2^e``: ``(s K, lambda / s, l1 s)`` is the same problem for any
    ``s > 0``, so a kernel of any size gives the same ``b``, ``h``, ``q`` and objective, and
    ``lambda`` in the user's units (exactly so for a power-of-two ``s``). A ``C`` above
    ``C_RESOLVE = 1e12`` cannot be resolved next to the unit cost of ``h``: the LP is then
    solved at ``C_RESOLVE``, whose solution is the solution for every larger ``C`` when it
    has no slack (``q = 0``), and ``ValueError`` is raised otherwise. HiGHS runs with
    feasibility tolerances 1e-10; if the requested ``method`` does not report an optimum,
    the other two are tried. The residuals of the LP certificate in relative form
    (``kkt.lp_residuals(..., relative=True)`` on ``lp``) are at rounding level, 1e-16 to
    1e-10 (HiGHS's dual tolerance).

    Returns
    -------
    MCMResult
        ``kkt`` holds the residuals of the LP actually solved; ``rank`` the number of
        eigen-directions kept (``n`` for ``l1 > 0``).

    Raises
    ------
    ValueError
        Bad input (naming the argument), or a ``C`` above ``C_RESOLVE`` whose solution keeps
        slack.
    SolverError
        No HiGHS method reports an optimal solution (the LP is always feasible and bounded,
        so this means a numerical failure; the message names ``l1`` when it is far from the
        scale of ``K``, e.g. a linear kernel of features whose scales differ by twelve
        orders of magnitude).
    """
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    if np.unique(y).size < 2:
        raise ValueError("y must contain both classes -1 and +1; got only one class")
    C = positive_scalar(C, "C")
    if C < C_MIN:
        raise ValueError(f"C must be at least {C_MIN:g} (the LP's multipliers are not resolved "
                         f"in double precision below it, next to the unit cost of h); got {C:g}")
    l1 = positive_scalar(l1, "l1", allow_zero=True)
    method = check_choice(method, "method", LP_METHODS)
    sv_tol = positive_scalar(sv_tol, "sv_tol", allow_zero=True)
    rank_tol = positive_scalar(rank_tol, "rank_tol", allow_zero=True)
    n = K.shape[0]
    split = l1 > 0
    # the LP is solved for K / 2^e (largest entry in [1/2, 1)) and l1 / 2^e: with f = K lambda
    # + b, (sK, lambda / s, l1 s) is the same problem for any s > 0 (b, h, q, the objective and
    # the multipliers of (31)-(32) do not change), and a power of two keeps it exact; HiGHS
    # rejects the matrix of a kernel of size 1e16 ("model error")
    C_solve = min(C, C_RESOLVE)
    sig = _pow2_inverse(float(np.max(np.abs(K)))) if n else 1.0
    K_user, K = K, K * sig
    if split:
        A, rank = K, n
    else:
        s, U = np.linalg.eigh(K)
        smax = float(np.max(np.abs(s)))
        keep = np.abs(s) > rank_tol * smax if smax > 0 else np.zeros(n, dtype=bool)
        A, s_kept, rank = U[:, keep], s[keep], int(keep.sum())
    l1_solve = l1 * sig
    lp = _lp_matrices(A, y, C=C_solve, l1=l1_solve, split=split)
    p = lp["p"]
    n_th = 2 * p if split else p
    null = None if split else U[:, ~keep]
    try:
        x, z, w_lb, n_iter = _solve_sparse(A, y, C=C_solve, l1=l1_solve, split=split,
                                           null=null, method=method, n_lb=lp["lb"])
    except SolverError as exc:
        cause = (f"; l1 is {l1_solve:.3g} times the largest entry of K, next to the unit cost "
                 f"of h: the norm of lambda is then hardly resolved (rescale K or choose l1 of "
                 f"the order of max|K|)" if split and not 1e-8 <= l1_solve <= 1e8 else
                 "; try a larger rank_tol, l1 > 0 or a C closer to 1")
        raise SolverError(str(exc) + cause) from exc
    # HiGHS's tolerances apply to its internally scaled LP: where a tight row or a reduced
    # cost is off by more than rounding (relative to its terms), correct the primal and the
    # dual onto the vertex HiGHS found (small least-squares systems)
    if lp_residuals(lp["c"], x, G=lp["G"], h=lp["h"], lb=lp["lb"], ub=lp["ub"], z=z,
                    w_lb=w_lb, w_ub=np.zeros_like(w_lb), relative=True).max > 1e-13:
        x = _refine_vertex(lp, x, z, w_lb)
        z, w_lb = _refine_duals(lp, z, w_lb)
    theta = x[:p] - x[p:2 * p] if split else x[:p].copy()
    # Polish: HiGHS meets its tolerances on its scaled LP; after unscaling, (31)-(32) can be
    # violated by ~1e-10. Raising q and h by that amount restores exact feasibility (to
    # rounding); the change is reported as ``polish``. A q_i at its bound (multiplier of
    # q_i >= 0 positive) stays exactly 0: raising it would break complementarity, and a large
    # C would turn the rounding into an objective error (C * 1e-10)
    yf = y * (A @ theta + x[n_th])
    at_bound = w_lb[n_th + 2:] > 0
    q_new = np.where(at_bound, 0.0, np.maximum(x[n_th + 2:], np.maximum(1.0 - yf, 0.0)))
    h_new = max(float(x[n_th + 1]), float(np.max(yf + q_new)))
    polish = max(float(np.max(np.abs(q_new - x[n_th + 2:]))), h_new - float(x[n_th + 1]))
    x[n_th + 2:], x[n_th + 1] = q_new, h_new
    if C > C_solve and np.any(x[n_th + 2:] > 0):
        raise ValueError(f"C = {C:g} is beyond what the LP's costs resolve in double precision "
                         f"next to the unit cost of h; at C = {C_RESOLVE:g} the solution still "
                         f"has slack (sum q = {float(x[n_th + 2:].sum()):.3g}), so it is not the "
                         f"solution for every larger C: use C <= {C_RESOLVE:g}")
    if split:  # back to the user's units: theta = sigma theta_solved, its multipliers / sigma
        x[:n_th] *= sig
        w_lb[:n_th] /= sig
        lp = _lp_matrices(K_user, y, C=C_solve, l1=l1, split=True)
        A = K_user
    else:
        lp = _lp_matrices(A, y, C=C_solve, l1=l1, split=False)
    w_ub = np.zeros_like(w_lb)
    kkt = lp_residuals(lp["c"], x, G=lp["G"], h=lp["h"], lb=lp["lb"], ub=lp["ub"], z=z,
                       w_lb=w_lb, w_ub=w_ub)
    lam = x[:p] - x[p:2 * p] if split else sig * (A @ (theta / s_kept))
    b, h, q = float(x[n_th]), float(x[n_th + 1]), x[n_th + 2:].copy()
    support = np.flatnonzero(np.abs(lam) > sv_tol * float(np.max(np.abs(lam), initial=0.0)))
    objective = h + C_solve * float(q.sum()) + l1 * float(np.abs(lam).sum())
    lp.update({"x": x, "z": z, "w_lb": w_lb, "w_ub": w_ub, "A": A})
    res = MCMResult(coef=lam, intercept=b, h=h, slack=q, objective=objective,
                    dual_upper=z[:n].copy(), dual_lower=z[n:].copy(),
                    dual_slack=w_lb[n_th + 2:].copy(), support=support, kkt=kkt,
                    status="optimal", method=method, n_iter=n_iter,
                    C=C_solve, l1=l1, polish=polish, rank=rank, lp=lp)
    if C > C_solve:  # slack-free at C_RESOLVE (checked above), hence optimal at C
        res = dataclasses.replace(at_larger_C(res, C), n_iter=n_iter)
    return res


def at_larger_C(result: MCMResult, C: float) -> MCMResult:
    r"""The MCM solution at a larger ``C`` from one without slack, with no LP solve.

    When the solution at ``C_0`` has ``q = 0``, it is optimal for every ``C >= C_0``: its
    objective ``h + l1 |lambda|_1`` does not depend on ``C``, and any feasible point has
    ``h' + l1 |lambda'|_1 + C sum q' >= h' + l1 |lambda'|_1 + C_0 sum q' >= h + l1
    |lambda|_1``. The primal and the multipliers of (31)-(32) are kept; the multipliers of
    ``q_i >= 0`` take the extra cost ``C - C_0`` (they stay complementary to ``q = 0``), and
    the residuals of the certificate are recomputed for the new costs. This is how
    :func:`fit_mcm` treats a ``C`` above :data:`C_RESOLVE`.

    Parameters
    ----------
    result : MCMResult
        A solution of :func:`fit_mcm` whose slack ``q`` is zero in every entry.
    C : float
        The new slack penalty, at least ``result.C``.

    Returns
    -------
    MCMResult
        The same ``lambda``, ``b``, ``h`` and support; ``C``, the dual slack and ``kkt``
        for the new penalty, ``n_iter = 0``.

    Raises
    ------
    ValueError
        ``result`` has slack, or ``C`` is below ``result.C``.
    """
    C = positive_scalar(C, "C")
    if C < result.C:
        raise ValueError(f"C must be at least result.C = {result.C:g}; got {C:g}")
    if np.any(result.slack != 0.0):
        raise ValueError("result must have no slack (q = 0) to be optimal at a larger C; it has "
                         f"{int(np.count_nonzero(result.slack))} non-zero q_i")
    lp = dict(result.lp)
    n, n_th = lp["n"], (2 * lp["p"] if lp["split"] else lp["p"])
    qs = slice(n_th + 2, n_th + 2 + n)
    c, w_lb = lp["c"].copy(), lp["w_lb"].copy()
    c[qs] = C
    w_lb[qs] += C - result.C
    kkt = lp_residuals(c, lp["x"], G=lp["G"], h=lp["h"], lb=lp["lb"], ub=lp["ub"], z=lp["z"],
                       w_lb=w_lb, w_ub=lp["w_ub"])
    lp.update(c=c, w_lb=w_lb)
    return dataclasses.replace(result, C=C, dual_slack=w_lb[qs].copy(), kkt=kkt, n_iter=0,
                               lp=lp)


def _linear_mcm(X, y, *, C, method, sv_tol):
    r"""The MCM LP with the linear kernel ``K = X X'`` and ``l1 = 0`` from the columns of ``X``.

    With ``l1 = 0`` only the range of ``K`` enters the LP (see :func:`fit_mcm`), and it is
    the range of ``X`` -- also of ``X S`` for any diagonal ``S > 0``. The LP is solved for
    the column-normalized design (every column of unit norm), whose kernel keeps the
    directions of small columns that ``X X'`` loses to rounding when the columns' scales
    differ by many orders of magnitude (1e-6 next to 1e6 gives entries 1e24 apart): the
    training decision values are those of the user's kernel. The weights ``w`` with
    ``X w = f - b`` (``f`` the decision values) are then found on the normalized columns and
    scaled back; they are unique when ``X`` has full column rank, and otherwise the
    minimum-norm solution for the normalized features. Returns ``(result, w)``; the result's
    ``coef`` are the minimum-norm multipliers ``lambda`` with ``X' lambda = w``.
    """
    norms = np.sqrt(np.einsum("ij,ij->j", X, X))
    d = np.where(norms > 0, norms, 1.0)
    Xs = X / d
    res = fit_mcm(Xs @ Xs.T, y, C=C, method=method, sv_tol=sv_tol)
    f = res.lp["A"] @ res.lp["x"][:res.lp["p"]]  # K lambda = A theta (range form)
    w = np.linalg.lstsq(Xs, f, rcond=None)[0] / d
    lam = np.linalg.lstsq(X.T, w, rcond=None)[0]
    res.coef = lam
    res.support = np.flatnonzero(np.abs(lam) > sv_tol * float(np.max(np.abs(lam), initial=0)))
    return res, w
