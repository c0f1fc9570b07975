r"""Robust learners outside self-paced learning: the baselines of Appendix D.6 of Qu, Li, Zhao
and Gu (NeurIPS 2022), Tables 7 and 8.

The paper compares GAGA with four robust models and names them only by reference; this
module implements one documented version of each (the paper gives no formulas):

- :func:`huber_lasso_fit` -- the Lasso with the Huber loss, "a special case of the
  generalized model" of Nasrabadi, Tran and Nguyen (NeurIPS 2011, the paper's ref. [51]),
  solved by FISTA (accelerated proximal gradient);
- :func:`lssvm_fit` -- the (weighted) least-squares SVM of Suykens et al., one linear system;
- :func:`rlssvm_fit` -- RLSSVM: the LS-SVM with the *truncated* least-squares loss of Yang,
  Tan and He (Neurocomputing 140, 2014, the paper's ref. [49]), solved by the concave-convex
  procedure (CCCP), each step one LS-SVM system;
- :func:`relssvm_fit` -- Re-LSSVM: the iteratively *re-weighted* LS-SVM (Suykens et al.'s
  weights, De Brabanter et al.'s iteration) with a least-trimmed-squares scale estimate, our
  reading of Chen, Yan and Li (Neurocomputing 168, 2015, the paper's ref. [48]);
- :func:`robust_svm_fit` -- the label-noise robust SVM of Biggio, Nelson and Laskov (ACML
  2011, the paper's ref. [50]): an SVM on a kernel matrix corrected for random label flips,
  solved by scikit-learn's ``SVC`` on the precomputed corrected kernel.

The LS-SVMs serve for regression and for classification alike (an LS-SVM classifier is the
LS-SVM regression of the labels in :math:`\{-1, +1\}`, because :math:`y_i^2 = 1`). Every fit
returns a :class:`RobustFitResult` whose :meth:`~RobustFitResult.decision_function` gives the
prediction (regression) or the signed score (classification).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from sklearn.svm import SVC

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.kernels import gamma_value, kernel_from_name
from ..core.validation import (
    as_matrix,
    as_vector,
    check_choice,
    encode_binary_labels,
    positive_int,
    positive_scalar,
)

__all__ = ["RobustFitResult", "huber_loss", "huber_lasso_fit", "lssvm_fit", "rlssvm_fit",
           "relssvm_fit", "robust_svm_fit", "suykens_weights"]

_KERNELS = ("linear", "rbf")


@dataclass(repr=False)
class RobustFitResult(FitResult):
    r"""One fit of a robust baseline.

    Attributes
    ----------
    method : str
        ``"huber_lasso"``, ``"lssvm"``, ``"rlssvm"``, ``"relssvm"`` or ``"robust_svm"``.
    coef : ndarray of shape (d,) or None
        Primal weights (linear kernel; None for the Gaussian kernel).
    intercept : float
        The bias :math:`b`.
    dual_coef : ndarray of shape (n,) or None
        Kernel methods: the expansion :math:`f(x) = \sum_i a_i k(x, x_i) + b` (``a`` here).
    objective : float
        The method's objective at the returned point (see each fit).
    n_iter : int
        Iterations (FISTA steps, CCCP or reweighting rounds; 1 for one linear system).
    sample_weight : ndarray of shape (n,) or None
        The final weights of the reweighted LS-SVMs (``relssvm``), the indicator of the
        points outside the truncation (``rlssvm``: 0 = truncated).
    status : str
        ``"optimal"`` / ``"converged"`` or ``"max_iter"``.
    """

    method: str
    coef: np.ndarray | None
    intercept: float
    dual_coef: np.ndarray | None = None
    objective: float = float("nan")
    n_iter: int = 1
    sample_weight: np.ndarray | None = None
    status: str = "optimal"
    _X: np.ndarray | None = field(default=None, repr=False)
    _kernel: object = field(default=None, repr=False)

    def decision_function(self, X) -> np.ndarray:
        """Prediction (regression) or signed score (classification) at the rows of ``X``."""
        Z = as_matrix(X, "X")
        if self.coef is not None:
            if Z.shape[1] != self.coef.shape[0]:
                raise ValueError(f"X must have {self.coef.shape[0]} columns; got {Z.shape[1]}")
            return Z @ self.coef + self.intercept
        if Z.shape[1] != self._X.shape[1]:
            raise ValueError(f"X must have {self._X.shape[1]} columns; got {Z.shape[1]}")
        return self._kernel(Z, self._X) @ self.dual_coef + self.intercept


def huber_loss(r, delta: float) -> np.ndarray:
    r"""The Huber loss :math:`h_\delta(r) = r^2/2` for :math:`|r| \le \delta`, else
    :math:`\delta |r| - \delta^2 / 2` (elementwise)."""
    delta = positive_scalar(delta, "delta")
    a = np.abs(np.asarray(r, dtype=float))
    return np.where(a <= delta, 0.5 * a ** 2, delta * a - 0.5 * delta ** 2)


def _check_xy(X, y):
    X = as_matrix(X, "X", min_rows=2)
    y = as_vector(y, "y", length=X.shape[0], length_of="X")
    return X, y


def huber_lasso_fit(X, y, *, alpha: float, delta: float, fit_intercept: bool = True,
                    tol: float = 1e-10, max_iter: int = 50_000) -> RobustFitResult:
    r"""The Huber-loss Lasso (Table 7 of Qu et al. 2022; a special case of ref. [51]).

    .. math::

        \min_{w, b} \; \frac1n \sum_{i=1}^n h_\delta(y_i - x_i^\top w - b)
            + \alpha \|w\|_1,

    :math:`h_\delta` the Huber loss (:func:`huber_loss`). For :math:`\delta \to \infty` this
    is scikit-learn's ``Lasso`` objective :math:`\frac1{2n}\|y - Xw - b\|^2 + \alpha\|w\|_1`,
    so ``alpha`` has the Lasso's scale. Nasrabadi, Tran and Nguyen (2011) write the corrupted
    response as :math:`y = Xw + e + \text{noise}` with a sparse gross error :math:`e`
    penalized by :math:`\lambda_e \|e\|_1`; minimizing over :math:`e` gives exactly the Huber
    loss with :math:`\delta = n \lambda_e` (in these units), which is the special case the
    paper uses.

    Solved by FISTA (Beck and Teboulle 2009) with the step :math:`1/L`,
    :math:`L = \|[X, 1]\|_2^2 / n` (the Huber loss has curvature at most 1), and the
    restart of O'Donoghue and Candes when the objective increases. Stops when the
    proximal-gradient step is below ``tol`` relative to the size of the solution.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
    alpha : float >= 0
        The :math:`\ell_1` penalty.
    delta : float > 0
        The Huber threshold, in the units of ``y``.
    fit_intercept : bool, default True
        Fit the unpenalized bias :math:`b` (else :math:`b = 0`).
    tol : float > 0
        Stopping tolerance.
    max_iter : int
        Most FISTA steps.

    Returns
    -------
    RobustFitResult
        ``coef``, ``intercept``, ``objective``; ``status`` ``"converged"`` or ``"max_iter"``.
    """
    X, y = _check_xy(X, y)
    alpha = positive_scalar(alpha, "alpha", allow_zero=True)
    delta = positive_scalar(delta, "delta")
    tol = positive_scalar(tol, "tol")
    max_iter = positive_int(max_iter, "max_iter")
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    L = max(np.linalg.norm(A, 2) ** 2 / n, 1e-300)
    step = 1.0 / L
    thr = np.r_[np.full(d, alpha * step), np.zeros(A.shape[1] - d)]

    def grad(z):
        r = y - A @ z
        return -A.T @ np.clip(r, -delta, delta) / n

    def obj(z):
        return float(huber_loss(y - A @ z, delta).mean() + alpha * np.abs(z[:d]).sum())

    z = np.zeros(A.shape[1])
    u, t, f_old, status = z.copy(), 1.0, obj(z), "max_iter"
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        g = u - step * grad(u)
        z_new = np.sign(g) * np.maximum(np.abs(g) - thr, 0.0)
        f_new = obj(z_new)
        if f_new > f_old:               # adaptive restart: drop the momentum
            u, t = z.copy(), 1.0
            g = u - step * grad(u)
            z_new = np.sign(g) * np.maximum(np.abs(g) - thr, 0.0)
            f_new = obj(z_new)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        u = z_new + ((t - 1.0) / t_new) * (z_new - z)
        z, t, f_old = z_new, t_new, f_new
        # the prox-gradient map at z: || z - prox(z - step grad) || / step is the residual
        gz = z - step * grad(z)
        pz = np.sign(gz) * np.maximum(np.abs(gz) - thr, 0.0)
        if np.linalg.norm(pz - z) <= tol * max(1.0, np.linalg.norm(z)):
            status = "converged"
            break
    coef = z[:d].copy()
    b = float(z[d]) if fit_intercept else 0.0
    return RobustFitResult("huber_lasso", coef, b, objective=obj(z), n_iter=it, status=status)


def _kernel_setup(X, kernel, gamma):
    check_choice(kernel, "kernel", _KERNELS)
    if kernel == "linear":
        return kernel_from_name("linear")
    return kernel_from_name("rbf", gamma=gamma_value(gamma, X, choices=("scale",)))


def _lssvm_solve(K, y, C, v):
    r"""Solve the LS-SVM system [[0, 1'], [1, K + diag(1 / (C v))]] [b; a] = [0; y]."""
    n = len(y)
    M = np.empty((n + 1, n + 1))
    M[0, 0] = 0.0
    M[0, 1:] = 1.0
    M[1:, 0] = 1.0
    M[1:, 1:] = K
    M[1:, 1:][np.diag_indices(n)] += 1.0 / (C * v)
    rhs = np.r_[0.0, y]
    try:
        sol = scipy.linalg.solve(M, rhs, assume_a="sym")
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError) as exc:
        raise SolverError(f"the LS-SVM system is singular: {exc}") from exc
    if not np.all(np.isfinite(sol)):
        raise SolverError("the LS-SVM system gave a non-finite solution")
    return sol[1:], float(sol[0])


def _result(method, X, kern, a, b, **kw):
    coef = X.T @ a if kern.name == "linear" else None
    return RobustFitResult(method, coef, b, dual_coef=a, _X=X, _kernel=kern, **kw)


def _lssvm_objective(K, a, b, y, C, v):
    e = y - K @ a - b
    return float(0.5 * a @ K @ a + 0.5 * C * np.sum(v * e ** 2)), e


def lssvm_fit(X, y, *, C: float = 1.0, sample_weight=None, kernel: str = "linear",
              gamma="scale") -> RobustFitResult:
    r"""The weighted least-squares SVM (Suykens and Vandewalle 1999; Suykens et al. 2002).

    .. math::

        \min_{w, b, e} \; \tfrac12 \|w\|^2 + \tfrac{C}2 \sum_{i=1}^n v_i e_i^2
        \quad \text{s.t.} \quad y_i = w^\top \varphi(x_i) + b + e_i,

    solved through its KKT system
    :math:`\begin{bmatrix} 0 & 1^\top \\ 1 & K + \mathrm{diag}(1/(C v)) \end{bmatrix}
    \begin{bmatrix} b \\ a \end{bmatrix} = \begin{bmatrix} 0 \\ y \end{bmatrix}`, with
    :math:`w = \sum_i a_i \varphi(x_i)` and :math:`e_i = a_i / (C v_i)`. For labels in
    :math:`\{-1, +1\}` this is the LS-SVM classifier.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Responses, or labels in {-1, +1}.
    C : float > 0
        Weight of the squared errors (Suykens' :math:`\gamma`).
    sample_weight : array_like of shape (n,), optional
        Positive weights :math:`v_i` (default 1).
    kernel : {"linear", "rbf"}
    gamma : float > 0 or "scale"
        Width of the Gaussian kernel (scikit-learn's ``"scale"`` by default).

    Returns
    -------
    RobustFitResult
        ``dual_coef`` :math:`a`, ``intercept`` :math:`b`, ``coef`` :math:`w` (linear kernel),
        ``objective`` the primal objective.
    """
    X, y = _check_xy(X, y)
    C = positive_scalar(C, "C")
    v = np.ones(len(y)) if sample_weight is None else as_vector(
        sample_weight, "sample_weight", length=len(y), length_of="X")
    if np.any(v <= 0):
        raise ValueError("sample_weight must be > 0")
    kern = _kernel_setup(X, kernel, gamma)
    K = kern(X)
    a, b = _lssvm_solve(K, y, C, v)
    f, _ = _lssvm_objective(K, a, b, y, C, v)
    return _result("lssvm", X, kern, a, b, objective=f, sample_weight=v)


def suykens_weights(e, *, c1: float = 2.5, c2: float = 3.0, scale=None) -> np.ndarray:
    r"""The weights of Suykens et al.'s weighted LS-SVM (Neurocomputing 48, 2002, eq. 13).

    With :math:`r_i = e_i / \hat s`: :math:`v_i = 1` for :math:`|r_i| \le c_1`,
    :math:`(c_2 - |r_i|)/(c_2 - c_1)` for :math:`c_1 < |r_i| \le c_2`, and :math:`10^{-4}`
    beyond. ``scale`` :math:`\hat s` defaults to the robust :math:`1.483\,\mathrm{MAD}(e)`.
    """
    e = as_vector(e, "e")
    c1 = positive_scalar(c1, "c1")
    c2 = positive_scalar(c2, "c2")
    if c2 <= c1:
        raise ValueError(f"c2 must exceed c1; got c1={c1}, c2={c2}")
    if scale is None:
        scale = 1.483 * np.median(np.abs(e - np.median(e)))
    scale = max(float(scale), 1e-12 * max(1.0, float(np.abs(e).max())))
    r = np.abs(e) / scale
    return np.where(r <= c1, 1.0, np.where(r <= c2, (c2 - r) / (c2 - c1), 1e-4))


def relssvm_fit(X, y, *, C: float = 1.0, coverage: float = 0.75, kernel: str = "linear",
                gamma="scale", max_iter: int = 50, tol: float = 1e-6) -> RobustFitResult:
    r"""Re-LSSVM: the iteratively re-weighted LS-SVM with a least-trimmed-squares scale
    (our reading of ref. [48] of Qu et al. 2022, Chen, Yan and Li, Neurocomputing 2015).

    Round 0 is the plain LS-SVM (:func:`lssvm_fit`). Round :math:`k` computes the residuals
    :math:`e_i` of round :math:`k - 1`, the least-trimmed-squares scale

    .. math::

        \hat s^2 = \frac{1}{h} \sum_{j=1}^{h} e_{(j)}^2, \qquad h = \lceil \theta n \rceil

    over the :math:`h` smallest squared residuals (``coverage`` :math:`\theta`), divided by
    the consistency factor of the Gaussian trimmed variance, then the weights
    :math:`v_i` of :func:`suykens_weights` at that scale, and solves the weighted LS-SVM
    with them; it stops when the weights change by less than ``tol`` (De Brabanter et al.,
    Comput. Stat. Data Anal. 53, 2009, iterate this reweighting to a fixed point). The
    paper's Table 7 tunes Re-LSSVM's :math:`(\theta, \gamma_2)`; we read :math:`\theta` as the
    LTS coverage and :math:`\gamma_2` as the LS-SVM's ``C``.

    Parameters
    ----------
    X, y, C, kernel, gamma
        As in :func:`lssvm_fit`.
    coverage : float in (0, 1]
        Share :math:`\theta` of the residuals the LTS scale uses.
    max_iter : int
        Most reweighting rounds.
    tol : float > 0
        Stop when :math:`\max_i |v_i^{(k)} - v_i^{(k-1)}| \le` ``tol``.

    Returns
    -------
    RobustFitResult
        As :func:`lssvm_fit`, with the final ``sample_weight`` and the rounds in ``n_iter``.
    """
    X, y = _check_xy(X, y)
    C = positive_scalar(C, "C")
    coverage = positive_scalar(coverage, "coverage")
    if coverage > 1:
        raise ValueError(f"coverage must be in (0, 1]; got {coverage}")
    max_iter = positive_int(max_iter, "max_iter")
    tol = positive_scalar(tol, "tol")
    kern = _kernel_setup(X, kernel, gamma)
    K = kern(X)
    n = len(y)
    h = max(2, int(np.ceil(coverage * n)))
    consistency = _trimmed_variance_factor(min(h / n, 1.0))
    v = np.ones(n)
    a, b = _lssvm_solve(K, y, C, v)
    status = "max_iter"
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        e = y - K @ a - b
        s = np.sqrt(np.sort(e ** 2)[:h].mean() / consistency)
        v_new = suykens_weights(e, scale=s)
        a, b = _lssvm_solve(K, y, C, v_new)
        done = np.max(np.abs(v_new - v)) <= tol
        v = v_new
        if done:
            status = "converged"
            break
    f, _ = _lssvm_objective(K, a, b, y, C, v)
    return _result("relssvm", X, kern, a, b, objective=f, n_iter=it, sample_weight=v,
                   status=status)


def _trimmed_variance_factor(q: float) -> float:
    r"""E[Z^2 | |Z| <= z_q] for a standard normal Z with P(|Z| <= z_q) = q."""
    from scipy.stats import norm
    if q >= 1.0:
        return 1.0
    z = norm.ppf(0.5 + q / 2)
    return float(1.0 - 2.0 * z * norm.pdf(z) / q)


def rlssvm_fit(X, y, *, C: float = 1.0, tau: float = 1.0, kernel: str = "linear",
               gamma="scale", max_iter: int = 100) -> RobustFitResult:
    r"""RLSSVM: the LS-SVM with the truncated least-squares loss, solved by CCCP (Yang, Tan
    and He, Neurocomputing 140, 2014; ref. [49] of Qu et al. 2022).

    .. math::

        \min_{w, b} \; \tfrac12 \|w\|^2 + \tfrac{C}2 \sum_{i=1}^n \min(e_i^2, \tau^2),
        \qquad e_i = y_i - w^\top \varphi(x_i) - b.

    With :math:`\min(e^2, \tau^2) = e^2 - \max(e^2 - \tau^2, 0)` the objective is a
    difference of convex functions; the concave-convex procedure linearizes the concave part
    at the current residuals :math:`e^{(k)}` and minimizes
    :math:`\tfrac12\|w\|^2 + \tfrac C2 \sum_i (e_i - \delta_i e_i^{(k)})^2`,
    :math:`\delta_i = [|e_i^{(k)}| > \tau]`: an LS-SVM whose targets of the truncated points
    are replaced by their current predictions. Repeating that step with the truncated set
    held fixed converges to the LS-SVM fitted to the points inside the truncation only (a
    truncated point's target then equals its prediction, so it exerts no pull), and that is
    the step taken here: the upper bound
    :math:`\tfrac12\|w\|^2 + \tfrac C2 \sum_{i \notin S} e_i^2 + \tfrac C2 |S| \tau^2`,
    tight at the current point for :math:`S = \{i : |e_i| > \tau\}`, is minimized exactly.
    The objective never increases and the iteration stops when :math:`S` repeats, a fixed
    point of CCCP. The paper's
    Table 7 tunes RLSSVM's :math:`(\sigma, \gamma_1)`; we read :math:`\sigma` as the
    truncation level ``tau`` and :math:`\gamma_1` as ``C``. Labels in {-1, +1} give the
    classifier (truncated squared margin error).

    Parameters
    ----------
    X, y, C, kernel, gamma
        As in :func:`lssvm_fit`.
    tau : float > 0
        Truncation level, in the units of ``y``.
    max_iter : int
        Most CCCP steps.

    Returns
    -------
    RobustFitResult
        As :func:`lssvm_fit`; ``objective`` the truncated objective, ``sample_weight`` 1 for
        the points inside the truncation and 0 for the truncated ones.
    """
    X, y = _check_xy(X, y)
    C = positive_scalar(C, "C")
    tau = positive_scalar(tau, "tau")
    max_iter = positive_int(max_iter, "max_iter")
    kern = _kernel_setup(X, kernel, gamma)
    K = kern(X)
    n = len(y)
    a, b = _lssvm_solve(K, y, C, np.ones(n))
    keep = np.ones(n, dtype=bool)
    status = "max_iter"
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported after the loop)
        new_keep = np.abs(y - K @ a - b) <= tau
        if it > 1 and np.array_equal(new_keep, keep):
            status = "converged"
            break
        keep = new_keep
        if keep.sum() < 2:
            raise SolverError("rlssvm_fit: fewer than two points inside the truncation; "
                              "increase tau")
        a_k, b = _lssvm_solve(K[np.ix_(keep, keep)], y[keep], C, np.ones(keep.sum()))
        a = np.zeros(n)
        a[keep] = a_k
    e = y - K @ a - b
    f = float(0.5 * a @ K @ a + 0.5 * C * np.minimum(e ** 2, tau ** 2).sum())
    return _result("rlssvm", X, kern, a, b, objective=f, n_iter=it,
                   sample_weight=(np.abs(e) <= tau).astype(float), status=status)


