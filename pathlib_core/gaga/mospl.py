r"""MOSPL: multi-objective self-paced learning by NSGA-III, the evolutionary age-path baseline
of the GAGA paper (refs. [29, 30] and Appendix D.2 of Qu, Li, Zhao and Gu, NeurIPS 2022).

Li, Gong, Meng and Miao (AAAI 2016) split the SPL objective (2) into its two terms, the
weighted loss and the SP-regularizer, and trade them off with a multi-objective
evolutionary algorithm instead of raising the age step by step. For the regularizers whose
age enters linearly, :math:`f(v, \lambda) = \lambda\, g(v)`, the SPL objective at age
:math:`\lambda` is the weighted sum :math:`F_1 + \lambda F_2` of

.. math::

    F_1(w, v) = R(w) + \sum_{i=1}^n v_i\, \ell_i(w), \qquad
    F_2(v) = \sum_{i=1}^n g(v_i),                                         \qquad (\mathrm{M})

so every SPL solution, at every age, is a Pareto-optimal point of
:math:`\min (F_1, F_2)`, and the age is implicit: it is the slope of the front. The
regularizers of this form are the hard one (:math:`g(v) = -v`), the linear one
(:math:`g(v) = v^2/2 - v`) and the polynomial soft weighting of Gong et al. (the paper's
ref. [19]), :math:`g(v) = v^t / t - v` with order :math:`t > 1`, whose weights are
:math:`v^*(\ell, \lambda) = (1 - \ell/\lambda)_+^{1/(t-1)}`; the paper uses it, with
:math:`t = 1.2` and :math:`t = 1.35`, in place of the mixture regularizer (whose age does not
enter linearly) in Tables 3 and 6.

**Encoding (our choice; the paper does not give one).** The decision variables are the model
parameters :math:`w` (and the logistic intercept) plus one *pace gene*
:math:`\tau \in [\lambda_{\min}, \lambda_{\max}]` that encodes the sample weights by the
regularizer's own rule, :math:`v = v^*(\ell(w), \tau)`. Every SPL solution at an age
:math:`\lambda` in the interval is such a pair (its weights are :math:`v^*(\ell(w),
\lambda)`), so the supported part of the Pareto front of (M) is reachable, while the search
space has :math:`d + 2` dimensions instead of :math:`d + n`. An individual costs one
evaluation of the losses (no weighted fit). NSGA-III (pymoo) evolves the population from
uniform random individuals in a box of ``bound`` times the largest coefficient of the
unweighted fit, one of them that fit itself (the start of GAGA and ACS too); the model of
the final non-dominated set with the best validation score is selected, as GAGA and ACS
select their age.

:func:`mospl_fit` fits one data set and :func:`mospl_objectives` evaluates (M) at one
model; :func:`protocol_split`, :func:`mospl_run` and :func:`run_mospl_protocol` run it on the
splits of :mod:`~pathlib_core.gaga.protocol` next to its three methods, and
:func:`mospl_paired` compares them run by run.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import numpy as np

from .. import datasets
from ..core.fit_result import FitResult
from ..core.threads import single_blas_thread
from ..core.validation import as_matrix, check_choice, positive_int, positive_scalar
from .checks import check_age_range
from .linear_models import _logistic_parts, _validate, weighted_fit

__all__ = ["MOSPL_REGULARIZERS", "MIXTURE_ORDER", "MOSPLResult", "mospl_fit",
           "mospl_objectives", "non_dominated", "protocol_split", "mospl_paired", "mospl_run",
           "run_mospl_protocol"]

#: SP-regularizers whose age enters linearly, ``f(v, lambda) = lambda g(v)`` (MOSPL's split).
MOSPL_REGULARIZERS = ("hard", "linear", "polynomial")

#: The polynomial order MOSPL uses where the paper's tables use the mixture regularizer
#: (Appendix D.2: "fixed at 1.2 and 1.35, respectively"; we read it as Table 3, the Lasso,
#: and Table 6, logistic regression).
MIXTURE_ORDER = {"lasso": 1.2, "logistic": 1.35}


@dataclass(repr=False)
class MOSPLResult(FitResult):
    """Result of :func:`mospl_fit`: the final non-dominated set and the selected model.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The selected model's weights (best validation score in the Pareto set).
    intercept : float
        Its intercept (always 0 for the Lasso).
    age : float
        Its pace gene :math:`\\tau` (the age whose weights it carries).
    weights : ndarray of shape (n,)
        Its sample weights :math:`v^*(\\ell(w), \\tau)`.
    objective : float
        Its :math:`F_1` (the weighted loss plus the model's regularizer).
    selected : int
        Its row in the Pareto arrays.
    pareto_coef : ndarray of shape (k, d)
    pareto_intercept : ndarray of shape (k,)
    pareto_age : ndarray of shape (k,)
        The non-dominated individuals of the last generation, sorted by pace gene.
    pareto_F : ndarray of shape (k, 2)
        Their objectives :math:`(F_1, F_2)`.
    val_score : ndarray of shape (k,)
        Their validation scores (normalized squared error for the Lasso, lower is better;
        accuracy for logistic regression, higher is better).
    n_iter : int
        Generations run.
    n_eval : int
        Individuals evaluated.
    info : dict
        ``pop_size``, ``n_gen``, ``bound`` (the box half-width), ``seconds``, ``message``.
    """

    coef: np.ndarray
    intercept: float
    age: float
    weights: np.ndarray
    objective: float
    selected: int
    pareto_coef: np.ndarray
    pareto_intercept: np.ndarray
    pareto_age: np.ndarray
    pareto_F: np.ndarray
    val_score: np.ndarray
    n_iter: int
    n_eval: int
    info: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``"converged"``: the generation budget, MOSPL's stopping rule, was used up."""
        return "converged"


def _check_order(regularizer, order):
    """The polynomial order ``t > 1`` (``None`` for the other regularizers)."""
    if regularizer != "polynomial":
        return None
    if order is None:
        raise ValueError("order must be given (> 1) with the polynomial regularizer")
    order = positive_scalar(order, "order")
    if order <= 1.0:
        raise ValueError(f"order must be > 1; got {order}")
    return order


def _g(v, regularizer, order):
    """``g(v)`` of ``f(v, lambda) = lambda g(v)``, elementwise."""
    if regularizer == "hard":
        return -v
    if regularizer == "linear":
        return 0.5 * v * v - v
    return v ** order / order - v


def _weights(loss, age, regularizer, order):
    """``v*(l, age)`` row by row (``age`` of shape (m, 1))."""
    if regularizer == "hard":
        return (loss < age).astype(float)
    base = np.maximum(0.0, 1.0 - loss / age)
    return base if regularizer == "linear" else base ** (1.0 / (order - 1.0))


class _Objectives:
    """The two objectives (M) of a population ``(w, [b,] tau)``, vectorized."""

    def __init__(self, X, y, model, alpha, C, regularizer, order):
        self.X, self.y, self.model = X, y, model
        self.alpha, self.C = alpha, C
        self.regularizer, self.order = regularizer, order
        self.d = X.shape[1]

    def split(self, P):
        P = np.atleast_2d(P)
        W, tau = P[:, :self.d], P[:, -1:]
        b = P[:, self.d] if self.model == "logistic" else np.zeros(len(P))
        return W, b, tau

    def losses(self, W, b):
        U = W @ self.X.T + b[:, None]
        if self.model == "lasso":
            return (U - self.y) ** 2 / (2 * len(self.y))
        return self.C * _logistic_parts(-self.y * U)[0]

    def penalty(self, W):
        if self.model == "lasso":
            return self.alpha * np.abs(W).sum(axis=1)
        return 0.5 * (W * W).sum(axis=1)

    def __call__(self, P):
        W, b, tau = self.split(P)
        L = self.losses(W, b)
        V = _weights(L, tau, self.regularizer, self.order)
        f1 = self.penalty(W) + (V * L).sum(axis=1)
        f2 = _g(V, self.regularizer, self.order).sum(axis=1)
        return np.column_stack([f1, f2]), V


def non_dominated(F) -> np.ndarray:
    """Indices of the rows of ``F`` (objectives to minimize) that no other row dominates.

    A row ``a`` dominates ``b`` when ``a <= b`` in every objective and ``a < b`` in one.
    Duplicated rows are kept once (the first).

    Parameters
    ----------
    F : array_like of shape (m, k)

    Returns
    -------
    ndarray of int
        Sorted row indices.
    """
    F = as_matrix(F, "F")
    _, first = np.unique(F, axis=0, return_index=True)
    keep = []
    for i in np.sort(first):
        le = np.all(F <= F[i], axis=1)
        lt = np.any(F < F[i], axis=1)
        if not np.any(le & lt):
            keep.append(i)
    return np.array(keep, dtype=int)


def _score(model, pred, y) -> float:
    if model == "lasso":
        return float(np.mean((pred - y) ** 2) / np.var(y))
    return float(np.mean(np.where(pred >= 0, 1.0, -1.0) == y))


def _seed(random_state) -> int:
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2 ** 31 - 1))
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state,
                                                                      (int, np.integer)):
        raise ValueError("random_state must be a non-negative int or a numpy Generator; got "
                         f"{random_state!r}")
    if random_state < 0:
        raise ValueError(f"random_state must be a non-negative int; got {random_state}")
    return int(random_state)


