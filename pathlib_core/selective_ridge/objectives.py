r"""The selective-ridge criterion (11), its dual (22) and the certificates of a solution.

Public, validated functions: :func:`selective_penalty` (eq. (11)), :func:`primal_objective`,
:func:`dual_objective` (eqs. (22), (33), (36)), :func:`duality_gap` and
:func:`kkt_residuals` (eqs. (17)-(20)). The solver calls their private twins on trusted
arrays (no validation, optional precomputed products).
"""

from __future__ import annotations

import numpy as np

from ..core.validation import (
    as_binary_labels,
    as_matrix,
    as_vector,
    check_all_finite,
    check_choice,
    finite_scalar,
    positive_scalar,
)

__all__ = [
    "selective_penalty",
    "primal_objective",
    "dual_objective",
    "duality_gap",
    "kkt_residuals",
]

LOSSES = ("squared", "hinge")


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


def _primal_objective(X, y, coef, intercept, *, alpha, mu, loss, z=None) -> float:
    r"""Criterion (11): :math:`\gamma\sum_i r_\mu(a_i) + \sum_j q(y_j, a^\top x_j + b)`
    (``z``: the scores ``X a + b`` if known)."""
    z = _scores(X, coef) + intercept if z is None else z
    return float(alpha * _selective_penalty(coef, mu).sum() + _loss(y, z, loss).sum())


def _dual_objective(X, y, lam, *, alpha, mu, loss, s=None) -> float:
    r"""Dual criterion :math:`W(\lambda)` of eq. (22) with :math:`\varphi` of (33) / (36).

    Feasibility (:math:`\sum\lambda_j = 0`, the box for the hinge loss) is not checked here.
    ``s``: ``X' lam`` if the caller has it already.
    """
    s = X.T @ lam if s is None else s
    w = 0.5 * np.maximum(0.0, s * s - mu * mu).sum()
    if loss == "squared":
        w += 0.5 * alpha * float(lam @ lam) - float(y @ lam)
    else:
        w -= float(y @ lam)
    return float(w)


def _dual_infeasibility(y, lam, alpha, loss) -> float:
    """Largest relative violation of the dual constraints: ``|1' lam| / sum |lam_j|`` and, for
    the hinge loss, the box ``0 <= y_j lam_j <= 1 / (2 alpha)`` relative to its width."""
    tot = float(np.abs(lam).sum())
    v = abs(float(lam.sum())) / tot if tot > 0 else 0.0
    if loss == "hinge":
        c_box = 0.5 / alpha
        u = y * lam
        v = max(v, float(np.max(np.maximum(0.0, -u))) / c_box,
                float(np.max(u - c_box, initial=0.0)) / c_box)
    return v


def _gap_terms(X, y, coef, intercept, lam, *, alpha, mu, loss, s=None, J=None):
    """``(J, D, scale)``: the primal value (11), the dual value ``-2 alpha W(lam)`` and the sum
    of the absolute values of the terms of ``J - D`` (the scale of the gap; a feature with
    ``|s_i| > mu`` brings the terms ``s_i^2`` and ``mu^2`` of ``s_i^2 - mu^2``, which cancel
    where ``|s_i|`` is close to ``mu``)."""
    s = X.T @ lam if s is None else s
    if J is None:
        J = _primal_objective(X, y, coef, intercept, alpha=alpha, mu=mu, loss=loss)
    abs_s = np.abs(s)
    over = abs_s > mu
    pen = float(((abs_s[over] - mu) * (abs_s[over] + mu)).sum())
    pen_terms = float((abs_s[over] ** 2).sum()) + mu * mu * int(over.sum())
    ylam = float(y @ lam)
    D = -alpha * pen + 2.0 * alpha * ylam
    scale = J + alpha * pen_terms + 2.0 * alpha * float(np.abs(y) @ np.abs(lam))
    if loss == "squared":
        ll = float(lam @ lam)
        D -= alpha * alpha * ll
        scale += alpha * alpha * ll
    return J, D, scale


