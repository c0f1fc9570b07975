r"""Peers of the S3VM path: supervised SVM, annealing TSVM (S3VM-light style) and CCCP-TSVM.

All three return a :class:`TSVMResult` with ``f(x) = sum_i coef_i K(x_i, x) + intercept`` and
predicted labels of the unlabeled points. Their arguments are those of
:func:`pathlib_core.s3vm.path.s3vm_path`: data first -- ``X`` the kernel ``K`` over labeled
and unlabeled points (``kernel="precomputed"``, the default) or the points themselves
(``kernel="linear"``, or ``"rbf"`` with ``gamma``) -- and ``y`` in ``{-1, 0, +1}`` with 0
marking unlabeled points. The two transductive methods use the same S3VM objective as the
path (eq. (1) of Ogawa et al. 2013) with the bias fixed at ``b = 2 r - 1`` (``r``: fraction of
positive labeled points; Chapelle and Zien 2005), so their objective values are comparable
with the path's.

Each baseline screens the kernel for positive semi-definiteness in ``O(n^2)`` (non-negative
diagonal, ``K_ij^2 <= K_ii K_jj``) and, when a solve fails or meets negative curvature, checks
its eigenvalues: a kernel that is not PSD (a non-convex inner problem, whose "solution" would
be a stationary point) raises ``ValueError`` naming ``K``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..core.exceptions import PathlibCoreError, QPSolverError
from ..core.fit_result import FitResult
from ..core.homotopy import screen_psd
from ..core.qp import solve_qp
from ..core.threads import single_blas_thread
from ..core.validation import check_psd, positive_scalar
from ..primer.svm import kernel_matrix
from .path import (
    _objective,
    check_s3vm_inputs,
    class_balance_bias,
    supervised_fixed_bias,
)

__all__ = ["TSVMResult", "supervised_svm", "annealing_tsvm", "cccp_tsvm"]


@dataclass(frozen=True, repr=False)
class TSVMResult(FitResult):
    """Result of a baseline.

    Attributes
    ----------
    coef : ndarray (n,)
        ``beta`` in ``f(x) = sum_i beta_i K(x_i, x) + intercept``.
    intercept : float
    labels : ndarray of int (n,)
        Given labels on labeled points, predicted ones (``sign f``, or the method's own
        ``y_hat`` for the annealing TSVM) on unlabeled points.
    objective : float
        ``J(f, labels)`` of eq. (1) at the final ``C^*`` (NaN for the supervised SVM).
    info : dict
        ``n_qp`` (QP solves), ``n_iter`` and ``time``.
    status : str
        ``"optimal"`` (the supervised SVM), ``"converged"`` (no switch or no change of
        the ramp's active set left), ``"max_iter"`` (a cap on rounds was reached).
    """

    coef: np.ndarray
    intercept: float
    labels: np.ndarray
    objective: float = float("nan")
    info: dict = field(default_factory=dict, repr=False)
    status: str = "converged"

    @property
    def n_iter(self) -> int:
        """Iterations (``info["n_iter"]``)."""
        return int(self.info.get("n_iter", 0))

    def decision_function(self, K_cross) -> np.ndarray:
        """``f`` at new points, ``K_cross[i, j] = K(x_i, x_new_j)`` (training rows)."""
        return np.asarray(K_cross, dtype=float).T @ self.coef + self.intercept


def _kernel_named(func):
    """Run a baseline on data first, as :func:`pathlib_core.s3vm.path.s3vm_path` takes it
    (``X`` the kernel for ``kernel="precomputed"``, the default, else the points, with
    ``gamma`` for ``"rbf"``), its kernel screened for positive semi-definiteness
    (``O(n^2)``); a failure inside its solvers with a kernel that is not PSD is reported as
    a ``ValueError`` naming ``X`` (the eigenvalue check runs only then)."""
    import functools

    @functools.wraps(func)
    def wrapper(X, y, *, kernel="precomputed", gamma="scale", **kwargs):
        Kv, _, _, _ = check_s3vm_inputs(kernel_matrix(X, kernel, gamma), y, "X")
        screen_psd(Kv, "X")
        try:
            return func(Kv, y, **kwargs)
        except (PathlibCoreError, ValueError, np.linalg.LinAlgError) as exc:
            try:
                check_psd(Kv, "X")
            except ValueError as err:
                raise err from exc
            raise

    return wrapper


def _box_qp(K, ylab, b, ub, theta0):
    Q = K * np.outer(ylab, ylab)
    res = solve_qp(Q, b * ylab - 1.0, lb=np.zeros(ylab.size), ub=ub, warm_start=theta0)
    if res.status != "optimal":
        raise QPSolverError(f"inner SVM solve failed ({res.status})")
    return res.x


@single_blas_thread
@_kernel_named
def supervised_svm(K, y, *, C) -> TSVMResult:
    r"""Standard SVM (free bias) on the labeled points only, via libsvm (scikit-learn ``SVC``).

    .. math::

        \min_{w, b} \tfrac12 \|w\|^2 + C \sum_{i \in L} [1 - y_i (w^\top\phi(x_i) + b)]_+ .
    """
    from sklearn.svm import SVC

    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    C = positive_scalar(C, "C")
    li = np.flatnonzero(lab)
    t0 = time.perf_counter()
    clf = SVC(kernel="precomputed", C=C, tol=1e-8)
    clf.fit(Kv[np.ix_(li, li)], yv[li])
    coef = np.zeros(yv.size)
    coef[li[clf.support_]] = clf.dual_coef_.ravel()
    b = float(clf.intercept_[0])
    f = Kv @ coef + b
    labels = np.where(lab, yv, np.where(f >= 0, 1.0, -1.0)).astype(int)
    return TSVMResult(coef, b, labels, info={"n_qp": 1, "n_iter": 1,
                                             "time": time.perf_counter() - t0},
                      status="optimal")


@single_blas_thread
@_kernel_named
def annealing_tsvm(K, y, *, C, C_unlabeled, n_steps: int = 10,
                   max_switch_rounds: int = 1000, keep_steps: bool = False) -> TSVMResult:
    r"""S3VM-light-style annealing (Joachims 1999; schedule of Chapelle et al. 2008).

    Minimizes ``J(f, y_hat)`` of eq. (1) (bias fixed at ``b = 2 r - 1``) by annealing: the
    unlabeled weight runs through ``C^* 2^{-(n_steps-1)}, ..., C^*/2, C^*`` (``n_steps=10``:
    from ``2^{-9} C^*``). Initial labels: the supervised (fixed-bias) SVM's decision values,
    the top ``round(r |U|)`` unlabeled points positive (class balance). At each weight: solve
    the SVM with the current labels (warm-started active set,
    :func:`pathlib_core.core.qp.solve_qp`),
    then switch pairs ``(i, j)`` with ``y_hat_i = +1``, ``y_hat_j = -1``, slacks
    ``xi_i, xi_j > 0`` and ``xi_i + xi_j > 2`` -- every such switch strictly decreases ``J`` at
    fixed ``f`` and keeps the class balance -- and re-solve, until no pair is left. Unlike
    S3VM-light, which switches one pair per re-solve, all disjoint qualifying pairs (largest
    slacks first) are switched at once (each still lowers ``J``).

    Parameters
    ----------
    X, y : kernel (n, n) (or points, see ``kernel``) and labels in {-1, 0, +1}
    C, C_unlabeled : float
        Labeled weight (> 0) and final unlabeled weight (> 0).
    n_steps : int
        Number of annealing steps (>= 1).
    max_switch_rounds : int
        Cap on switch/re-solve rounds per step.
    keep_steps : bool
        Keep the solution after every annealing step in ``info["steps"]`` as a list of
        ``(C_unlabeled_k, coef, labels)`` (for model selection over the annealing steps).
    """
    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled")
    if int(n_steps) != n_steps or n_steps < 1:
        raise ValueError(f"n_steps must be an integer >= 1; got {n_steps!r}")
    t0 = time.perf_counter()
    b = class_balance_bias(yv)
    r = float(np.mean(yv[lab] == 1))
    ylab = np.where(lab, yv, 1.0)
    theta = supervised_fixed_bias(Kv, ylab, lab, b, C)
    f = Kv @ (ylab * theta) + b
    iu = np.flatnonzero(unl)
    n_pos = int(round(r * iu.size))
    order = iu[np.argsort(-f[iu], kind="stable")]
    ylab[order[:n_pos]] = 1.0
    ylab[order[n_pos:]] = -1.0
    n_qp, n_switch = 1, 0
    steps = []
    capped = False
    for k in range(int(n_steps)):
        cu = Cu * 2.0 ** (-(int(n_steps) - 1 - k))
        ub = np.where(lab, C, cu)
        for _ in range(max_switch_rounds):
            theta = _box_qp(Kv, ylab, b, ub, theta)
            n_qp += 1
            f = Kv @ (ylab * theta) + b
            xi = np.maximum(0.0, 1.0 - ylab * f)
            pos = iu[(ylab[iu] > 0) & (xi[iu] > 0)]
            neg = iu[(ylab[iu] < 0) & (xi[iu] > 0)]
            pos = pos[np.argsort(-xi[pos], kind="stable")]
            neg = neg[np.argsort(-xi[neg], kind="stable")]
            m = min(pos.size, neg.size)
            ok = xi[pos[:m]] + xi[neg[:m]] > 2.0 + 1e-12
            if not np.any(ok):
                break
            sw = np.concatenate([pos[:m][ok], neg[:m][ok]])
            ylab[sw] = -ylab[sw]
            n_switch += int(ok.sum())
        else:
            capped = True  # switches were still left after max_switch_rounds re-solves
        if keep_steps:
            steps.append((cu, ylab * theta, ylab.astype(int)))
    coef = ylab * theta
    J = _objective(Kv, ylab, lab, coef, b, C, Cu)
    info = {"n_qp": n_qp, "n_iter": n_switch, "time": time.perf_counter() - t0}
    if keep_steps:
        info["steps"] = steps
    return TSVMResult(coef, b, ylab.astype(int), J, info,
                      status="max_iter" if capped else "converged")


@single_blas_thread
@_kernel_named
def cccp_tsvm(K, y, *, C, C_unlabeled, s: float = -0.3, max_iter: int = 50) -> TSVMResult:
    r"""CCCP transductive SVM with the symmetric ramp loss (Collobert, Sinz, Weston, Bottou 2006).

    .. math::

        \min_\beta \tfrac12 \beta^\top K\beta + C \sum_{i \in L} H_1(y_i f_i)
        + C^* \sum_{i \in U} \big[R_s(f_i) + R_s(-f_i)\big],
        \quad R_s(z) = H_1(z) - H_s(z), \; H_a(z) = [a - z]_+,

    (Collobert et al.'s eq. (6), each unlabeled point entered twice, with labels +1 and -1)
    with ``f = K beta + b`` and the bias fixed at ``b = 2 r - 1`` (the class balance as in
    the S3VM path; Collobert et al. instead keep ``b`` free under a balancing constraint).
    The concave part ``-C^* H_s`` is linearized at the current ``f`` (concave-convex
    procedure): with ``rho_k = C^*`` if ``z_k f_k < s`` else 0, each iteration solves the
    convex dual ``min_v 1/2 v'Qv + (b z - 1)'v`` s.t. ``-rho <= v <= c - rho`` (Collobert et
    al.'s Algorithm 2 with a fixed bias), warm-started, until ``rho`` no longer changes.
    Starts from the supervised (fixed-bias) SVM.

    Parameters
    ----------
    X, y : kernel (n, n) (or points, see ``kernel``) and labels in {-1, 0, +1}
    C, C_unlabeled : float
        Labeled and unlabeled weights (> 0).
    s : float
        Ramp parameter (Collobert et al. use -0.3), < 1.
    max_iter : int
        Cap on CCCP iterations.
    """
    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled")
    s = float(s)
    if not s < 1:
        raise ValueError(f"s must be < 1; got {s}")
    t0 = time.perf_counter()
    b = class_balance_bias(yv)
    li, iu = np.flatnonzero(lab), np.flatnonzero(unl)
    pidx = np.concatenate([li, iu, iu])
    z = np.concatenate([yv[li], np.ones(iu.size), -np.ones(iu.size)])
    c = np.concatenate([np.full(li.size, C), np.full(2 * iu.size, Cu)])
    unl_k = np.arange(pidx.size) >= li.size
    Kp = Kv[np.ix_(pidx, pidx)]
    Q = Kp * np.outer(z, z)
    q = b * z - 1.0
    ylab = np.where(lab, yv, 1.0)
    theta = supervised_fixed_bias(Kv, ylab, lab, b, C)
    f = Kv @ (ylab * theta) + b
    v = np.concatenate([theta[li], np.zeros(2 * iu.size)])
    rho = np.where(unl_k & (z * f[pidx] < s), Cu, 0.0)
    n_qp, it = 1, 0
    status = "converged"
    for it in range(1, max_iter + 1):  # noqa: B007
        res = solve_qp(Q, q, lb=-rho, ub=c - rho, warm_start=np.clip(v, -rho, c - rho))
        n_qp += 1
        if res.status != "optimal":
            raise QPSolverError(f"CCCP inner solve failed ({res.status})")
        v = res.x
        coef = np.bincount(pidx, weights=z * v, minlength=yv.size)
        f = Kv @ coef + b
        rho_new = np.where(unl_k & (z * f[pidx] < s), Cu, 0.0)
        if np.array_equal(rho_new, rho):
            break
        rho = rho_new
    else:
        status = "max_iter"
    labels = np.where(lab, yv, np.where(f >= 0, 1.0, -1.0))
    J = _objective(Kv, labels, lab, coef, b, C, Cu)
    return TSVMResult(coef, b, labels.astype(int), J,
                      {"n_qp": n_qp, "n_iter": it, "time": time.perf_counter() - t0},
                      status=status)