@single_blas_thread
def mospl_fit(X, y, X_val, y_val, *, model: str, regularizer: str = "linear", order=None,
              alpha=None, C=None, age_min: float = 0.1, age_max: float = 20.0,
              pop_size: int = 150, n_gen: int = 800, bound: float = 3.0,
              random_state=0) -> MOSPLResult:
    r"""Multi-objective self-paced learning (MOSPL) by NSGA-III, the model chosen on
    validation data.

    Minimizes the two objectives (M) of the module docstring,

    .. math::

        \min_{w,\, \tau} \Bigl( R(w) + \sum_{i=1}^n v_i \ell_i(w),\;
        \sum_{i=1}^n g(v_i) \Bigr), \qquad v_i = v^*(\ell_i(w), \tau),
        \quad \tau \in [\lambda_{\min}, \lambda_{\max}],

    whose weighted sums :math:`F_1 + \lambda F_2` are the SPL objective (2) of Qu et al.
    at every age :math:`\lambda` (MOSPL, Li et al. 2016; NSGA-III with :math:`N_p = 150`,
    :math:`Gen = 800` in Appendix D.2 of Qu et al.), with the Lasso (eq. 10) or logistic
    regression (eq. 24). Returns the last generation's non-dominated set and its model with
    the best score on ``(X_val, y_val)`` (ties: the smallest pace gene).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training data.
    y : array_like of shape (n,)
        Responses (Lasso) or labels in {-1, +1} (logistic regression).
    X_val : array_like of shape (m, d)
        Validation data for the selection.
    y_val : array_like of shape (m,)
    model : {"lasso", "logistic"}
    regularizer : {"hard", "linear", "polynomial"}, default "linear"
        SP-regularizer :math:`f(v, \lambda) = \lambda g(v)`.
    order : float > 1, optional
        Order :math:`t` of the polynomial regularizer (required for it, ignored otherwise).
    alpha : float > 0, optional
        Lasso penalty (required for the Lasso).
    C : float > 0, optional
        Logistic loss weight (default 1).
    age_min, age_max : float, default 0.1 and 20.0
        Range of the pace gene (the age interval of GAGA and ACS).
    pop_size : int >= 4, default 150
        Population size :math:`N_p` (one NSGA-III reference direction per individual).
    n_gen : int >= 1, default 800
        Generations :math:`Gen`.
    bound : float > 0, default 3.0
        The box of the model parameters is :math:`[-B, B]` with ``B = bound`` times the
        largest absolute parameter of the unweighted fit (``bound`` itself if that is 0).
    random_state : int >= 0 or numpy.random.Generator, default 0
        Seeds the initial population and NSGA-III (pymoo's global generators are restored
        afterwards).

    Returns
    -------
    MOSPLResult

    Raises
    ------
    ValueError
        Bad input, naming the argument: shapes, labels, ``model``, ``regularizer`` (the
        mixture regularizer is not of the form :math:`\lambda g(v)`), ``order``, ``alpha``,
        ``C``, the age range, ``pop_size``, ``n_gen``, ``bound``, ``random_state``.
    """
    check_choice(regularizer, "regularizer", MOSPL_REGULARIZERS)
    order = _check_order(regularizer, order)
    X, y, m, _ = _validate(X, y, model, "linear", alpha, C, None)
    X_val, y_val, _, _ = _validate(X_val, y_val, model, "linear", alpha, C, None)
    if X_val.shape[1] != X.shape[1]:
        raise ValueError(f"X_val must have {X.shape[1]} columns like X; got {X_val.shape[1]}")
    age_min, age_max = check_age_range(age_min, age_max)
    pop_size = positive_int(pop_size, "pop_size", minimum=4)
    n_gen = positive_int(n_gen, "n_gen")
    bound = positive_scalar(bound, "bound")
    seed = _seed(random_state)
    C = None if model == "lasso" else m.C

    t0 = time.perf_counter()
    start = weighted_fit(X, y, np.ones(len(y)), model=model, alpha=alpha, C=C)
    theta0 = start.coef if model == "lasso" else np.r_[start.coef, start.intercept]
    B = bound * float(np.max(np.abs(theta0))) if np.any(theta0) else bound
    obj = _Objectives(X, y, model, alpha, C, regularizer, order)
    p = len(theta0)
    xl = np.r_[np.full(p, -B), age_min]
    xu = np.r_[np.full(p, B), age_max]
    rng = np.random.default_rng(seed)
    init = rng.uniform(xl, xu, size=(pop_size, p + 1))
    init[0] = np.r_[theta0, age_max]   # the unweighted fit, where GAGA and ACS start
    P = _nsga3(obj, init, xl, xu, pop_size, n_gen, seed)

    F, V = obj(P)
    keep = non_dominated(F)
    P, F, V = P[keep], F[keep], V[keep]
    order_ = np.argsort(P[:, -1], kind="stable")
    P, F, V = P[order_], F[order_], V[order_]
    W, b, tau = obj.split(P)
    val = np.array([_score(model, X_val @ w + bb, y_val) for w, bb in zip(W, b, strict=True)])
    k = int(np.argmin(val) if model == "lasso" else np.argmax(val))
    seconds = time.perf_counter() - t0
    return MOSPLResult(
        coef=W[k].copy(), intercept=float(b[k]), age=float(tau[k, 0]), weights=V[k].copy(),
        objective=float(F[k, 0]), selected=k, pareto_coef=W.copy(), pareto_intercept=b.copy(),
        pareto_age=tau[:, 0].copy(), pareto_F=F, val_score=val, n_iter=n_gen,
        n_eval=pop_size * n_gen,
        info=dict(pop_size=pop_size, n_gen=n_gen, bound=B, seconds=seconds,
                  message=f"NSGA-III ran its budget of {n_gen} generations of {pop_size} "
                          "individuals (no optimality certificate)."))


