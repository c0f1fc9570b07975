r"""The paper's own dual iteration for selective ridge: Newton steps with golden-section
shortening, eqs. (27)-(32) of {cite}`selectiveridge`, implemented literally.

At step ``k`` the paper fixes the active feature set
:math:`I^k = \{i : |x^{i\top}\lambda^k| > \mu\}` (28), minimizes the dual with that summation
domain,

.. math::

    \tilde\lambda^{k+1} = \arg\min_{\lambda}\; \tfrac12 \sum_{i \in I^k}
      \big((x^{i\top}\lambda)^2 - \mu^2\big) + \sum_{j=1}^N \varphi(y_j, \lambda_j)
    \quad \text{s.t. } \textstyle\sum_j \lambda_j = 0 \text{ (and the box of (17))}, \qquad (27)

accepts it if the true dual criterion :math:`W` does not increase (29), and otherwise
shortens the step by a golden-section search for
:math:`\tau \in [0, 1]` minimizing :math:`W((1 - \tau)\lambda^k + \tau\tilde\lambda^{k+1})`
(30)-(31). It stops when the active set repeats, :math:`I^{k+1} = I^k` (32).

The paper argues that :math:`W` is twice differentiable, so this is a Newton method. It is
not: :math:`\tfrac12\max(0, s_i^2 - \mu^2)` has a gradient jump of size :math:`\mu` at
:math:`|s_i| = \mu`, and at the optimum features typically sit exactly there (the kink
regime of :mod:`pathlib_core.selective_ridge`). The minimizer of (27) is then a poor step and the
golden-section search shrinks it, often to nearly zero. This module exists so that the book can
show that behaviour with numbers; :func:`pathlib_core.selective_ridge.fit.selective_fit` is the
solver to use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.threads import single_blas_thread
from ..core.validation import positive_int
from .inner import _solve_inner
from .objectives import _check, _dual_objective

__all__ = ["NewtonIterationResult", "paper_newton_iteration"]

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(repr=False)
class NewtonIterationResult(FitResult):
    """Outcome of :func:`paper_newton_iteration`.

    Attributes
    ----------
    dual : ndarray of shape (N,)
        The last iterate :math:`\\lambda^k`.
    objective : ndarray
        :math:`W(\\lambda^k)` for ``k = 0, 1, ...`` (non-increasing by construction).
    step : ndarray
        The step length :math:`\\tau` taken at each iteration (1 = the full step (29)).
    n_active : ndarray of int
        :math:`|I^k|` at each iteration.
    stopped : bool
        True if the stopping rule (32) fired (the active set repeated); False if
        ``max_iter`` was reached first.
    n_iter : int
    info : dict
    """

    dual: np.ndarray
    objective: np.ndarray
    step: np.ndarray
    n_active: np.ndarray
    stopped: bool
    n_iter: int
    info: dict = field(default_factory=dict, repr=False)

    @property
    def status(self) -> str:
        """``"converged"`` if the stopping rule (32) fired, else ``"max_iter"``."""
        return "converged" if self.stopped else "max_iter"

    @property
    def fun(self) -> float:
        """The last value of the objective history."""
        return float(self.objective[-1])


def _golden_section(f, n_eval):
    """Minimize a unimodal ``f`` on ``[0, 1]`` by ``n_eval`` golden-section reductions."""
    a, b = 0.0, 1.0
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(n_eval):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


@single_blas_thread
def paper_newton_iteration(X, y, *, alpha, mu, loss="squared", max_iter=100,
                           n_golden=40) -> NewtonIterationResult:
    r"""Run the paper's iteration (28)-(32) on the dual of the selective ridge criterion (11).

    Minimizes (in the paper's scaling, see :mod:`pathlib_core.selective_ridge`)

    .. math::

        W(\lambda) = \tfrac12\sum_{i=1}^n \max(0, (x^{i\top}\lambda)^2 - \mu^2)
          + \sum_{j=1}^N \varphi(y_j, \lambda_j), \qquad \textstyle\sum_j\lambda_j = 0,

    with :math:`\varphi` of (33) (squared loss) or (36) (hinge loss, with its box), starting
    from the solution of the full-feature problem (the paper's :math:`I^0 = \{1..n\}`).

    Parameters
    ----------
    X, y, alpha, mu, loss
        As in :func:`pathlib_core.selective_ridge.fit.selective_fit`.
    max_iter : int
        Iteration cap.
    n_golden : int
        Golden-section reductions per shortened step (the interval shrinks to
        ``0.618 ** n_golden``).

    Returns
    -------
    NewtonIterationResult
        The iterates' dual objectives, steps and active-set sizes; ``stopped`` tells whether
        the paper's stopping rule (32) fired. No claim of optimality is made: compare
        ``objective[-1]`` with the dual objective of
        :func:`pathlib_core.selective_ridge.fit.selective_fit` (which is certified by its duality
        gap).
    """
    X, y, alpha, mu, loss = _check(X, y, alpha, mu, loss)
    if mu is None:
        raise ValueError("mu must be given (>= 0)")
    max_iter = positive_int(max_iter, "max_iter")
    n_golden = positive_int(n_golden, "n_golden")
    N, n = X.shape
    empty = np.zeros(0, int)

    def W(lam):
        return _dual_objective(X, y, lam, alpha=alpha, mu=mu, loss=loss)

    active = np.arange(n)  # I^0: every feature
    lam = np.zeros(N)
    objective, steps, sizes = [], [], []
    stopped = False
    k = 0
    for k in range(1, max_iter + 1):
        sizes.append(len(active))
        new, _, _, ok = _solve_inner(X, y, alpha, mu, loss, active, empty, np.zeros(0), lam)
        if not ok:
            raise SolverError(f"paper_newton_iteration: the inner problem (27) failed at "
                               f"iteration {k}")
        if k == 1 or W(new) <= W(lam):  # (29); the first step has no previous point
            tau = 1.0
        else:  # (30)-(31)
            d = new - lam
            tau = _golden_section(lambda t, d=d, lam=lam: W(lam + t * d), n_golden)
            new = lam + tau * d
            if W(new) > W(lam):  # the bracket ended at 0 up to its width: no progress
                tau, new = 0.0, lam
        lam = new
        objective.append(W(lam))
        steps.append(tau)
        nxt = np.flatnonzero(np.abs(X.T @ lam) > mu)
        if np.array_equal(nxt, active):  # (32)
            stopped = True
            break
        active = nxt
    return NewtonIterationResult(dual=lam, objective=np.array(objective), step=np.array(steps),
                                 n_active=np.array(sizes), stopped=stopped, n_iter=k,
                                 info={"mu": mu, "alpha": alpha, "loss": loss})
