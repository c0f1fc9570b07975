r"""Residuals of the optimality (KKT) conditions of quadratic and linear programs.

The module holds :func:`qp_residuals` and :func:`lp_residuals` (a primal-dual pair's distance
from optimality, as :class:`KKTResiduals`), :func:`bound_multipliers_from_gradient`, and the
validated problem data the solvers share (:class:`QPData`, :func:`qp_data_residuals`,
:func:`recover_bounds`).

Every chapter of the compendium derives optimality conditions and then *checks* them on the
solution it just computed. This module measures how far a primal-dual pair is from satisfying
them, for the quadratic program

.. math::

    \min_x \; \tfrac12 x^\top P x + q^\top x
    \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

and for the linear program (``P = 0``, ``q = c``). Any of ``G/h``, ``A/b``, ``lb``, ``ub``
may be absent; bounds may contain ``-inf`` / ``+inf`` entries (no constraint).

Sign convention (used everywhere in :mod:`pathlib_core`)
---------------------------------------------------------
The Lagrangian is

.. math::

    L(x, z, \nu, w^{lb}, w^{ub}) = \tfrac12 x^\top P x + q^\top x + z^\top (G x - h)
        + \nu^\top (A x - b) - (w^{lb})^\top (x - lb) + (w^{ub})^\top (x - ub),

with ``z >= 0``, ``w_lb >= 0``, ``w_ub >= 0`` and ``nu`` free. The KKT conditions are

- stationarity:         ``P x + q + G' z + A' nu - w_lb + w_ub = 0``;
- primal feasibility:   ``G x <= h``, ``A x = b``, ``lb <= x <= ub``;
- dual feasibility:     ``z >= 0``, ``w_lb >= 0``, ``w_ub >= 0``, and ``w_lb[i] = 0`` where
  ``lb[i] = -inf`` (``w_ub[i] = 0`` where ``ub[i] = +inf``);
- complementarity:      ``z_j (G x - h)_j = 0``, ``w_lb[i] (x - lb)[i] = 0``,
  ``w_ub[i] (ub - x)[i] = 0``.

So ``w_lb[i] > 0`` means "the gradient pushes ``x[i]`` below its lower bound", and for a
box-constrained problem ``w_lb - w_ub`` is the gradient of the objective (plus general
constraint terms) -- see :func:`bound_multipliers_from_gradient`.

Absolute and relative residuals
-------------------------------
Each residual is the largest absolute violation (infinity norm) of its group of conditions
(:class:`KKTResiduals`). With ``relative=True`` every single condition is measured against its
own natural scale, the size of the terms it is made of (a componentwise backward error, as in
Oettli and Prager 1964), so the residual does not change when the problem, a variable or a
constraint is rescaled, and a wrong point cannot hide behind a large term elsewhere:

- stationarity, row ``i``: ``|(P x + q + G'z + A'nu - w_lb + w_ub)_i|`` divided by
  ``s_i = (|P||x| + |q| + |G|'|z| + |A|'|nu| + w_lb + w_ub)_i``;
- primal feasibility, row ``j`` of ``G`` (of ``A``): the violation divided by
  ``(|G||x| + |h|)_j`` (``(|A||x| + |b|)_j``); a bound on ``x_i`` by the width of the box
  ``ub_i - lb_i`` when both bounds are finite, else by ``|x_i| + |bound_i|``;
- dual feasibility and the size of a multiplier: a multiplier is measured by its share of the
  stationarity rows it enters, ``max_i |G_ji| z_j / s_i`` for ``z_j`` and ``w_i / s_i`` for a
  bound multiplier;
- complementarity: per condition the smaller of the relative multiplier and the relative slack
  (either must vanish).

``|P||x|`` is the product of the entrywise absolute values, the size of the terms that cancel
in ``P x``: it bounds the rounding error of the residual, so a computed optimum gives residuals
of the order of the machine precision, and each is at most 1. A group with no terms (``0 /
0``) counts as satisfied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .validation import as_matrix, as_symmetric, as_vector, positive_scalar

__all__ = [
    "KKTResiduals",
    "qp_residuals",
    "lp_residuals",
    "bound_multipliers_from_gradient",
    "QPData", "qp_data_residuals", "recover_bounds",
]


# ---------------------------------------------------------------------------------------------
# Problem data (validated once, shared with pathlib_core.core.qp)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QPData:
    """Validated QP data; absent constraints are empty arrays, absent bounds are +-inf."""

    P: np.ndarray | None  # (n, n) symmetric, or None for an LP
    q: np.ndarray  # (n,)
    G: np.ndarray  # (m_G, n)
    h: np.ndarray  # (m_G,)
    A: np.ndarray  # (m_A, n)
    b: np.ndarray  # (m_A,)
    lb: np.ndarray  # (n,), entries in [-inf, +inf)
    ub: np.ndarray  # (n,), entries in (-inf, +inf]

    @property
    def n(self) -> int:
        return self.q.shape[0]

    def objective(self, x: np.ndarray) -> float:
        quad = 0.0 if self.P is None else 0.5 * float(x @ (self.P @ x))
        return quad + float(self.q @ x)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.q.copy() if self.P is None else self.P @ x + self.q


def _constraint_pair(M, v, mname: str, vname: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if M is None and v is None:
        return np.zeros((0, n)), np.zeros(0)
    if M is None or v is None:
        given, missing = (mname, vname) if v is None else (vname, mname)
        raise ValueError(f"{missing} must be given together with {given}; got only {given}")
    mat = as_matrix([M] if np.ndim(M) == 1 else M, mname)  # a 1-D M is a single row
    if mat.shape[1] != n:
        raise ValueError(
            f"{mname} must have {n} columns (the length of the variable x); "
            f"got shape {mat.shape}"
        )
    vec = as_vector([v] if np.ndim(v) == 0 else v, vname, length=mat.shape[0], length_of=mname)
    return mat, vec


def _bound(v, name: str, n: int, *, lower: bool) -> np.ndarray:
    inf = -np.inf if lower else np.inf
    if v is None:
        return np.full(n, inf)
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or a numeric 1-D array; "
                         f"got {type(v).__name__}") from exc
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a scalar or have shape ({n},); got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN; found {int(np.isnan(arr).sum())}")
    if lower and np.any(arr == np.inf):
        raise ValueError(f"{name} must be < +inf (use -inf for 'no lower bound')")
    if not lower and np.any(arr == -np.inf):
        raise ValueError(f"{name} must be > -inf (use +inf for 'no upper bound')")
    return arr.copy()


def _qp_data(P, q, *, G=None, h=None, A=None, b=None, lb=None, ub=None,
             qname: str = "q") -> QPData:
    """Validate QP/LP data (``P=None`` for an LP) at the public edge."""
    q_arr = as_vector(q, qname)
    n = q_arr.shape[0]
    if n == 0:
        raise ValueError(f"{qname} must have at least one entry")
    P_arr = None
    if P is not None:
        P_arr = as_symmetric(P, "P", what="(n x n) matrix", scale_floor=1.0)
        if P_arr.shape[0] != n:
            raise ValueError(f"{qname} must have length {P_arr.shape[0]} (the size of P); "
                             f"got {n}")
    G_arr, h_arr = _constraint_pair(G, h, "G", "h", n)
    A_arr, b_arr = _constraint_pair(A, b, "A", "b", n)
    lb_arr = _bound(lb, "lb", n, lower=True)
    ub_arr = _bound(ub, "ub", n, lower=False)
    bad = np.flatnonzero(lb_arr > ub_arr)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"lb must be <= ub; lb[{i}] = {lb_arr[i]} > ub[{i}] = {ub_arr[i]} "
                         f"({bad.size} such entries)")
    return QPData(P_arr, q_arr, G_arr, h_arr, A_arr, b_arr, lb_arr, ub_arr)


def _multiplier(v, name: str, length: int, what: str) -> np.ndarray:
    if v is None:
        return np.zeros(length)
    return as_vector([v] if np.ndim(v) == 0 else v, name, length=length, length_of=what)


# ---------------------------------------------------------------------------------------------
# Result type
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KKTResiduals:
    """Largest violation of each group of KKT conditions (see the module docstring).

    Attributes
    ----------
    stationarity : float
        ``max |P x + q + G' z + A' nu - w_lb + w_ub|``.
    primal_feasibility : float
        Largest of ``max (G x - h)_+``, ``max |A x - b|``, ``max (lb - x)_+``, ``max (x - ub)_+``
        (the three parts are in ``parts``).
    dual_feasibility : float
        Largest of ``max (-z)_+``, ``max (-w_lb)_+``, ``max (-w_ub)_+`` and of the bound
        multipliers of infinite bounds (which must be zero).
    complementarity : float
        ``max`` of ``|z_j (G x - h)_j|``, ``|w_lb[i] (x - lb)[i]|``, ``|w_ub[i] (ub - x)[i]|``
        (over finite bounds).
    relative : bool
        Whether the residuals are scaled (see the module docstring) or absolute.
    parts : dict
        Every residual broken down by constraint type (``"primal_inequality"``,
        ``"primal_equality"``, ``"primal_bounds"``, ``"dual_inequality"``, ``"dual_bounds"``,
        ``"complementarity_inequality"``, ``"complementarity_bounds"``).
    """

    stationarity: float
    primal_feasibility: float
    dual_feasibility: float
    complementarity: float
    relative: bool = False
    parts: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def max(self) -> float:
        """The largest of the four residuals."""
        return max(self.stationarity, self.primal_feasibility, self.dual_feasibility,
                   self.complementarity)

    def as_dict(self) -> dict[str, float]:
        """The four residuals and their maximum as a plain dict of floats."""
        return {
            "stationarity": self.stationarity,
            "primal_feasibility": self.primal_feasibility,
            "dual_feasibility": self.dual_feasibility,
            "complementarity": self.complementarity,
            "max": self.max,
        }

    def __str__(self) -> str:
        kind = "rel" if self.relative else "abs"
        return (f"KKT residuals ({kind}): stationarity {self.stationarity:.2e} | "
                f"primal {self.primal_feasibility:.2e} | dual {self.dual_feasibility:.2e} | "
                f"complementarity {self.complementarity:.2e} | max {self.max:.2e}")


# ---------------------------------------------------------------------------------------------
# Core computation (trusts validated data)
# ---------------------------------------------------------------------------------------------
def _inf_norm(*arrays) -> float:
    out = 0.0
    for a in arrays:
        if np.size(a):
            out = max(out, float(np.max(np.abs(a))))
    return out


def _positive_part_max(v: np.ndarray) -> float:
    return float(np.max(np.maximum(v, 0.0))) if v.size else 0.0


def qp_data_residuals(d: QPData, x, z, nu, w_lb, w_ub, relative: bool) -> KKTResiduals:
    fin_lb, fin_ub = np.isfinite(d.lb), np.isfinite(d.ub)
    Px = np.zeros_like(x) if d.P is None else d.P @ x
    Gtz, Atnu = d.G.T @ z, d.A.T @ nu
    stat = Px + d.q + Gtz + Atnu - w_lb + w_ub
    Gx, Ax = d.G @ x, d.A @ x
    s_ineq = Gx - d.h
    r_eq = Ax - d.b
    d_lb = np.where(fin_lb, x - np.where(fin_lb, d.lb, 0.0), 0.0)  # x - lb >= 0
    d_ub = np.where(fin_ub, np.where(fin_ub, d.ub, 0.0) - x, 0.0)  # ub - x >= 0

    parts = {
        "stationarity": _inf_norm(stat),
        "primal_inequality": _positive_part_max(s_ineq),
        "primal_equality": _inf_norm(r_eq),
        "primal_bounds": max(_positive_part_max(-d_lb), _positive_part_max(-d_ub)),
        "dual_inequality": _positive_part_max(-z),
        "dual_bounds": max(_positive_part_max(-w_lb), _positive_part_max(-w_ub),
                           _inf_norm(w_lb[~fin_lb]), _inf_norm(w_ub[~fin_ub])),
        "complementarity_inequality": _inf_norm(z * s_ineq),
        "complementarity_bounds": _inf_norm(np.where(fin_lb, w_lb * d_lb, 0.0),
                                            np.where(fin_ub, w_ub * d_ub, 0.0)),
    }
    if relative:
        parts = _relative_parts(d, x, z, nu, w_lb, w_ub, stat, s_ineq, r_eq, d_lb, d_ub)
    return KKTResiduals(
        stationarity=parts["stationarity"],
        primal_feasibility=max(parts["primal_inequality"], parts["primal_equality"],
                               parts["primal_bounds"]),
        dual_feasibility=max(parts["dual_inequality"], parts["dual_bounds"]),
        complementarity=max(parts["complementarity_inequality"],
                            parts["complementarity_bounds"]),
        relative=relative,
        parts=parts,
    )


def _ratio(v: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``v / s`` elementwise with ``0 / 0 = 0`` (a condition with no terms holds)."""
    out = np.zeros(np.shape(v))
    nz = s > 0
    out[nz] = v[nz] / s[nz]
    out[~nz & (v > 0)] = np.inf
    return out


