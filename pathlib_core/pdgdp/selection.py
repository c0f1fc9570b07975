r"""Model selection by hyperparameter gradients through the explicit dual (Algorithm 2).

The model is the cost-sensitive SVM with a Gaussian ARD kernel (Example 2 of the PDGDP paper).
The paper writes it as a cost-sensitive "2-nu" SVM; its display was lost in our copy, and we use
the equivalent box-constrained C-form (the nu- and C-parameterizations of the SVM give the same
solutions, Chang and Lin 2001), which keeps the dual in the one form of
:mod:`pathlib_core.pdgdp.region`:

.. math::

    \min_{w, b, \xi} \tfrac12 \lVert w \rVert^2 + C \gamma \sum_{i \in I_+} \xi_i
      + C (1 - \gamma) \sum_{i \in I_-} \xi_i
    \quad \text{s.t.} \quad y_i (w^\top \phi_s(x_i) + b) \ge 1 - \xi_i,\; \xi_i \ge 0,

with the kernel ``k_s(x, x') = exp(-sum_k s_k (x_k - x'_k)^2)``. The paper's cost balance
:math:`\gamma \in (0, 1)` is called ``balance`` in the code (``gamma`` names only kernel
widths in this package). The dual has the bounds ``u_i = C balance`` (positives) /
``C (1 - balance)`` (negatives) and ``Q = (y y') o K_s``. The ``d + 2`` hyperparameters are
handled in unconstrained coordinates ``theta = (log C, logit balance, log s_1, ..., log s_d)``.

Validation cost on a set ``Z`` (the paper's generalization cost with type I / type II
coefficients ``c_1, c_2``) and its tanh smoothing:

.. math::

    E(\theta) = \frac{1}{|Z|} \sum_{j \in Z} \Bigl( c_1 [y_j = -1]\, [h(x_j) > 0]
        + c_2 [y_j = +1]\, [h(x_j) \le 0] \Bigr), \qquad
    [h > 0] \approx \tfrac12 \bigl(1 + \tanh(\beta h)\bigr),

with ``h(x) = sum_i alpha_i y_i k_s(x_i, x) + b``. Inside the critical region of the current
solution (fixed index sets ``F``, ``L``, ``U``) ``alpha`` and ``b`` are the explicit solution of
the KKT system of Theorem 1; its gradient with respect to every hyperparameter comes from *one*
adjoint solve with the same matrix ``M`` (reverse-mode differentiation of the closed form), and
the kernel part is contracted without the ``(d, n, n)`` tensor
(:func:`pathlib_core.core.kernels.ard_rbf_gradient_contract`).

:func:`select_hyperparameters` runs Algorithm 2 (stochastic gradient steps on mini-batches of
``Z`` with backtracking) and, as baselines with the same number of QP solves, random search
over all ``d + 2`` hyperparameters and grid search over ``(C, balance, one common scale)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..core.fit_result import FitResult
from ..core.kernels import ard_rbf_gradient_contract, ard_rbf_kernel
from ..core.states import FREE, LOWER, UPPER
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_matrix, as_vector, check_choice, positive_scalar
from .region import CriticalRegion, _DenseQ, _region_from_state, _region_libsvm

__all__ = [
    "SelectionResult",
    "CostSensitiveARD",
    "select_hyperparameters",
    "pack_hyperparameters",
    "unpack_hyperparameters",
]

SELECTION_METHODS = ("pdgdp", "random", "grid")


def pack_hyperparameters(C: float, balance: float, scales) -> np.ndarray:
    r"""``theta = (log C, logit balance, log s_1, ..., log s_d)``.

    .. math::

        \theta = \Bigl(\log C,\; \log\frac{\gamma}{1 - \gamma},\; \log s_1, \dots,
            \log s_d\Bigr) \in \mathbb R^{d + 2},

    the unconstrained coordinates in which Algorithm 2 takes its gradient steps.

    Parameters
    ----------
    C : float > 0
        Regularization weight of the cost-sensitive SVM.
    balance : float in (0, 1)
        Cost balance: the dual bounds are ``C balance`` (positives) and ``C (1 - balance)``
        (negatives). Not a kernel width.
    scales : array_like of shape (d,)
        ARD kernel scales ``s_k > 0`` of ``k_s(x, x') = exp(-sum_k s_k (x_k - x'_k)^2)``
        (any shape; flattened).

    Returns
    -------
    ndarray of shape (d + 2,)
        ``theta``.

    Notes
    -----
    The arguments are not validated: ``C <= 0``, ``balance`` outside (0, 1) or a scale
    ``<= 0`` gives NaN or infinite entries (with a NumPy ``RuntimeWarning``).
    """
    s = np.asarray(scales, dtype=float).reshape(-1)
    return np.concatenate([[np.log(C), np.log(balance) - np.log1p(-balance)], np.log(s)])


def unpack_hyperparameters(theta) -> tuple[float, float, np.ndarray]:
    r"""``(C, balance, scales)`` of ``theta`` (the inverse of :func:`pack_hyperparameters`).

    .. math::

        C = e^{\theta_0}, \qquad \gamma = \frac{1}{1 + e^{-\theta_1}}, \qquad
        s_k = e^{\theta_{k + 1}} \quad (k = 1, \dots, d).

    Parameters
    ----------
    theta : array_like of shape (d + 2,)
        ``(log C, logit balance, log s_1, ..., log s_d)``. Not validated (at least two
        entries are needed; very large entries overflow to ``inf`` with a ``RuntimeWarning``).

    Returns
    -------
    C : float
        Regularization weight, ``> 0``.
    balance : float
        Cost balance in (0, 1) (0 or 1 after rounding for extreme ``theta[1]``).
    scales : ndarray of shape (d,)
        ARD kernel scales, ``> 0``.
    """
    t = np.asarray(theta, dtype=float)
    return float(np.exp(t[0])), float(1.0 / (1.0 + np.exp(-t[1]))), np.exp(t[2:])


# ---------------------------------------------------------------------------------------------
# The problem: training set, validation set, costs
# ---------------------------------------------------------------------------------------------
@dataclass
class _Solution:
    """The exact SVM solution at ``theta`` with its critical region."""

    theta: np.ndarray
    region: CriticalRegion
    u: np.ndarray
    alpha: np.ndarray
    b: float
    from_qp: bool


class CostSensitiveARD:
    r"""The cost-sensitive ARD-kernel SVM of Example 2 on fixed training / validation data.

    Parameters
    ----------
    X_train, y_train : array_like
        Training data, labels in ``{-1, +1}``.
    X_val, y_val : array_like
        Validation data ``Z`` for the generalization cost.
    costs : (float, float)
        ``(c_1, c_2)``: cost of a type I error (false positive) and a type II error (false
        negative); the paper uses ``(1, 1)``.
    beta : float
        Slope of the tanh smoothing.
    tol : float
        Relative tolerance for "theta is inside the current critical region".
    """

    def __init__(self, X_train, y_train, X_val, y_val, *, costs=(1.0, 1.0), beta: float = 3.0,
                 tol: float = 1e-9):
        self.X = as_matrix(X_train, "X_train")
        self.y = as_binary_labels(y_train, "y_train", length=self.X.shape[0],
                                  length_of="X_train")
        self.Xv = as_matrix(X_val, "X_val")
        if self.Xv.shape[1] != self.X.shape[1]:
            raise ValueError(f"X_val must have {self.X.shape[1]} features (those of X_train); "
                             f"got {self.Xv.shape[1]}")
        self.yv = as_vector(y_val, "y_val", length=self.Xv.shape[0], length_of="X_val")
        if not set(np.unique(self.yv).tolist()) <= {-1.0, 1.0}:
            raise ValueError("y_val must contain only -1 and +1")
        c = np.asarray(costs, dtype=float).reshape(-1)
        if c.shape != (2,) or not np.all(np.isfinite(c)) or np.any(c < 0) or c.sum() <= 0:
            raise ValueError(f"costs must be two finite non-negative numbers (c_1, c_2), not "
                             f"both zero; got {costs!r}")
        self.costs = c
        self.beta = positive_scalar(beta, "beta")
        self.tol = positive_scalar(tol, "tol")
        self.d = self.X.shape[1]
        self.cv = np.where(self.yv > 0, c[1], c[0])  # cost of an error on each validation point
        self.n_qp = 0
        self.n_region = 0

    # -- parameters ------------------------------------------------------------------------------
    def check_theta(self, theta, name: str = "theta") -> np.ndarray:
        t = as_vector(theta, name)
        if t.shape[0] != self.d + 2:
            raise ValueError(f"{name} must have length d + 2 = {self.d + 2} "
                             f"(log C, logit balance, d log-scales); got {t.shape[0]}")
        return t

    def bounds(self, theta: np.ndarray):
        """``u`` and its derivatives with respect to ``log C`` and ``logit balance``."""
        C, g, _ = unpack_hyperparameters(theta)
        pos = self.y > 0
        u = np.where(pos, C * g, C * (1.0 - g))
        du_dlogc = u
        du_dlogit = np.where(pos, C * g * (1.0 - g), -C * g * (1.0 - g))
        return u, du_dlogc, du_dlogit

    def kernel(self, theta: np.ndarray, X=None) -> np.ndarray:
        """``K(X, X_train)`` at the scales of ``theta`` (``X`` defaults to the training set)."""
        s = np.exp(theta[2:])
        return ard_rbf_kernel(self.X, scales=s) if X is None else ard_rbf_kernel(X, self.X,
                                                                                 scales=s)

    # -- solving ---------------------------------------------------------------------------------
    def solve(self, theta: np.ndarray, previous: _Solution | None = None) -> _Solution:
        """The exact SVM at ``theta``: from ``previous``'s index sets if they stay optimal
        (thetaInsideRegion), else by one dual solve (solDual: libsvm, then the exact closed
        form of the region it identifies, finished by the active-set QP if needed)."""
        u = self.bounds(theta)[0]
        K = self.kernel(theta)
        qop = _DenseQ(np.outer(self.y, self.y) * K)
        if previous is not None:
            R0 = previous.region
            state = np.where(R0.free, FREE, np.where(R0.at_lower, LOWER, UPPER)).astype(np.int8)
            R = _region_from_state(qop, self.y, u, state, previous.alpha, previous.b, self.tol)
            if R._violation(u) <= self.tol:
                self.n_region += 1
                a, b, _ = R._evaluate(u)
                return _Solution(theta.copy(), R, u, a, b, False)
        # one call of the dual solver (the paper's solDual): libsvm, polished to the region
        R, _ = _region_libsvm(K, self.y, u, self.tol, qop)
        self.n_qp += 1
        a, b, _ = R._evaluate(u)
        return _Solution(theta.copy(), R, u, a, b, True)

    def decision(self, sol: _Solution, X) -> np.ndarray:
        """``h(x) = sum_i alpha_i y_i k(x_i, x) + b`` for the rows of ``X``."""
        S = np.flatnonzero(sol.alpha > 0)
        if S.size == 0:
            return np.full(X.shape[0], sol.b)
        Kx = ard_rbf_kernel(X, self.X[S], scales=np.exp(sol.theta[2:]))
        return Kx @ (sol.alpha[S] * self.y[S]) + sol.b

    def error_cost(self, h: np.ndarray, y: np.ndarray) -> float:
        """The (unsmoothed) generalization cost of decision values ``h`` on labels ``y``."""
        c = np.where(y > 0, self.costs[1], self.costs[0])
        wrong = np.where(y > 0, h <= 0, h > 0)
        return float(np.mean(c * wrong))

    def smoothed_cost(self, h: np.ndarray, idx: np.ndarray) -> tuple[float, np.ndarray]:
        """Smoothed cost on validation points ``idx`` and its derivative with respect to h."""
        yv, cv = self.yv[idx], self.cv[idx]
        th = np.tanh(self.beta * h)
        phi = cv * 0.5 * (1.0 - yv * th)
        dphi = -cv * 0.5 * yv * self.beta * (1.0 - th * th)
        m = idx.shape[0]
        return float(phi.sum() / m), dphi / m

    def hypergradient(self, sol: _Solution, idx: np.ndarray) -> tuple[float, np.ndarray]:
        """Smoothed validation cost on ``idx`` and its gradient in ``theta`` (closed form).

        Reverse mode through the KKT system of the region: ``lambda = M^{-1} [c_F; c_b]`` with
        ``c = dE/d(alpha, b)``; then ``dE/du_U = c_U - Q_UF lambda_F - lambda_b y_U`` and
        ``dE/ds = -sum_{i in F, j in S} lambda_i y_i y_j alpha_j dK_ij/ds
        + sum_{v, j in S} e_v y_j alpha_j dk(x_v, x_j)/ds``.
        """
        R, a, y = sol.region, sol.alpha, self.y
        F, U = R._F, R._U
        S = np.concatenate([F, U])
        s = np.exp(sol.theta[2:])
        Xb = self.Xv[idx]
        ay_S = a[S] * y[S]
        Kb = ard_rbf_kernel(Xb, self.X[S], scales=s) if S.size else np.zeros((idx.size, 0))
        h = Kb @ ay_S + sol.b
        E, e = self.smoothed_cost(h, idx)
        c_S = y[S] * (Kb.T @ e)
        c_F, c_U = c_S[:F.size], c_S[F.size:]
        rhs = np.concatenate([c_F, [e.sum()]])
        lam = R._solve_m(rhs) if R.degenerate != "no-free" else np.zeros(F.size + 1)
        lam_F, lam_b = lam[:-1], lam[-1]
        coef_U = c_U - lam_b * y[U]
        if F.size and U.size:
            coef_U = coef_U - R._qop.block(U, F) @ lam_F
        _, du_c, du_g = self.bounds(sol.theta)
        grad = np.zeros(self.d + 2)
        grad[0] = coef_U @ du_c[U]
        grad[1] = coef_U @ du_g[U]
        if S.size:
            grad[2:] = ard_rbf_gradient_contract(Xb, self.X[S], s, np.outer(e, ay_S), K=Kb,
                                                 wrt="log_scales")
            if F.size:
                G = -np.outer(lam_F * y[F], ay_S)
                grad[2:] += ard_rbf_gradient_contract(self.X[F], self.X[S], s, G,
                                                      K=R._qop.block(F, S) * np.outer(y[F],
                                                                                      y[S]),
                                                      wrt="log_scales")
        return E, grad

    def full_costs(self, sol: _Solution) -> tuple[float, float]:
        """``(E, smoothed E)`` on the whole validation set."""
        h = self.decision(sol, self.Xv)
        return self.error_cost(h, self.yv), self.smoothed_cost(h, np.arange(self.yv.size))[0]


# ---------------------------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------------------------
@dataclass(repr=False)
class SelectionResult(FitResult):
    """Outcome of :func:`select_hyperparameters`.

    Attributes
    ----------
    method : str
    theta : ndarray of shape (d + 2,)
        The selected hyperparameters (lowest validation cost seen; ties by smoothed cost).
    C, balance : float
    scales : ndarray of shape (d,)
    val_cost : float
        Unsmoothed validation cost of the selected model.
    history : dict of ndarray
        One entry per accepted iterate (Algorithm 2) or evaluated candidate (baselines):
        ``"val_cost"``, ``"val_smoothed"``, ``"n_qp"`` (cumulative QP solves), ``"C"``,
        ``"balance"``, ``"scales"`` (shape (T, d)); Algorithm 2 adds ``"batch_cost"``,
        ``"grad_norm"``, ``"step"``.
    n_qp_solves : int
    n_region_evaluations : int
        Solutions obtained inside the current critical region (no QP).
    n_iter : int
    time : float
    best_index : int
    """

    method: str
    theta: np.ndarray
    C: float
    balance: float
    scales: np.ndarray
    val_cost: float
    history: dict = field(repr=False)
    n_qp_solves: int
    n_region_evaluations: int
    n_iter: int
    time: float
    best_index: int
    _problem: CostSensitiveARD = field(repr=False)
    _solution: _Solution = field(repr=False)

    @property
    def status(self) -> str:
        """``"completed"``: the search spent its budget and returns the best point seen."""
        return "completed"

    @property
    def fun(self) -> float:
        """The validation cost of the selected model (``val_cost``)."""
        return float(self.val_cost)

    def decision_function(self, X) -> np.ndarray:
        """Decision values of the selected model."""
        Xv = as_matrix(X, "X")
        if Xv.shape[1] != self._problem.d:
            raise ValueError(f"X must have {self._problem.d} features; got {Xv.shape[1]}")
        return self._problem.decision(self._solution, Xv)

    def cost(self, X, y) -> float:
        """The generalization cost (same ``c_1, c_2``) of the selected model on ``(X, y)``."""
        h = self.decision_function(X)
        yv = as_vector(y, "y", length=h.shape[0], length_of="X")
        return self._problem.error_cost(h, yv)


# ---------------------------------------------------------------------------------------------
# Algorithm 2 and the baselines
# ---------------------------------------------------------------------------------------------
@single_blas_thread
def select_hyperparameters(X_train, y_train, X_val, y_val, *, method: str = "pdgdp",
                           budget: int = 186, max_iter: int = 350, C0: float = 1.0,
                           balance0: float = 0.5, scales0=None, costs=(1.0, 1.0),
                           beta: float = 3.0, batch_size: int | None = None,
                           max_step: float = 0.5, backtrack: float = 0.5,
                           max_backtrack: int = 4, search_radius=(3.0, 2.0),
                           random_state: int | None = 0) -> SelectionResult:
    r"""Choose the ``d + 2`` hyperparameters of the cost-sensitive ARD SVM.

    The model and the cost are in the module docstring. Methods, all limited to ``budget``
    QP solves (the paper's count of calls to its dual solver, solDual):

    ``"pdgdp"`` (Algorithm 2)
        From ``theta_0 = (log C0, logit balance0, log scales0)``: draw a mini-batch of the
        validation set, compute the smoothed cost and its exact gradient through the closed
        form of the current critical region, step ``theta - tau grad`` and backtrack
        (``tau <- r tau``, at most ``max_backtrack`` times) while the mini-batch cost does not
        decrease. A trial point inside the current region is solved without a QP
        (thetaInsideRegion); outside it, by the warm-started QP. The step is capped so that
        ``max |Delta theta| <= max_step`` (a trust region in the log / logit coordinates);
        after an accepted step without backtracking it grows by ``1 / sqrt(r)`` (up to that
        cap). Stops after ``max_iter`` iterations or at the budget.
    ``"random"``
        ``theta_0`` and then ``budget - 1`` points with ``log C`` and every ``log s_k`` drawn
        uniformly within ``search_radius`` (``(3, 2)``: +-3 in ``log C``, +-2 in each
        ``log s_k``) of ``theta_0`` and ``balance`` uniform in ``[0.05, 0.95]``.
    ``"grid"``
        A grid over ``(log C, balance, log s)`` with one common scale ``s`` for all features
        (``log C0 +- 3``, ``balance in [0.1, 0.9]``, ``log s in log mean(scales0) +- 2``); axis
        sizes as equal as possible with product <= ``budget``.

    Every method returns the candidate with the lowest unsmoothed validation cost.

    Parameters
    ----------
    X_train, y_train, X_val, y_val : array_like
        Training and validation data, labels in ``{-1, +1}``.
    method : {"pdgdp", "random", "grid"}
    budget : int
        Maximum number of QP solves (default 186, the count the paper reports).
    max_iter : int
        Algorithm 2's iterations (default 350, as in the paper's experiment).
    C0, balance0 : float
        Start: ``C > 0``, ``0 < balance < 1``.
    scales0 : float or array_like of shape (d,), optional
        Start of the ARD scales (default ``1 / median squared distance`` for every feature).
    costs : (float, float)
        ``(c_1, c_2)`` (type I, type II).
    beta : float
        tanh slope of the smoothed cost.
    batch_size : int, optional
        Validation points per stochastic step (default half of the validation set).
    max_step, backtrack, max_backtrack
        Step control of Algorithm 2; ``backtrack`` is the paper's ``r`` (it suggests
        ``[0.2, 0.8]``), any value in ``(0, 1)`` is accepted.
    search_radius : (float, float)
        Random search box half-widths in ``log C`` and in each ``log s_k``.
    random_state : int or None, default 0
        Seed of the mini-batches and of the random search.

    Returns
    -------
    SelectionResult
    """
    check_choice(method, "method", SELECTION_METHODS)
    prob = CostSensitiveARD(X_train, y_train, X_val, y_val, costs=costs, beta=beta)
    budget = _positive_int(budget, "budget")
    max_iter = _positive_int(max_iter, "max_iter")
    C0 = positive_scalar(C0, "C0")
    balance0 = positive_scalar(balance0, "balance0")
    if not balance0 < 1:
        raise ValueError(f"balance0 must be in (0, 1); got {balance0}")
    if scales0 is None:
        D = ard_rbf_kernel(prob.X, scales=np.ones(prob.d))
        med = float(np.median(-np.log(np.clip(D[np.triu_indices_from(D, 1)], 1e-300, None))))
        scales0 = np.full(prob.d, 1.0 / max(med, 1e-12))
    try:
        s0 = np.broadcast_to(np.asarray(scales0, dtype=float), (prob.d,)).copy()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scales0 must be one positive number or {prob.d} of them (one per "
                         f"feature); got {np.shape(scales0)}") from exc
    if not np.all(np.isfinite(s0)) or np.any(s0 <= 0):
        raise ValueError("scales0 must be positive and finite")
    r = positive_scalar(backtrack, "backtrack")
    if not r < 1:
        raise ValueError(f"backtrack must be in (0, 1) (the paper uses 0.2 to 0.8); got {r}")
    max_step = positive_scalar(max_step, "max_step")
    nv = prob.yv.shape[0]
    if batch_size is None:
        batch_size = max(1, nv // 2)
    batch_size = min(_positive_int(batch_size, "batch_size"), nv)
    theta0 = pack_hyperparameters(C0, balance0, s0)
    rng = np.random.default_rng(random_state)
    t_start = time.perf_counter()
    if method == "pdgdp":
        out = _algorithm2(prob, theta0, budget, max_iter, batch_size, max_step, r,
                          int(max_backtrack), rng)
    else:
        cands = (_random_candidates(prob, theta0, budget, search_radius, rng) if method == "random"
                 else _grid_candidates(theta0, budget, prob.d))
        out = _evaluate_candidates(prob, cands)
    elapsed = time.perf_counter() - t_start
    hist = {k: np.asarray(v) for k, v in out["hist"].items()}
    order = np.lexsort((hist["val_smoothed"], hist["val_cost"]))
    best = int(order[0])
    sol = out["solutions"][best]
    C, g, s = unpack_hyperparameters(sol.theta)
    return SelectionResult(method=method, theta=sol.theta, C=C, balance=g, scales=s,
                           val_cost=float(hist["val_cost"][best]), history=hist,
                           n_qp_solves=prob.n_qp, n_region_evaluations=prob.n_region,
                           n_iter=int(out["n_iter"]), time=elapsed, best_index=best,
                           _problem=prob, _solution=sol)


def _positive_int(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
    return int(v)


def _record(hist: dict, prob: CostSensitiveARD, sol: _Solution) -> None:
    E, Es = prob.full_costs(sol)
    C, g, s = unpack_hyperparameters(sol.theta)
    hist["val_cost"].append(E)
    hist["val_smoothed"].append(Es)
    hist["n_qp"].append(prob.n_qp)
    hist["C"].append(C)
    hist["balance"].append(g)
    hist["scales"].append(s)


def _new_hist(extra=()) -> dict:
    keys = ["val_cost", "val_smoothed", "n_qp", "C", "balance", "scales", *extra]
    return {k: [] for k in keys}


def _algorithm2(prob, theta0, budget, max_iter, batch_size, max_step, r, max_backtrack, rng):
    hist = _new_hist(("batch_cost", "grad_norm", "step"))
    sol = prob.solve(theta0)
    sols = [sol]
    _record(hist, prob, sol)
    nv = prob.yv.shape[0]
    step = None
    it = 0
    for it in range(1, max_iter + 1):
        if prob.n_qp >= budget:
            it -= 1
            break
        idx = np.sort(rng.choice(nv, size=batch_size, replace=False))
        E, grad = prob.hypergradient(sol, idx)
        gmax = float(np.max(np.abs(grad)))
        cap = max_step / max(gmax, 1e-300)  # no coordinate moves by more than max_step
        step = cap if step is None else min(step, cap)
        accepted = None
        tau = step
        for k in range(max_backtrack + 1):
            if prob.n_qp >= budget:
                break
            trial = prob.solve(sol.theta - tau * grad, sol)
            h = prob.decision(trial, prob.Xv[idx])
            if prob.smoothed_cost(h, idx)[0] < E:
                accepted = (trial, k)
                break
            tau *= r
        if accepted is None:
            step = tau  # no decrease on this batch: keep theta, keep the reduced step
        else:
            sol, k = accepted
            step = tau / np.sqrt(r) if k == 0 else tau
        sols.append(sol)
        _record(hist, prob, sol)
        hist["batch_cost"].append(E)
        hist["grad_norm"].append(float(np.linalg.norm(grad)))
        hist["step"].append(tau)
    for key in ("batch_cost", "grad_norm", "step"):
        hist[key].insert(0, np.nan)  # no step before the start
    return {"hist": hist, "solutions": sols, "n_iter": it}


def _random_candidates(prob, theta0, budget, radius, rng):
    rc, rs = (float(v) for v in radius)
    out = [theta0.copy()]
    for _ in range(budget - 1):
        t = theta0.copy()
        t[0] += rng.uniform(-rc, rc)
        g = rng.uniform(0.05, 0.95)
        t[1] = np.log(g) - np.log1p(-g)
        t[2:] += rng.uniform(-rs, rs, size=prob.d)
        out.append(t)
    return out


def _grid_sizes(budget: int, k: int = 3) -> list[int]:
    g = max(1, int(np.floor(budget ** (1.0 / k) + 1e-9)))
    sizes = [g] * k
    i = 0
    while True:
        trial = sizes.copy()
        trial[i % k] += 1
        if int(np.prod(trial)) > budget:
            break
        sizes = trial
        i += 1
    return sizes


def _grid_candidates(theta0, budget, d):
    nc, ng, ns = _grid_sizes(budget)
    logc = theta0[0] + np.linspace(-3.0, 3.0, nc)
    gam = np.linspace(0.1, 0.9, ng) if ng > 1 else np.array([0.5])
    logs = float(np.mean(theta0[2:])) + np.linspace(-2.0, 2.0, ns)
    out = []
    for a in logc:
        for g in gam:
            for s in logs:
                out.append(np.concatenate([[a, np.log(g) - np.log1p(-g)], np.full(d, s)]))
    return out


def _evaluate_candidates(prob, cands):
    hist = _new_hist()
    sols = []
    for t in cands:
        # one dual solve per candidate (no region shortcut for the baselines)
        sol = prob.solve(t)
        sols.append(sol)
        _record(hist, prob, sol)
    return {"hist": hist, "solutions": sols, "n_iter": len(cands)}
