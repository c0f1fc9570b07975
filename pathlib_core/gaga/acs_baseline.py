r"""Alternate convex search at one age and on a grid of ages, for every model: the baseline
the exact age-paths are compared with (Algorithm 1 of Qu, Li, Zhao and Gu, NeurIPS 2022).

:func:`acs` and :func:`svm_acs` solve the SPL objective (2) at one age and return one result
record; :func:`acs_path` and :func:`svm_acs_path` run them on a grid, each age warm-started
from the previous one, and return a :class:`~pathlib_core.core.solution_path.SolutionPath`
whose breakpoints are the grid ages. Between two grid ages that path interpolates linearly
(a display aid: only the grid ages are partial optima); ``kkt_residuals()`` gives the
partial-optimum certificate at each of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.fit_result import FitResult
from ..core.solution_path import Event, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import as_vector, positive_scalar
from .alternating import alternate
from .checks import acs_ages, check_acs_controls
from .docstrings import fill_doc
from .linear_models import _Certificate, _scaled_problem, _split, _validate
from .regularizers import _check_reg
from .svm_dual import _SVM, _ScaledSVM, _SVMCertificate, validate_svm
from .svm_path import _SVMGAGA, _acs_newton

__all__ = ["ACSResult", "SVMACSResult", "acs", "acs_path", "svm_acs", "svm_acs_path"]


@dataclass(repr=False)
class ACSResult(FitResult):
    """Result of :func:`acs` (Lasso, logistic regression) at one age.

    Attributes
    ----------
    coef : ndarray of shape (d,)
    intercept : float
        Always 0 for the Lasso.
    weights : ndarray of shape (n,)
        The sample weights ``v`` of the last ``v``-step (``v*(l(w), age)`` when converged).
    n_iter : int
        ACS iterations done.
    converged : bool
        Whether the partial-optimum residual reached ``tol`` (``False``: the cap
        ``max_iter`` was hit and the point is not certified).
    residual : float
        The partial-optimum residual in the user's units.
    info : dict
    """

    coef: np.ndarray
    intercept: float
    weights: np.ndarray
    n_iter: int
    converged: bool
    residual: float
    info: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``"converged"`` if the stopping test was met, else ``"max_iter"``."""
        return "converged" if self.converged else "max_iter"


@dataclass(repr=False)
class SVMACSResult(FitResult):
    """Result of :func:`svm_acs` (the self-paced SVM) at one age.

    Attributes
    ----------
    coef : ndarray of shape (d,) or None
        ``w = X' (alpha * y)`` for the linear kernel; ``None`` for other kernels.
    dual_coef : ndarray of shape (n,)
        ``alpha * y``: the decision function is ``K(x, X) @ dual_coef + intercept``.
    intercept : float
    weights : ndarray of shape (n,)
        The weights :math:`v^*(\\ell(\alpha, b), \\lambda)` of the returned point.
    alpha : ndarray of shape (n,)
        Dual variables (``0 <= alpha_i <= C v_i``).
    n_iter : int
        ACS iterations done.
    converged : bool
        Whether the partial-optimum residual reached ``tol``.
    residual : float
        The partial-optimum residual (:func:`svm_partial_optimum_residual`).
    """

    coef: np.ndarray | None
    dual_coef: np.ndarray
    intercept: float
    weights: np.ndarray
    alpha: np.ndarray
    n_iter: int
    converged: bool
    residual: float

    @property
    def status(self) -> str:
        """``"converged"`` if the stopping test was met, else ``"max_iter"``."""
        return "converged" if self.converged else "max_iter"


def _grid_path(ages, results, residual, info) -> SolutionPath:
    """The results at the visited ``ages`` as a path over the sorted ages, with an event
    ``"not_converged"`` where ACS hit its cap."""
    order = np.argsort(ages, kind="stable")
    events = [Event(float(ages[k]), "not_converged", ()) for k in order
              if not results[k].converged]
    info = dict(info, ages=[float(a) for a in ages],
                acs_iterations=int(sum(r.n_iter for r in results)),
                n_not_converged=int(sum(not r.converged for r in results)))
    return SolutionPath.piecewise_linear("age", [float(ages[k]) for k in order],
                                         [results[k] for k in order], events,
                                         residual=residual, info=info)


def _grid(search, ages, max_iter, tol, info) -> SolutionPath:
    """ACS at every age in the order given, each from the previous solution (the first
    from the unweighted fit), as a path over the sorted ages."""
    x, out = search.start(), []
    for a in ages:
        x, res = search.run(float(a), x, max_iter, tol)
        out.append(res)
    return _grid_path(ages, out, search.certificate, info)