def _max(v: np.ndarray) -> float:
    return float(np.max(v)) if np.size(v) else 0.0


def _relative_parts(d: QPData, x, z, nu, w_lb, w_ub, stat, s_ineq, r_eq, d_lb,
                    d_ub) -> dict[str, float]:
    """Every condition against its own natural scale (module docstring)."""
    fin_lb, fin_ub = np.isfinite(d.lb), np.isfinite(d.ub)
    ax = np.abs(x)
    absG, absA = np.abs(d.G), np.abs(d.A)
    s_stat = (np.abs(d.q) + absG.T @ np.abs(z) + absA.T @ np.abs(nu) + np.abs(w_lb)
              + np.abs(w_ub))
    if d.P is not None:
        s_stat = s_stat + np.abs(d.P) @ ax
    # the size of each multiplier: its largest share of a stationarity row it enters
    inv_s = _ratio(np.ones_like(s_stat), s_stat)
    inv_s[~np.isfinite(inv_s)] = 0.0
    z_share = np.abs(z) * (np.max(absG * inv_s[None, :], axis=1) if z.size else 0.0)
    zneg = np.maximum(-z, 0.0) * (np.max(absG * inv_s[None, :], axis=1) if z.size else 0.0)
    wl_share, wu_share = np.abs(w_lb) * inv_s, np.abs(w_ub) * inv_s
    box = fin_lb & fin_ub
    width = np.where(box, np.where(box, d.ub, 0.0) - np.where(box, d.lb, 0.0), 0.0)
    s_lb = np.where(box, width, ax + np.abs(np.where(fin_lb, d.lb, 0.0)))
    s_ub = np.where(box, width, ax + np.abs(np.where(fin_ub, d.ub, 0.0)))
    g_slack = _ratio(np.abs(s_ineq), absG @ ax + np.abs(d.h))
    lb_slack = np.where(fin_lb, _ratio(np.abs(d_lb), s_lb), 0.0)
    ub_slack = np.where(fin_ub, _ratio(np.abs(d_ub), s_ub), 0.0)
    return {
        "stationarity": _max(_ratio(np.abs(stat), s_stat)),
        "primal_inequality": _max(_ratio(np.maximum(s_ineq, 0.0), absG @ ax + np.abs(d.h))),
        "primal_equality": _max(_ratio(np.abs(r_eq), absA @ ax + np.abs(d.b))),
        "primal_bounds": max(_max(np.where(fin_lb, _ratio(np.maximum(-d_lb, 0.0), s_lb), 0.0)),
                             _max(np.where(fin_ub, _ratio(np.maximum(-d_ub, 0.0), s_ub), 0.0))),
        "dual_inequality": _max(zneg),
        "dual_bounds": max(_max(np.maximum(-w_lb, 0.0) * inv_s),
                           _max(np.maximum(-w_ub, 0.0) * inv_s),
                           _max(wl_share[~fin_lb]), _max(wu_share[~fin_ub])),
        "complementarity_inequality": _max(np.minimum(z_share, g_slack)),
        "complementarity_bounds": max(_max(np.where(fin_lb, np.minimum(wl_share, lb_slack), 0.0)),
                                      _max(np.where(fin_ub, np.minimum(wu_share, ub_slack),
                                                    0.0))),
    }


