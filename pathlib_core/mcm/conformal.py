r"""Conformal kernel optimization for the MCM (Badge, Soman, Chandra, Jayadeva 2021).

Kernel optimization (Badge, Soman, Chandra, Jayadeva 2021, building on Amari & Wu 1999 and
Xiong et al. 2005): the basic kernel ``K0`` is conformally transformed, ``K = C K0 C`` with
``c(x) = alpha_0 + sum_i alpha_i k_1(x, a_i)`` over empirical cores ``a_i`` (the support vectors
of a first MCM), and ``alpha`` maximizes the kernel Fisher criterion ``J = c'B0c / c'W0c``
(Theorem 2.3, eq. (40)) through the generalized eigenproblem ``P alpha = gamma Q alpha`` with
``P = K1' B0 K1`` and ``Q = K1' (W0 + D I) K1`` (eq. (41)).

:func:`scatter_matrices` gives ``B`` and ``W`` (eqs. (38)-(39)), :func:`fisher_ratio_direct`
the same criterion computed independently in the empirical feature space (eqs. (35)-(37)), and
:func:`optimize_conformal` solves the eigenproblem (41).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..core.exceptions import SolverError
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_kernel, as_matrix, check_psd, positive_scalar

__all__ = ["scatter_matrices", "fisher_ratio_direct", "ConformalSolution", "optimize_conformal"]


def scatter_matrices(K, y) -> tuple[np.ndarray, np.ndarray]:
    r"""Between- and within-class kernel scatter matrices ``B`` and ``W`` (eqs. (38)-(39)).

    For points of any order: ``B_ij = [y_i = y_j] K_ij / M_{y_i} - K_ij / M`` and
    ``W_ij = delta_ij K_ii - [y_i = y_j] K_ij / M_{y_i}``. Then ``1'B1 / 1'W1`` is the Fisher
    scalar ``tr S_b / tr S_w`` of the empirical feature space (Theorem 2.3, eq. (40)).

    .. math::

        B_{ij} = \frac{[y_i = y_j]\, K_{ij}}{M_{y_i}} - \frac{K_{ij}}{M}, \qquad
        W_{ij} = \delta_{ij} K_{ii} - \frac{[y_i = y_j]\, K_{ij}}{M_{y_i}},

    with :math:`M` the number of points and :math:`M_{\pm 1}` the size of each class.

    Parameters
    ----------
    K : array_like of shape (M, M)
        Kernel matrix on the points (symmetric to a relative ``1e-8``; it is symmetrized).
    y : array_like of shape (M,)
        Labels in {-1, +1}; both classes must be present.

    Returns
    -------
    B : ndarray of shape (M, M)
        Between-class scatter matrix (exactly symmetric).
    W : ndarray of shape (M, M)
        Within-class scatter matrix (exactly symmetric).

    Raises
    ------
    ValueError
        A non-square, non-symmetric or non-finite ``K``, or labels that are not -1 / +1 or of
        one class only.
    """
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    if np.unique(y).size < 2:
        raise ValueError("y must contain both classes -1 and +1; got only one class")
    n = y.shape[0]
    same = y[:, None] == y[None, :]
    m_class = np.where(y > 0, np.sum(y > 0), np.sum(y < 0)).astype(float)
    block = np.where(same, K / m_class[:, None], 0.0)
    B = block - K / n
    W = np.diag(np.diag(K)) - block
    return 0.5 * (B + B.T), 0.5 * (W + W.T)


def fisher_ratio_direct(K, y, *, rtol: float = 1e-12) -> float:
    r"""``J = tr S_b / tr S_w`` computed from the images ``z_i`` in the empirical feature space.

    ``K = U diag(s) U'`` (eigenvalues ``s > rtol * max s`` kept), ``z_i = diag(s)^{1/2} U_i'``,
    so that ``z_i' z_j = K_ij``; then eqs. (35)-(37). Independent of :func:`scatter_matrices`.

    .. math::

        J = \frac{\sum_{c \in \{-1, +1\}} M_c \lVert \bar z_c - \bar z \rVert^2}
                 {\sum_{c \in \{-1, +1\}} \sum_{y_i = c} \lVert z_i - \bar z_c \rVert^2},

    with :math:`\bar z_c` the class means and :math:`\bar z` the overall mean.

    Parameters
    ----------
    K : array_like of shape (M, M)
        Kernel matrix on the points (symmetric to a relative ``1e-8``; it is symmetrized).
        Positive semi-definite in principle: eigenvalues ``<= rtol * max s`` (negative ones
        included) are dropped.
    y : array_like of shape (M,)
        Labels in {-1, +1}; both classes must be present.
    rtol : float, default 1e-12
        Relative eigenvalue cut-off.

    Returns
    -------
    float
        The Fisher ratio :math:`J \ge 0`; equal (to rounding) to ``1'B1 / 1'W1`` of
        :func:`scatter_matrices` for a positive semi-definite ``K``.

    Raises
    ------
    ValueError
        A non-square, non-symmetric or non-finite ``K``, or labels that are not -1 / +1 or of
        one class only; or a within-class scatter of zero (every class collapses to one point
        in the kept eigen-directions, e.g. ``K = 0``), where ``J`` is undefined.
    """
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    s, U = np.linalg.eigh(K)
    top = float(np.max(np.abs(s)))
    if top > 0 and s[0] < -max(rtol, 1e-10) * top:
        # the images z_i with z_i'z_j = K_ij exist only for a positive semi-definite K:
        # dropping its negative eigenvalues would compute the ratio of another kernel
        check_psd(K, "K", rtol=max(rtol, 1e-10))
    keep = s > rtol * max(float(s.max()), 0.0)
    Z = U[:, keep] * np.sqrt(s[keep])
    zbar = Z.mean(axis=0)
    sb = sw = 0.0
    for cls in (-1.0, 1.0):
        Zc = Z[y == cls]
        mc = Zc.mean(axis=0)
        sb += Zc.shape[0] * float(np.sum((mc - zbar) ** 2))
        sw += float(np.sum((Zc - mc) ** 2))
    if sw == 0.0:
        raise ValueError("the within-class scatter tr S_w of K is zero (every class collapses "
                         "to one point in the kept eigen-directions): the Fisher ratio J is "
                         "undefined")
    return sb / sw


@dataclass
class ConformalSolution:
    """Result of :func:`optimize_conformal` (steps 3-5 of the algorithm).

    Attributes
    ----------
    alpha : ndarray of shape (n_ec + 1,)
        ``(alpha_0, alpha_1, ..., alpha_ec)``, scaled so that the training factors have mean
        square 1 and sign so that their mean is positive.
    gamma_eig : float
        The largest generalized eigenvalue ``gamma`` of ``P alpha = gamma Q alpha``.
    eig_residual : float
        ``||P alpha - gamma Q alpha|| / (||P|| ||alpha||)``.
    ridge : float
        The ridge ``D`` actually used (raised from the requested one when ``Q`` was not
        numerically positive definite; see ``ridge_raised``).
    ridge_raised : bool
    c_train : ndarray of shape (n,)
        ``c = K1 alpha`` at the training points.
    J_base, J_opt : float
        ``1'B0 1 / 1'W0 1`` (``c = 1``) and ``c'B0c / c'W0c`` at the optimized ``c``.
    """

    alpha: np.ndarray
    gamma_eig: float
    eig_residual: float
    ridge: float
    ridge_raised: bool
    c_train: np.ndarray
    J_base: float
    J_opt: float
    P: np.ndarray = field(repr=False)
    Q: np.ndarray = field(repr=False)


@single_blas_thread
def optimize_conformal(K0, y, K1, *, D: float = 1e-3) -> ConformalSolution:
    r"""Maximize the kernel Fisher criterion over the conformal coefficients (eqs. (40)-(41)).

    .. math::

        \max_\alpha \frac{\alpha' K_1' B_0 K_1 \alpha}{\alpha' K_1' (W_0 + D I) K_1 \alpha}
        \iff P \alpha = \gamma Q \alpha \text{ (largest } \gamma).

    Parameters
    ----------
    K0 : array_like of shape (n, n)
        Basic kernel on the training points.
    y : array_like of shape (n,)
        Labels in {-1, +1}.
    K1 : array_like of shape (n, n_ec + 1)
        :func:`pathlib_core.core.kernels.conformal_basis` at the training points (eq. (34)).
    D : float
        Ridge on ``W0`` (> 0). ``Q`` always carries a jitter of ``1e-12 * trace(Q)`` on its
        diagonal, which keeps it definite when ``K1'K1`` is singular (duplicated cores make
        it singular for every ``D``). If the Cholesky factorization still fails, ``D`` is
        raised by factors of 10 until it succeeds; ``ridge_raised`` reports it.

    Returns
    -------
    ConformalSolution
        ``alpha`` is the eigenvector of the largest generalized eigenvalue ``gamma_eig``,
        normalized so that ``c_train = K1 @ alpha`` has mean square 1 and a positive mean;
        ``J_base`` and ``J_opt`` are the Fisher ratios ``c'B0c / c'W0c`` of the unit factor
        and of ``c_train`` (``B0, W0`` from :func:`scatter_matrices` of ``K0``); ``P`` and
        ``Q`` are the matrices of the eigenproblem actually solved.

    Raises
    ------
    ValueError
        Bad input (naming the argument: ``K0`` not a symmetric kernel, labels that are not
        -1 / +1 or of one class only, ``K1`` with a different number of rows, ``D <= 0``).
    SolverError
        A ``Q`` that stays singular for every ridge tried.
    """
    K0 = as_kernel(K0, "K0")
    y = as_binary_labels(y, "y", length=K0.shape[0])
    K1 = as_matrix(K1, "K1")
    if K1.shape[0] != K0.shape[0]:
        raise ValueError(f"K1 must have {K0.shape[0]} rows (one per training point); "
                         f"got {K1.shape[0]}")
    D = positive_scalar(D, "D")
    B0, W0 = scatter_matrices(K0, y)
    P = K1.T @ B0 @ K1
    P = 0.5 * (P + P.T)
    G = K1.T @ K1
    base = K1.T @ W0 @ K1
    ones = np.ones(K0.shape[0])
    w_base = float(ones @ W0 @ ones)
    if not w_base > 1e-12 * float(np.abs(np.diag(K0)).sum()):
        check_psd(K0, "K0")  # a negative scatter means a K0 that is not a kernel
        raise ValueError("the within-class scatter 1'W0 1 of K0 is zero (each class is a single "
                         "point, or its points coincide in the feature space of K0): the "
                         "Fisher ratio J = 1'B0 1 / 1'W0 1 is undefined; at least one class "
                         "needs two distinct points")
    ridge, raised = D, False
    for _ in range(12):
        Q = 0.5 * (base + ridge * G + (base + ridge * G).T)
        # K1'K1 itself may be singular (duplicated cores): a tiny identity keeps Q definite
        Q = Q + 1e-12 * max(float(np.trace(Q)), 1e-300) * np.eye(Q.shape[0])
        try:
            scipy.linalg.cholesky(Q, lower=True)
            break
        except np.linalg.LinAlgError:
            if not raised:
                # W0 is positive semi-definite exactly when K0 is (its blocks are centred
                # Gram matrices): a K0 that is not PSD gets its own message, not a ridge
                check_psd(K0, "K0")
            ridge, raised = ridge * 10.0, True
    else:  # pragma: no cover - Q = K1'(W0 + D I)K1 + eps I is definite for D large enough
        raise SolverError("the conformal eigenproblem is singular for every ridge D tried")
    vals, vecs = scipy.linalg.eigh(P, Q)
    g, alpha = float(vals[-1]), vecs[:, -1].copy()
    c = K1 @ alpha
    if c.mean() < 0:
        alpha, c = -alpha, -c
    rms = float(np.sqrt(np.mean(c ** 2)))
    if rms > 0:
        alpha, c = alpha / rms, c / rms
    res = float(np.linalg.norm(P @ alpha - g * Q @ alpha)
                / max(np.linalg.norm(P, 2) * np.linalg.norm(alpha), 1e-300))
    J_base = float(ones @ B0 @ ones / w_base)
    w_opt = float(c @ W0 @ c)
    J_opt = float(c @ B0 @ c / w_opt) if w_opt > 0 else math.inf
    return ConformalSolution(alpha=alpha, gamma_eig=g, eig_residual=res, ridge=ridge,
                             ridge_raised=raised, c_train=c, J_base=J_base, J_opt=J_opt,
                             P=P, Q=Q)