def _duality_gap(X, y, coef, intercept, lam, *, alpha, mu, loss, s=None, J=None) -> float:
    r"""Relative duality gap :math:`(J(a, b) + 2\gamma W(\lambda))` over the sum of the absolute
    values of its terms, plus the relative dual infeasibility of ``lam``.

    Zero (to rounding) exactly when ``(coef, intercept)`` is optimal for (11) and ``lam``
    is optimal for the dual; invariant under the exact symmetries of (11) (see
    :func:`duality_gap`). ``s``: ``X' lam``, ``J``: the primal value, if the caller has
    them already.
    """
    J, D, scale = _gap_terms(X, y, coef, intercept, lam, alpha=alpha, mu=mu, loss=loss, s=s,
                             J=J)
    rel = (J - D) / scale if scale > 0 else 0.0
    return float(rel + _dual_infeasibility(y, lam, alpha, loss))


def _ratio(v, scale):
    """``v / scale`` element by element, 0 where both vanish."""
    return np.divide(v, scale, out=np.zeros_like(v), where=scale > 0)


def _kkt_residuals(X, y, coef, intercept, lam, *, alpha, mu, loss, s=None, s_terms=None,
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
        # alpha lam_j = y_j - z_j (33)
        obj = _ratio(np.abs(alpha * lam - y + z), alpha * np.abs(lam) + np.abs(y) + fit)
    else:
        # 0 <= u_j = y_j lam_j <= 1/(2 alpha), u_j at the upper bound where y_j z_j < 1 and
        # at 0 where y_j z_j > 1 (36): complementarity as the smaller of the multiplier's
        # share of its range and the margin's slack relative to 1 + |terms of z_j|
        c_box = 0.5 / alpha
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


def _check(X, y, alpha, mu, loss):
    X = as_matrix(X, "X")
    loss = check_choice(loss, "loss", LOSSES)
    if loss == "hinge":
        y = as_binary_labels(y, "y", length=X.shape[0])
    else:
        y = as_vector(y, "y", length=X.shape[0], length_of="X")
    alpha = positive_scalar(alpha, "alpha")
    if mu is not None:
        mu = positive_scalar(mu, "mu", allow_zero=True)
    return X, y, alpha, mu, loss


#: the parameter entries the docstrings of the public functions share (numpydoc text)
PARAMETER_DOCS = {
    "X": r"""    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``).""",
    "y": r"""    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).""",
    "coef": r"""    coef : array_like of shape (n,)
        Direction vector :math:`a`.""",
    "intercept": r"""    intercept : float
        Bias :math:`b`.""",
    "lam": r"""    lam : array_like of shape (N,)
        Dual multipliers :math:`\lambda`, one per object, in the scaling of the module notes
        (:math:`a_i = x^{i\top}\lambda` for a strongly active feature), as in
        :attr:`SelectiveResult.dual`.""",
    "alpha": r"""    alpha : float > 0
        Weight of the penalty: the paper's :math:`\gamma` in (11) (``alpha`` here, as in
        scikit-learn's ``Ridge``, since ``gamma`` names a kernel width elsewhere).""",
    "mu": r"""    mu : float >= 0
        Selectivity :math:`\mu`.""",
    "loss": r"""    loss : {"squared", "hinge"}
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)). Keyword-only, no default.""",
}
_RAISES = r"""    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``alpha <= 0``, ``mu < 0`` or missing, hinge labels
        outside {-1, +1} or a single class, unknown ``loss``."""


def _shared_docs(func):
    """Fill ``{parameters: a, b, ...}`` and ``{raises}`` in ``func``'s docstring from
    :data:`PARAMETER_DOCS` (one text per parameter, for every function that takes it)."""
    doc = func.__doc__
    start = doc.find("    {parameters: ")
    if start >= 0:
        end = doc.index("}", start)
        names = [n.strip() for n in doc[start + len("    {parameters: "):end].split(",")]
        doc = doc[:start] + "\n".join(PARAMETER_DOCS[n] for n in names) + doc[end + 1:]
    func.__doc__ = doc.replace("    {raises}", _RAISES)
    return func


def _check_point(X, y, alpha, mu, loss, coef=None, intercept=None, lam=None):
    X, y, alpha, mu, loss = _check(X, y, alpha, mu, loss)
    if mu is None:
        raise ValueError("mu must be given (>= 0)")
    out = [X, y, alpha, mu, loss]
    if coef is not None:
        out.append(as_vector(coef, "coef", length=X.shape[1], length_of="X'"))
        out.append(finite_scalar(intercept, "intercept"))
    if lam is not None:
        out.append(as_vector(lam, "lam", length=X.shape[0], length_of="X"))
    return out


@_shared_docs
def primal_objective(X, y, coef, intercept, *, alpha, mu, loss) -> float:
    r"""Criterion (11): :math:`\gamma\sum_i r_\mu(a_i) + \sum_j q(y_j, a^\top x_j + b)`.

    Arguments are validated (``ValueError`` naming the argument); see :func:`selective_fit`.
    The value computed is

    .. math::

        J(a, b) = \gamma \sum_{i=1}^{n} r_\mu(a_i) + \sum_{j=1}^{N} q(y_j, a^\top x_j + b),

    with :math:`r_\mu` of :func:`selective_penalty` and :math:`q(y, z) = (y - z)^2` (squared
    loss, eq. (7)) or :math:`q(y, z) = \max(0, 1 - yz)` (hinge loss, eq. (8)).

    Parameters
    ----------
    {parameters: X, y, coef, intercept, alpha, mu, loss}

    Returns
    -------
    float
        :math:`J(a, b)`; equal to :attr:`SelectiveResult.objective` at a fitted point.

    {raises}
    """
    X, y, alpha, mu, loss, coef, intercept = _check_point(X, y, alpha, mu, loss, coef,
                                                          intercept)
    return _primal_objective(X, y, coef, intercept, alpha=alpha, mu=mu, loss=loss)


@_shared_docs
def dual_objective(X, y, lam, *, alpha, mu, loss) -> float:
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
    {parameters: X, y, lam, alpha, mu, loss}

    Returns
    -------
    float
        :math:`W(\lambda)`, evaluated as written whether or not ``lam`` is feasible.

    {raises}
    """
    X, y, alpha, mu, loss, lam = _check_point(X, y, alpha, mu, loss, lam=lam)
    return _dual_objective(X, y, lam, alpha=alpha, mu=mu, loss=loss)


@_shared_docs
def duality_gap(X, y, coef, intercept, lam, *, alpha, mu, loss) -> float:
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
    {parameters: X, y, coef, intercept, lam, alpha, mu, loss}

    Returns
    -------
    float
        The relative gap above; :attr:`SelectiveResult.gap` of a dual fit.

    {raises}
    """
    X, y, alpha, mu, loss, coef, intercept, lam = _check_point(X, y, alpha, mu, loss, coef,
                                                               intercept, lam)
    return _duality_gap(X, y, coef, intercept, lam, alpha=alpha, mu=mu, loss=loss)


@_shared_docs
def kkt_residuals(X, y, coef, intercept, lam, *, alpha, mu, loss) -> dict:
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
    {parameters: X, y, coef, intercept, lam, alpha, mu, loss}

    Returns
    -------
    dict
        ``"features"``, ``"objects"``, ``"bias"`` (the largest relative violation in each
        group, as above) and ``"max"``.

    {raises}
    """
    X, y, alpha, mu, loss, coef, intercept, lam = _check_point(X, y, alpha, mu, loss, coef,
                                                               intercept, lam)
    return _kkt_residuals(X, y, coef, intercept, lam, alpha=alpha, mu=mu, loss=loss)


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