class _LinearSearch:
    """ACS for the Lasso or logistic regression in the rescaled problem, reported in the
    user's units with the user's certificate."""

    def __init__(self, m, regularizer, mixture):
        self.m, self.regularizer, self.mixture = m, regularizer, mixture
        self.sc = _scaled_problem(m, regularizer, mixture)
        self.certificate = _Certificate(m, regularizer, mixture)

    def start(self):
        return self.sc.model.weighted_fit(np.ones(self.m.n))

    def run(self, age, theta, max_iter, tol):
        theta, v, k, ok = alternate(self.sc.model, age / self.sc.age_factor, theta,
                                    regularizer=self.regularizer, mixture=self.sc.mixture,
                                    max_iter=max_iter, tol=tol)
        th = self.sc.to_user(theta)
        coef, b = _split(self.m, th)
        return theta, ACSResult(coef, b, v, k, ok,
                                self.m.certificate(th, age, self.regularizer, self.mixture))


@fill_doc
@single_blas_thread
def acs(X, y, age, *, model: str, regularizer: str, alpha=None, C=None, mixture=None,
        warm_start=None, max_iter: int = 500, tol: float = 1e-11) -> ACSResult:
    r"""Alternate convex search (Algorithm 1) for the SPL objective (2) at one age.

    Alternates ``v <- v*(l(w), age)`` (closed form,
    :func:`~pathlib_core.gaga.regularizers.sp_weights`) and ``w <- argmin_w R(w) + sum_i v_i
    l_i(w)`` (solved to ~1e-13) until ``w`` is stationary, to ``tol`` (relative,
    :func:`~pathlib_core.gaga.linear_models.partial_optimum_residual`), for the weights
    ``v*(l(w), age)`` of its own losses: the partial-optimum certificate. A run that hits
    ``max_iter`` is returned with ``converged=False``: it is not a partial optimum.

    Parameters
    ----------
    {linear_data}
    age : float > 0
        The age :math:`\lambda` (``< 1`` for ``regularizer="log"``).
    model : {"lasso", "logistic"}
        Loss and regularizer: eq. (10) or eq. (24).
    regularizer : {"hard", "linear", "mixture", "log"}
        SP-regularizer (:func:`~pathlib_core.gaga.regularizers.sp_regularizer`).
    {penalties}
    {mixture}
    warm_start : array_like, optional
        Initial ``w`` (and intercept last, for logistic). Default: the unweighted fit.
    {acs_controls}

    Returns
    -------
    ACSResult

    Raises
    ------
    {acs_bad_input}
    {acs_linear_models_raise}
    """
    X, y, m, mixture = _validate(X, y, model, regularizer, alpha, C, mixture)
    age = positive_scalar(age, "age")
    _check_reg(regularizer, mixture, age)
    max_iter, tol = check_acs_controls(max_iter, tol)
    search = _LinearSearch(m, regularizer, mixture)
    if warm_start is None:
        theta = search.start()
    else:
        theta = search.sc.from_user(as_vector(warm_start, "warm_start", length=m.p))
    return search.run(age, theta, max_iter, tol)[1]


@fill_doc
@single_blas_thread
def acs_path(X, y, *, model: str, regularizer: str, ages=None, age_min=None, age_max=None,
             age_step: float = 0.5, alpha=None, C=None, mixture=None, max_iter: int = 500,
             tol: float = 1e-11) -> SolutionPath:
    r"""ACS on a grid of ages, each warm-started from the previous solution (the baseline).

    The first age starts from the unweighted fit (all ``v_i = 1``); each later age starts
    from the solution at the previous one, in the order visited. Each point is the
    alternate convex search of :func:`acs` for the SPL objective (2).

    Parameters
    ----------
    {linear_data}
    model : {"lasso", "logistic"}
        Loss and regularizer: eq. (10) or eq. (24).
    regularizer : {"hard", "linear", "mixture", "log"}
        SP-regularizer; ``"log"`` needs every age in (0, 1).
    {acs_grid}
    {penalties}
    {mixture}
    {acs_controls}

    Returns
    -------
    SolutionPath
        ``param_name == "age"``, a breakpoint at every grid age, where ``path.at(age)`` is
        that age's :class:`ACSResult`; events ``"not_converged"`` where the cap ``max_iter``
        was reached (that entry is not a partial optimum). ``path.info`` has ``ages`` (in
        the order visited), ``acs_iterations`` and ``n_not_converged``.

    Raises
    ------
    {acs_grid_bad_input}
    {acs_linear_models_raise}
    """
    ages = acs_ages(ages, age_min, age_max, age_step)
    X, y, m, mixture = _validate(X, y, model, regularizer, alpha, C, mixture)
    max_iter, tol = check_acs_controls(max_iter, tol)
    if regularizer == "log" and np.any(ages >= 1):
        raise ValueError("ages must be in (0, 1) with the LOG regularizer (zeta = 1 - age)")
    return _grid(_LinearSearch(m, regularizer, mixture), ages, max_iter, tol,
                 dict(model=model, regularizer=regularizer, mixture=mixture))