def recover_bounds(grad: np.ndarray, x: np.ndarray, lb: np.ndarray, ub: np.ndarray,
                    tol: float) -> tuple[np.ndarray, np.ndarray]:
    fin_lb, fin_ub = np.isfinite(lb), np.isfinite(ub)
    at_lb = fin_lb & (x - np.where(fin_lb, lb, 0.0) <= tol)
    at_ub = fin_ub & (np.where(fin_ub, ub, 0.0) - x <= tol)
    w_lb = np.where(at_lb & (grad > 0), grad, 0.0)
    w_ub = np.where(at_ub & (grad < 0), -grad, 0.0)
    return w_lb, w_ub


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------
def bound_multipliers_from_gradient(grad, x, lb=None, ub=None, *,
                                    tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    r"""Recover bound multipliers from the gradient of the Lagrangian without bound terms.

    For the box-constrained part of a problem, stationarity reads ``r - w_lb + w_ub = 0`` with
    ``r = P x + q + G' z + A' nu`` (``grad``). Given ``x`` and ``r``, this returns the
    multipliers that satisfy it wherever the sign conditions allow:

    .. math::

        w^{lb}_i = \max(r_i, 0) \ \text{if} \ x_i - lb_i \le tol, \qquad
        w^{ub}_i = \max(-r_i, 0) \ \text{if} \ ub_i - x_i \le tol,

    and zero otherwise. Whatever part of ``r`` cannot be explained this way (a non-zero
    gradient at an interior point, or one pointing the wrong way at a bound) is left to show up
    in the stationarity residual of :func:`qp_residuals`; the multipliers are non-negative by
    construction.

    Parameters
    ----------
    grad : array_like of shape (n,)
        Gradient of the Lagrangian without the bound terms, ``P x + q + G' z + A' nu``.
    x : array_like of shape (n,)
        Primal point.
    lb, ub : float or array_like of shape (n,), optional
        Bounds (``-inf`` / ``+inf`` entries, or ``None``, mean no bound).
    tol : float
        Distance to a bound below which ``x[i]`` counts as being at that bound.

    Returns
    -------
    w_lb, w_ub : ndarray of shape (n,)
    """
    g = as_vector(grad, "grad")
    n = g.shape[0]
    x_arr = as_vector(x, "x", length=n, length_of="grad")
    lb_arr = _bound(lb, "lb", n, lower=True)
    ub_arr = _bound(ub, "ub", n, lower=False)
    tol = positive_scalar(tol, "tol", allow_zero=True)
    return recover_bounds(g, x_arr, lb_arr, ub_arr, tol)


def qp_residuals(P, q, x, *, G=None, h=None, A=None, b=None, lb=None, ub=None, z=None,
                 nu=None, w_lb=None, w_ub=None, relative: bool = False,
                 bound_tol: float = 1e-9) -> KKTResiduals:
    r"""KKT residuals of a primal-dual pair for a convex quadratic program.

    The problem is

    .. math::

        \min_x \; \tfrac12 x^\top P x + q^\top x
        \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

    with Lagrangian ``L = 1/2 x'Px + q'x + z'(Gx - h) + nu'(Ax - b) - w_lb'(x - lb)
    + w_ub'(x - ub)`` and ``z, w_lb, w_ub >= 0`` (see the module docstring).

    Parameters
    ----------
    P : array_like of shape (n, n)
        Symmetric (positive semi-definite) Hessian.
    q : array_like of shape (n,)
        Linear term.
    x : array_like of shape (n,)
        Primal point to check.
    G, h : array_like of shapes (m_G, n) and (m_G,), optional
        Inequality constraints ``G x <= h``.
    A, b : array_like of shapes (m_A, n) and (m_A,), optional
        Equality constraints ``A x = b``.
    lb, ub : float or array_like of shape (n,), optional
        Bounds; ``-inf`` / ``+inf`` entries mean no bound.
    z, nu : array_like, optional
        Multipliers of ``G x <= h`` and ``A x = b``; ``None`` means zero.
    w_lb, w_ub : array_like of shape (n,), optional
        Multipliers of the lower and upper bounds. When *both* are ``None`` and the problem
        has finite bounds, they are recovered from the gradient with
        :func:`bound_multipliers_from_gradient` (``tol=bound_tol``); pass zeros to check
        ``x`` against zero bound multipliers instead.
    relative : bool
        Absolute residuals (default) or residuals scaled by the size of their terms.
    bound_tol : float
        Tolerance used when recovering bound multipliers.

    Returns
    -------
    KKTResiduals
    """
    d = _qp_data(P, q, G=G, h=h, A=A, b=b, lb=lb, ub=ub)
    return _check_pair(d, x, z, nu, w_lb, w_ub, relative, bound_tol)


def lp_residuals(c, x, *, G=None, h=None, A=None, b=None, lb=None, ub=None, z=None,
                 nu=None, w_lb=None, w_ub=None, relative: bool = False,
                 bound_tol: float = 1e-9) -> KKTResiduals:
    r"""KKT residuals of a primal-dual pair for the linear program.

    .. math::

        \min_x \; c^\top x
        \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

    that is :func:`qp_residuals` with ``P = 0`` (stationarity ``c + G'z + A'nu - w_lb + w_ub =
    0``). The parameters are those of :func:`qp_residuals` with ``c`` in place of ``q``.

    Parameters
    ----------
    c : array_like of shape (n,)
        Cost vector.
    x : array_like of shape (n,)
        Primal point to check.
    G, h : array_like of shapes (m_G, n) and (m_G,), optional
        Inequality constraints ``G x <= h`` (a 1-D ``G`` is one row); give both or neither.
    A, b : array_like of shapes (m_A, n) and (m_A,), optional
        Equality constraints ``A x = b``; give both or neither.
    lb, ub : float or array_like of shape (n,), optional
        Bounds; ``-inf`` / ``+inf`` entries (or ``None``) mean no bound.
    z, nu : array_like, optional
        Multipliers of ``G x <= h`` (length ``m_G``) and ``A x = b`` (length ``m_A``);
        ``None`` means zero.
    w_lb, w_ub : array_like of shape (n,), optional
        Multipliers of the lower and upper bounds. When *both* are ``None`` and the problem
        has a finite bound, they are recovered from ``c + G'z + A'nu`` with
        :func:`bound_multipliers_from_gradient` (``tol=bound_tol``); if only one is given,
        the other is taken as zero.
    relative : bool, default False
        Absolute residuals, or residuals scaled by the size of their terms (module
        docstring: each condition against the size of its own terms).
    bound_tol : float >= 0, default 1e-9
        Tolerance used when recovering bound multipliers.

    Returns
    -------
    KKTResiduals
        Stationarity, primal and dual feasibility and complementarity residuals (and their
        breakdown in ``parts``).

    Raises
    ------
    ValueError
        Mis-shaped or non-finite data, a constraint matrix without its right-hand side (or
        the reverse), ``lb > ub`` somewhere, NaN bounds, each naming the argument.
    """
    d = _qp_data(None, c, G=G, h=h, A=A, b=b, lb=lb, ub=ub, qname="c")
    return _check_pair(d, x, z, nu, w_lb, w_ub, relative, bound_tol)


def _check_pair(d: QPData, x, z, nu, w_lb, w_ub, relative, bound_tol) -> KKTResiduals:
    x_arr = as_vector(x, "x", length=d.n, length_of="P / q")
    z_arr = _multiplier(z, "z", d.G.shape[0], "G")
    nu_arr = _multiplier(nu, "nu", d.A.shape[0], "A")
    if w_lb is None and w_ub is None and (np.isfinite(d.lb).any() or np.isfinite(d.ub).any()):
        tol = positive_scalar(bound_tol, "bound_tol", allow_zero=True)
        grad = d.gradient(x_arr) + d.G.T @ z_arr + d.A.T @ nu_arr
        wl, wu = recover_bounds(grad, x_arr, d.lb, d.ub, tol)
    else:
        wl = _multiplier(w_lb, "w_lb", d.n, "the variable x")
        wu = _multiplier(w_ub, "w_ub", d.n, "the variable x")
    return qp_data_residuals(d, x_arr, z_arr, nu_arr, wl, wu, bool(relative))
