"""The result record of one selective-ridge fit."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.fit_result import FitResult

__all__ = ["SelectiveResult"]

@dataclass(repr=False)
class SelectiveResult(FitResult):
    """Solution of the selective ridge problem (11) at one ``(alpha, mu)``.

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

    @property
    def status(self) -> str:
        """``"optimal"``: a fit that misses its certificate raises instead of returning."""
        return str(self.info.get("status", "optimal"))