def _nsga3(obj, init, xl, xu, pop_size, n_gen, seed):
    """NSGA-III (pymoo, its default operators) from ``init``; the last population's
    decision vectors. pymoo seeds the global generators: their states are restored."""
    from pymoo.algorithms.moo.nsga3 import NSGA3
    from pymoo.core.problem import Problem
    from pymoo.optimize import minimize
    from pymoo.util.ref_dirs import get_reference_directions

    class _Problem(Problem):
        def __init__(self):
            super().__init__(n_var=len(xl), n_obj=2, xl=xl, xu=xu)

        def _evaluate(self, x, out, *args, **kwargs):
            out["F"] = obj(x)[0]

    ref_dirs = get_reference_directions("das-dennis", 2, n_partitions=pop_size - 1)
    # pymoo draws from the legacy global generators: keep the caller's states
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002
    try:
        res = minimize(_Problem(), NSGA3(ref_dirs, pop_size=pop_size, sampling=init),
                       ("n_gen", n_gen), seed=seed, verbose=False)
    finally:
        np.random.set_state(np_state)  # noqa: NPY002
        random.setstate(py_state)
    return np.atleast_2d(res.pop.get("X"))


def protocol_split(e: dict, run: int, seed: int) -> dict:
    """The data of run ``run`` of experiment ``e`` exactly as
    :func:`~pathlib_core.gaga.protocol.one_run` builds them (split and noise seeded by
    ``seed + run``): ``X_fit``, ``y_fit`` (corrupted responses), ``X_val``, ``y_val``,
    ``X_test``, ``y_test`` (clean).

    Parameters
    ----------
    e : dict
        A :func:`~pathlib_core.gaga.protocol.experiment`.
    run, seed : int

    Returns
    -------
    dict of ndarray
    """
    from . import protocol

    X, y = protocol.load_data(e, run, seed)
    fit, val, te = protocol.split(len(y), run, seed)
    if e["model"] == "lasso":
        y_fit, _ = datasets.add_response_noise(y[fit], rate=e["noise"], random_state=seed + run,
                                               scale=2.0)
    else:
        y_fit, _ = datasets.flip_labels(y[fit], rate=e["noise"], random_state=seed + run)
    return dict(X_fit=X[fit], y_fit=y_fit, X_val=X[val], y_val=y[val], X_test=X[te],
                y_test=y[te])