class _SVMSearch:
    """ACS for the self-paced SVM in the rescaled dual, with the user's certificate."""

    def __init__(self, X, y, C, regularizer, mixture, K, is_linear):
        self.X, self.y, self.is_linear = X, y, is_linear
        self.sc = _ScaledSVM(K, y, C, regularizer, mixture)
        self.user = _SVM(K, y, C, regularizer, mixture)
        self.engine = _SVMGAGA(self.sc.svm, 1e-6, ())
        self.certificate = _SVMCertificate(self.user)

    def start(self):
        return self.sc.svm.weighted_fit(np.ones(self.y.size))

    def run(self, age, z, max_iter, tol):
        tau = age / self.sc.age_factor
        z, k, ok = _acs_newton(self.engine, tau, z, max_iter=max_iter, tol=tol)
        alpha = self.sc.alpha_to_user(z[:-1])
        dual = alpha * self.y
        res = SVMACSResult(self.X.T @ dual if self.is_linear else None, dual, float(z[-1]),
                           self.sc.svm.v(z, tau), alpha, k, ok,
                           self.user.certificate(np.r_[alpha, z[-1]], age))
        return z, res


@fill_doc
@single_blas_thread
def svm_acs(X, y, age, *, regularizer, C=1.0, mixture=None, kernel="linear", gamma="scale",
            max_iter=500, tol=1e-11) -> SVMACSResult:
    r"""Alternate convex search (Algorithm 1) for the self-paced SVM at one age, from the
    unweighted SVM.

    Alternates :math:`v \leftarrow v^*(\ell(\alpha, b), \lambda)` and the weighted SVM of
    :func:`~pathlib_core.gaga.svm_dual.svm_weighted_fit` for the self-paced objective (7);
    once the sample sets have been stable for a few iterations, Newton steps on the piece's
    equations are tried (ACS alone converges only linearly). It stops when
    :func:`~pathlib_core.gaga.svm_dual.svm_partial_optimum_residual` is at most ``tol``.

    Parameters
    ----------
    {svm_data}
    age : float > 0
        The age :math:`\lambda`.
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*`.
    {svm_acs_options}

    Returns
    -------
    SVMACSResult

    Raises
    ------
    {acs_bad_input}
    SolverError
        (a ``RuntimeError``) A weighted SVM QP was not solved to optimality.
    """
    X, y, C, mixture, K, is_linear = validate_svm(X, y, regularizer, C, mixture, kernel, gamma)
    age = positive_scalar(age, "age")
    max_iter, tol = check_acs_controls(max_iter, tol)
    search = _SVMSearch(X, y, C, regularizer, mixture, K, is_linear)
    return search.run(age, search.start(), max_iter, tol)[1]


@fill_doc
@single_blas_thread
def svm_acs_path(X, y, *, regularizer, ages=None, age_min=None, age_max=None,
                 age_step: float = 0.5, C=1.0, mixture=None, kernel="linear", gamma="scale",
                 max_iter=500, tol=1e-11) -> SolutionPath:
    r"""ACS for the self-paced SVM on a grid of ages, each warm-started from the previous
    solution (the baseline).

    The first age starts from the unweighted SVM, each later one from the solution at the
    previous age, in the order visited; each point is the search of :func:`svm_acs` for the
    self-paced objective (7).

    Parameters
    ----------
    {svm_data}
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*`.
    {acs_grid}
    {svm_acs_options}

    Returns
    -------
    SolutionPath
        ``param_name == "age"``, a breakpoint at every grid age, where ``path.at(age)`` is
        that age's :class:`SVMACSResult`; events ``"not_converged"`` where the cap was
        reached. ``path.info`` has ``ages`` (in the order visited), ``acs_iterations`` and
        ``n_not_converged``.

    Raises
    ------
    {acs_grid_bad_input}
    SolverError
        (a ``RuntimeError``) A weighted SVM QP was not solved to optimality.
    """
    ages = acs_ages(ages, age_min, age_max, age_step)
    X, y, C, mixture, K, is_linear = validate_svm(X, y, regularizer, C, mixture, kernel, gamma)
    max_iter, tol = check_acs_controls(max_iter, tol)
    return _grid(_SVMSearch(X, y, C, regularizer, mixture, K, is_linear), ages, max_iter, tol,
                 dict(model="svm", regularizer=regularizer, mixture=mixture, C=C))