def robust_svm_fit(X, y, *, C: float = 1.0, mu: float = 0.1, kernel: str = "linear",
                   gamma="scale", tol: float = 1e-8) -> RobustFitResult:
    r"""The label-noise robust SVM of Biggio, Nelson and Laskov (ACML 2011; ref. [50] of Qu
    et al. 2022): an SVM trained on a kernel matrix corrected for random label flips.

    If every training label is flipped independently with probability :math:`\mu`, the
    expected label products are :math:`E[\tilde y_i \tilde y_j] = (1 - 2\mu)^2 y_i y_j` for
    :math:`i \ne j` and 1 on the diagonal, so the expected dual Hessian of the SVM is
    proportional to :math:`Q + s\,\mathrm{diag}(K_{ii})` with
    :math:`s = 1/(1 - 2\mu)^2 - 1`. The robust SVM solves the standard dual

    .. math::

        \max_{0 \le \alpha \le C,\; y^\top \alpha = 0} \; 1^\top \alpha
            - \tfrac12 \alpha^\top \mathrm{diag}(y) \bigl(K + s\,\mathrm{diag}(K_{ii})\bigr)
              \mathrm{diag}(y) \alpha

    (the kernel matrix correction of that paper, written here for flips at random; it acts
    like an extra :math:`\ell_2` penalty on the dual variables, which limits the pull of any
    single, possibly flipped, point) and predicts with the uncorrected kernel,
    :math:`f(x) = \sum_i \alpha_i y_i k(x, x_i) + b`. Solved by scikit-learn's ``SVC`` on
    the precomputed corrected kernel.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Two classes (any labels; mapped to {-1, +1} in sorted order).
    C : float > 0
    mu : float in [0, 0.5)
        Assumed flip probability (0: the plain SVM).
    kernel : {"linear", "rbf"}
    gamma : float > 0 or "scale"
    tol : float > 0
        ``SVC``'s stopping tolerance.

    Returns
    -------
    RobustFitResult
        ``dual_coef`` :math:`\alpha_i y_i`, ``intercept``, ``coef`` (linear kernel),
        ``objective`` the dual objective.
    """
    X = as_matrix(X, "X", min_rows=2)
    y, _ = encode_binary_labels(y, "y")
    if len(y) != X.shape[0]:
        raise ValueError(f"y must have length {X.shape[0]} (the number of rows of X); "
                         f"got {len(y)}")
    C = positive_scalar(C, "C")
    mu = positive_scalar(mu, "mu", allow_zero=True)
    if mu >= 0.5:
        raise ValueError(f"mu must be in [0, 0.5); got {mu}")
    tol = positive_scalar(tol, "tol")
    kern = _kernel_setup(X, kernel, gamma)
    K = kern(X)
    s = 1.0 / (1.0 - 2.0 * mu) ** 2 - 1.0
    Kc = K + np.diag(s * np.diag(K))
    svc = SVC(C=C, kernel="precomputed", tol=tol).fit(Kc, y)
    a = np.zeros(len(y))
    a[svc.support_] = svc.dual_coef_[0]
    b = float(svc.intercept_[0])
    f = float(np.abs(a).sum() - 0.5 * a @ Kc @ a)
    return _result("robust_svm", X, kern, a, b, objective=f, n_iter=int(svc.n_iter_[0]))