def mospl_objectives(X, y, coef, intercept, age, *, model: str, regularizer: str = "linear",
                     order=None, alpha=None, C=None) -> np.ndarray:
    r"""MOSPL's objectives :math:`(F_1, F_2)` of (M) at one model and pace gene.

    .. math::

        F_1 = R(w) + \sum_i v_i \ell_i(w), \qquad F_2 = \sum_i g(v_i), \qquad
        v_i = v^*(\ell_i(w), \tau),

    e.g. to place an ACS or GAGA solution at age :math:`\tau` in MOSPL's objective space.

    Parameters
    ----------
    X, y : array_like
        Data as in :func:`mospl_fit`.
    coef : array_like of shape (d,)
    intercept : float
        Ignored by the Lasso.
    age : float > 0
        The pace gene :math:`\tau`.
    model, regularizer, order, alpha, C
        As in :func:`mospl_fit`.

    Returns
    -------
    ndarray of shape (2,)
    """
    check_choice(regularizer, "regularizer", MOSPL_REGULARIZERS)
    order = _check_order(regularizer, order)
    X, y, m, _ = _validate(X, y, model, "linear", alpha, C, None)
    age = positive_scalar(age, "age")
    coef = np.asarray(coef, dtype=float).reshape(-1)
    if coef.shape != (X.shape[1],) or not np.all(np.isfinite(coef)):
        raise ValueError(f"coef must hold {X.shape[1]} finite values")
    obj = _Objectives(X, y, model, alpha, None if model == "lasso" else m.C, regularizer,
                      order)
    row = np.r_[coef, float(intercept), age] if model == "logistic" else np.r_[coef, age]
    return obj(row)[0][0]


def mospl_paired(e: dict, rows, method: str = "gaga", *, z: float = 2.0) -> dict:
    r"""``method`` against MOSPL run by run: the mean gain and its standard error.

    The gain of run :math:`k` is :math:`g_k = s_k^{\mathrm{MOSPL}} - s_k^{\mathrm{method}}`
    for an error (the Lasso) and :math:`s_k^{\mathrm{method}} - s_k^{\mathrm{MOSPL}}` for
    an accuracy (positive: ``method`` better on that split); with :math:`R` runs,
    :math:`\bar g` and :math:`\mathrm{se} = \mathrm{sd}(g) / \sqrt R` (``ddof=1``). The
    outcome is ``"ahead"`` if :math:`\bar g > z\,\mathrm{se}`, ``"behind"`` if
    :math:`\bar g < -z\,\mathrm{se}`, else ``"tie"``: the paired rule the reproduction
    chapter applies to GAGA and its other baselines.

    Parameters
    ----------
    e : dict
        The experiment (its ``key`` and ``model``).
    rows : list of dict
        :func:`run_mospl_protocol` rows; those of ``e`` are used (at least two).
    method : {"gaga", "acs", "original"}
    z : float > 0

    Returns
    -------
    dict
        ``gain``, ``se``, ``runs``, ``wins``, ``losses``, ``outcome``.
    """
    check_choice(method, "method", ("gaga", "acs", "original"))
    z = positive_scalar(z, "z")
    rs = [r for r in rows if r["key"] == e["key"]]
    if len(rs) < 2:
        raise ValueError(f"rows must hold at least two runs of {e['key']!r}; got {len(rs)}")
    sgn = -1.0 if e["model"] == "lasso" else 1.0
    g = sgn * (np.array([r[method] for r in rs]) - np.array([r["mospl"] for r in rs]))
    gain, se = float(g.mean()), float(g.std(ddof=1) / np.sqrt(len(g)))
    outcome = "ahead" if gain > z * se else ("behind" if gain < -z * se else "tie")
    return dict(gain=gain, se=se, runs=len(g), wins=int(np.sum(g > 0)),
                losses=int(np.sum(g < 0)), outcome=outcome)


def mospl_run(e: dict, run: int, seed: int, *, pop_size: int, n_gen: int,
              keep_result: bool = False) -> dict:
    """MOSPL on run ``run`` of the protocol experiment ``e``: the same data, split and noise
    as :func:`~pathlib_core.gaga.protocol.one_run`, the pace gene on the experiment's age
    interval, the linear regularizer, or the polynomial one of order :data:`MIXTURE_ORDER`
    where the experiment uses the mixture regularizer (Appendix D.2).

    Returns
    -------
    dict
        ``mospl`` (test score), ``age_mospl``, ``t_mospl`` (seconds), ``n_pareto``,
        ``n_eval`` and ``original_check`` (the unweighted fit's test score, equal to the
        protocol's ``original`` up to the solvers' tolerances); with ``keep_result`` also
        ``result``, the :class:`MOSPLResult`.
    """
    from . import protocol

    if e["model"] not in ("lasso", "logistic"):
        raise ValueError(f"e['model'] must be 'lasso' or 'logistic'; got {e['model']!r}")
    d = protocol_split(e, run, seed)
    reg = "linear" if e["reg"] == "linear" else "polynomial"
    order = MIXTURE_ORDER[e["model"]] if reg == "polynomial" else None
    kw = (dict(alpha=e["params"]["alpha"]) if e["model"] == "lasso"
          else dict(C=e["params"]["C"]))
    res = mospl_fit(d["X_fit"], d["y_fit"], d["X_val"], d["y_val"], model=e["model"],
                    regularizer=reg, order=order, age_min=e["age_min"],
                    age_max=protocol.AGE_MAX, pop_size=pop_size, n_gen=n_gen,
                    random_state=seed + run, **kw)
    start = weighted_fit(d["X_fit"], d["y_fit"], np.ones(len(d["y_fit"])), model=e["model"],
                         **kw)
    Xt, yt = d["X_test"], d["y_test"]
    out = dict(key=e["key"], run=run, mospl=protocol.score(e, Xt @ res.coef + res.intercept, yt),
               age_mospl=res.age, t_mospl=res.info["seconds"], n_pareto=len(res.pareto_age),
               n_eval=res.n_eval,
               original_check=protocol.score(e, Xt @ start.coef + start.intercept, yt))
    if keep_result:
        out["result"] = res
    return out


def run_mospl_protocol(experiments, n_runs: int, seed: int, *, pop_size: int, n_gen: int,
                       n_jobs: int = 1, checkpoint=None, context: dict | None = None
                       ) -> list[dict]:
    """:func:`~pathlib_core.gaga.protocol.one_run` and :func:`mospl_run` on every run of
    every experiment (Lasso and logistic regression), one row per run with both results.

    Parameters
    ----------
    experiments : list of dict
        :func:`~pathlib_core.gaga.protocol.experiment` dicts of the Lasso or logistic
        regression.
    n_runs : int
        Runs (random splits) per experiment, seeded as in the protocol (``seed + run``).
    seed : int
        Experiment seed.
    pop_size, n_gen : int
        MOSPL's budget.
    n_jobs : int
        Worker processes (:func:`~pathlib_core.experiments.runner.run_grid`).
    checkpoint : path-like, optional
        Folder keeping every finished run.
    context : dict, optional
        Further values the runs depend on, part of the checkpoint identity.

    Returns
    -------
    list of dict
        The protocol's row (its validation curves as arrays) with the keys of
        :func:`mospl_run` added, in the order experiment, run.
    """
    from ..experiments.runner import run_grid
    from . import protocol

    if not isinstance(n_runs, int) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    pop_size = positive_int(pop_size, "pop_size", minimum=4)
    n_gen = positive_int(n_gen, "n_gen")
    by_key = {e["key"]: e for e in experiments}
    if len(by_key) != len(experiments):
        raise ValueError("experiments must have distinct keys")
    for e in experiments:
        if e["model"] not in ("lasso", "logistic"):
            raise ValueError(f"experiments must be Lasso or logistic ones; got {e['key']!r}")
    settings = [dict(experiment=k, repeat=r) for k in by_key for r in range(n_runs)]
    base_seed = int(seed)

    def task(experiment, repeat, seed):  # the runner's per-task seed is not used
        e = by_key[experiment]
        row = protocol.one_run(e, repeat, base_seed)
        row.update(mospl_run(e, repeat, base_seed, pop_size=pop_size, n_gen=n_gen))
        return row

    done = run_grid(task, settings, seed=base_seed, n_jobs=n_jobs, progress=False,
                    checkpoint=checkpoint,
                    checkpoint_context=dict(context or {}, experiments=experiments,
                                            pop_size=pop_size, n_gen=n_gen))
    rows = []
    for out in done:
        row = dict(out)
        row["curve"] = tuple(np.asarray(c, dtype=float) for c in row["curve"])
        rows.append(row)
    return rows
