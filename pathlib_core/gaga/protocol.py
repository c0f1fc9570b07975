"""The reproduction protocol of the paper's experiments (Section 5 and Appendix D.2 of Qu, Li,
Zhao and Gu, NeurIPS 2022): data, splits and noise, the three methods, and the tables.

In each run the data are split 3:1 into training and test sets at random; a fraction of the
*training* responses is corrupted (regression: additive Gaussian noise with twice the
response's standard deviation; classification: label flips), the test set stays clean, and a
quarter of the training set is held out for validation. Three models are compared on the
test set:

- ``original``: the learner fitted to all (noisy) training samples, no self-paced weights
  (scikit-learn's ``Lasso``, ``LogisticRegression`` or ``SVC`` at tight tolerance);
- ``acs``: warm-started ACS on the paper's grid (step 0.5 up to age 20), the age chosen by
  validation error;
- ``gaga``: the exact age-path over the same interval, the age chosen by validation error
  over every breakpoint and eight points inside every piece (:func:`candidate_ages`).

An experiment is a plain ``dict`` (:func:`experiment`); :func:`one_run` runs one split of
it, :func:`run_protocol` runs every split of every experiment through the experiment runner
(worker processes or a Dask cluster, with a checkpoint folder), :func:`summarize` computes
the tables' means and spreads, :func:`verdict` compares GAGA with the other two methods, and
:func:`timed` times both algorithms on one subsample. For Figure 4 (robustness to noise),
:func:`noise_experiments` repeats one experiment at several noise ratios,
:func:`paired_comparison` compares GAGA with another method run by run, and
:func:`robustness_verdict` judges the figure's claim at the highest noise ratio.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.svm import SVC

from .. import datasets
from ..core.exceptions import PathFollowingError, SolverError
from ..core.kernels import kernel_from_name
from .acs_baseline import acs_path, svm_acs_path
from .estimators import candidate_ages
from .exceptions import DegenerateStartError
from .linear_path import age_path

__all__ = ["ACS_STEP", "AGE_MAX", "MODES", "SUMMARY_KEYS", "experiment",
           "reproduction_experiments", "noise_experiments", "load_data", "split", "score",
           "learners", "acs_grid", "one_run", "run_protocol", "summarize", "verdict",
           "paired_comparison", "robustness_verdict", "timed"]

#: The ACS grid's step and the end of the age interval (Appendix D.2: [0.1, 20], step 0.5).
ACS_STEP = 0.5
AGE_MAX = 20.0
#: Build modes: ``"quick"`` subsamples every set; ``"full"`` uses the paper-scale sizes.
MODES = ("quick", "full")
#: The quantities :func:`summarize` averages over the runs.
SUMMARY_KEYS = ("original", "acs", "gaga", "restarts", "turning", "t_gaga", "t_acs")


def experiment(key, model, data, stands_for, *, mode="quick", noise=0.3, reg="linear",
               mixture=None, n=(300, 2000), age_min=None, **params) -> dict:
    """One row of Tables 2-3 / 5-6: a model, a data set, an SP-regularizer, a noise ratio.

    Parameters
    ----------
    key : str
        The row's name.
    model : {"lasso", "logistic", "svm"}
    data : str
        A data set of :mod:`pathlib_core.datasets`.
    stands_for : str
        The paper's data set it stands in for.
    mode : {"quick", "full"}
        Picks the sample size from ``n``.
    noise : float
        Share of corrupted training responses.
    reg : {"linear", "mixture"}
        SP-regularizer; ``mixture`` its parameter (the paper's gamma).
    n : (int or None, int or None)
        Sample size in quick and in full mode (``None``: every sample).
    age_min : float, optional
        Start of the age interval (default 0.1 for the Lasso, 1 otherwise).
    **params
        The model's parameters: ``alpha`` (Lasso), ``C`` (logistic, SVM) and
        ``kernel_gamma`` (SVM: the RBF width times the number of features).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if age_min is None:
        age_min = 0.1 if model == "lasso" else 1.0
    return dict(key=key, model=model, data=data, stands_for=stands_for, noise=noise, reg=reg,
                mixture=mixture, n=n[0] if mode == "quick" else n[1], age_min=age_min,
                params=params)


def reproduction_experiments(mode: str = "quick") -> list[dict]:
    """The twelve experiments of the reproduction chapter (offline stand-ins for the paper's
    data sets; see the chapter for each substitution).

    The kernel-SVM rows of Table 2 all use :math:`C = 1` and the Gaussian kernel of width
    :math:`1/d` on standardized features (``kernel_gamma=1``), 30% flipped labels and the
    linear SP-regularizer; breast cancer and hiva are subsampled to 160 points in quick mode
    and 400 in full mode, the digit sets (digits for mfeat-pixel, penbased for pendigits) to
    120 and 140 points, because their runs cost more than breast cancer's at the same size
    and the chapter's full run has a time budget (15 minutes).
    """
    def e(*args, **kw):
        return experiment(*args, mode=mode, **kw)

    return [
        # Lasso (Table 2 / 3): alpha = 0.01 on standardized features
        e("lasso diabetes", "lasso", "diabetes", "diabetes (Figure 2)", n=(300, None),
          alpha=0.01),
        e("lasso compactiv", "lasso", "compactiv", "ailerons, elevator", alpha=0.01),
        e("lasso diabetes, mixture", "lasso", "diabetes", "diabetes (Figure 2)",
          reg="mixture", mixture=0.5, n=(300, None), alpha=0.01),
        # logistic regression (Table 5 / 6): C = 1
        e("logistic breast cancer", "logistic", "breast_cancer", "control set",
          n=(300, None), C=1.0),
        e("logistic digits", "logistic", "digits", "mfeat-pixel", C=1.0),
        e("logistic magic", "logistic", "magic", "MagicTelescope", C=1.0),
        e("logistic penbased, 20%", "logistic", "penbased", "pendigits (20% noise)",
          noise=0.2, C=1.0),
        e("logistic breast cancer, mixture, 20%", "logistic", "breast_cancer",
          "control set", noise=0.2, reg="mixture", mixture=0.5, n=(300, None), C=1.0),
        # SVM with a Gaussian kernel (Table 2): C = 1, kernel width 1 / (number of features)
        e("svm breast cancer (rbf)", "svm", "breast_cancer", "control set",
          n=(160, 400), C=1.0, kernel_gamma=1.0),
        e("svm hiva (rbf)", "svm", "hiva", "hiva (Table 2)", n=(160, 400), C=1.0,
          kernel_gamma=1.0),
        e("svm digits (rbf)", "svm", "digits", "mfeat-pixel (Table 2)", n=(120, 140),
          C=1.0, kernel_gamma=1.0),
        e("svm penbased (rbf)", "svm", "penbased", "pendigits (Table 2)", n=(120, 140),
          C=1.0, kernel_gamma=1.0),
    ]


def noise_experiments(e: dict, ratios=(0.1, 0.2, 0.3)) -> list[dict]:
    """Copies of experiment ``e`` at several noise ratios (the paper's Figure 4), keyed
    ``"<key>, <ratio>% noise"``.

    Parameters
    ----------
    e : dict
        An :func:`experiment`.
    ratios : sequence of float
        Shares of corrupted training responses, each in [0, 1), distinct and increasing.

    Returns
    -------
    list of dict
        One experiment per ratio, otherwise identical to ``e``.
    """
    ratios = [float(r) for r in ratios]
    if not ratios or any(not 0.0 <= r < 1.0 for r in ratios):
        raise ValueError(f"ratios must be noise shares in [0, 1); got {ratios!r}")
    if np.any(np.diff(ratios) <= 0):
        raise ValueError(f"ratios must be distinct and increasing; got {ratios!r}")
    return [dict(e, key=f"{e['key']}, {100 * r:g}% noise", noise=r) for r in ratios]


def load_data(e: dict, run: int, seed: int):
    """The experiment's data, standardized, subsampled for ``run`` (``seed + run``):
    breast cancer's first ten features; the digit sets binary (digit < 5 against >= 5); the
    Lasso's response centred."""
    X, y = datasets.load(e["data"], standardize=True)
    if e["data"] == "breast_cancer":
        X = X[:, :10]
    if e["data"] in ("digits", "penbased"):
        y = np.where(y < 5, 1.0, -1.0)   # binary: digit < 5 against digit >= 5
    if e["model"] == "lasso":
        y = y - y.mean()
    idx = np.random.default_rng(seed + run).permutation(len(y))
    if e["n"]:
        idx = idx[:e["n"]]
    return X[idx], y[idx]


def split(n: int, run: int, seed: int):
    """Indices (fit, validation, test): a quarter of ``n`` for testing, a quarter of the
    rest for validation."""
    perm = np.random.default_rng(10_000 + seed + run).permutation(n)
    n_te = n // 4
    te, rest = perm[:n_te], perm[n_te:]
    n_val = len(rest) // 4
    return rest[n_val:], rest[:n_val], te   # fit, validation, test


def score(e: dict, pred, y) -> float:
    """Normalized test error (regression, lower is better) or accuracy (higher is better)."""
    if e["model"] == "lasso":
        return float(np.mean((pred - y) ** 2) / np.var(y))
    return float(np.mean(np.where(pred >= 0, 1.0, -1.0) == y))


def learners(e: dict, Xf, y_fit):
    """Keyword arguments of the SPL solvers, the original learner's decision function, and a
    map (coefficients, intercept) -> decision function."""
    p = e["params"]
    if e["model"] == "lasso":
        orig = Lasso(alpha=p["alpha"], fit_intercept=False, tol=1e-12, max_iter=100_000)
        orig.fit(Xf, y_fit)
        return dict(alpha=p["alpha"]), orig.predict, lambda c, b: (lambda Z: Z @ c + b)
    if e["model"] == "logistic":
        orig = LogisticRegression(C=p["C"], tol=1e-12, max_iter=10_000).fit(Xf, y_fit)
        return dict(C=p["C"]), orig.decision_function, lambda c, b: (lambda Z: Z @ c + b)
    width = p["kernel_gamma"] / Xf.shape[1]
    kern = kernel_from_name("rbf", gamma=width)
    orig = SVC(C=p["C"], kernel="rbf", gamma=width, tol=1e-10).fit(Xf, y_fit)
    return (dict(C=p["C"], kernel=kern), orig.decision_function,
            lambda dual, b: (lambda Z: kern(Z, Xf) @ dual + b))


def acs_grid(e: dict, Xf, y_fit, kw):
    """ACS on the step-0.5 grid: (ages, [(coefficients, intercept)], number not converged)."""
    if e["model"] == "svm":
        path = svm_acs_path(Xf, y_fit, regularizer=e["reg"], mixture=e["mixture"],
                            age_min=e["age_min"], age_max=AGE_MAX, age_step=ACS_STEP, **kw)
        grid = np.asarray(path.info["ages"])
        sols = [path.at(a) for a in grid]
        return grid, [(s.dual_coef, s.intercept) for s in sols], path.info["n_not_converged"]
    path = acs_path(Xf, y_fit, model=e["model"], regularizer=e["reg"], mixture=e["mixture"],
                    age_min=e["age_min"], age_max=AGE_MAX, age_step=ACS_STEP, max_iter=5000,
                    **kw)
    grid = np.asarray(path.info["ages"])
    sols = [path.at(a) for a in grid]
    return grid, [(s.coef, s.intercept) for s in sols], path.info["n_not_converged"]


def one_run(e: dict, run: int, seed: int) -> dict:
    """One split of experiment ``e``: the three methods' test scores, the selected ages, the
    path's critical points and residual, both timings, and the validation curves."""
    X, y = load_data(e, run, seed)
    fit, val, te = split(len(y), run, seed)
    if e["model"] == "lasso":
        y_fit, _ = datasets.add_response_noise(y[fit], rate=e["noise"], random_state=seed + run,
                                               scale=2.0)
    else:
        y_fit, _ = datasets.flip_labels(y[fit], rate=e["noise"], random_state=seed + run)
    Xf = X[fit]
    kw, f_orig, decision = learners(e, Xf, y_fit)
    sign = 1.0 if e["model"] == "lasso" else -1.0   # validation: minimize error / maximize acc.
    age_min = e["age_min"]
    while True:   # a degenerate start (one class only, or w = 0) is refused: double it
        t0 = time.perf_counter()
        try:
            path = age_path(Xf, y_fit, model=e["model"], regularizer=e["reg"],
                            mixture=e["mixture"], age_min=age_min, age_max=AGE_MAX, **kw)
            break
        except DegenerateStartError:
            if age_min >= 8.0:
                raise
            age_min *= 2
    t_gaga = time.perf_counter() - t0
    cand = candidate_ages(path, 8)   # the estimators' candidates: breakpoints + 8 per piece
    coef = (lambda s: s.dual_coef) if e["model"] == "svm" else (lambda s: s.coef)
    fs = [decision(coef(s), s.intercept) for s in map(path.at, cand)]
    val_g = np.array([sign * score(e, f(X[val]), y[val]) for f in fs])
    t0 = time.perf_counter()
    grid, acs_sols, acs_nc = acs_grid(dict(e, age_min=age_min), Xf, y_fit, kw)
    t_acs = time.perf_counter() - t0
    fa = [decision(c, b) for c, b in acs_sols]
    val_a = np.array([sign * score(e, f(X[val]), y[val]) for f in fa])
    ig, ia = int(np.argmin(val_g)), int(np.argmin(val_a))
    return dict(
        key=e["key"], model=e["model"], run=run, n_fit=len(fit),
        original=score(e, f_orig(X[te]), y[te]),
        acs=score(e, fa[ia](X[te]), y[te]), gaga=score(e, fs[ig](X[te]), y[te]),
        age_acs=float(grid[ia]), age_gaga=float(cand[ig]), age_min=age_min,
        t_gaga=t_gaga, t_acs=t_acs, acs_not_converged=acs_nc,
        turning=sum(ev.kind == "turning" for ev in path.events),
        jump=sum(ev.kind == "jump" for ev in path.events),
        restarts=path.info["n_restarts"], max_res=float(np.nanmax(path.kkt_residuals())),
        curve=(cand, sign * val_g, grid, sign * val_a),
    )


def run_protocol(experiments, n_runs: int, seed: int, *, n_jobs: int = 1, checkpoint=None,
                 context: dict | None = None, on_error: str = "raise") -> list[dict]:
    """:func:`one_run` for every run of every experiment, in the order experiment, run.

    Each run times GAGA and ACS one after the other in the same process, so the two times of
    a run share the machine's load whether the runs go one by one or side by side.

    Parameters
    ----------
    experiments : list of dict
        :func:`experiment` dicts, e.g. :func:`reproduction_experiments`'s.
    n_runs : int
        Runs (random splits) per experiment.
    seed : int
        Experiment seed; run ``k`` of an experiment uses splits and noise seeded by
        ``seed + k`` (the per-task seeds the runner derives are not used).
    n_jobs : int
        Worker processes (:func:`~pathlib_core.experiments.runner.run_grid`, which also sends
        the runs to a Dask cluster when ``DASK_SCHEDULER`` is set).
    checkpoint : path-like, optional
        Folder keeping every finished run, so that an interrupted protocol resumes.
    context : dict, optional
        Further values the runs depend on (e.g. the mode), part of the checkpoint identity.
    on_error : {"raise", "record"}
        What a run whose exact path or inner solver gives up does (a
        :class:`~pathlib_core.core.exceptions.PathFollowingError` or
        :class:`~pathlib_core.core.exceptions.SolverError`): stop the protocol, or come back
        as a row holding only ``key``, ``run`` and ``failed`` (the error's message), so that
        the caller can count and report it. Other errors always propagate.

    Returns
    -------
    list of dict
        :func:`one_run`'s rows, the validation curves as arrays.
    """
    from ..experiments.runner import run_grid

    if not isinstance(n_runs, int) or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record'; got {on_error!r}")
    by_key = {e["key"]: e for e in experiments}
    if len(by_key) != len(experiments):
        raise ValueError("experiments must have distinct keys")
    settings = [dict(experiment=k, repeat=r) for k in by_key for r in range(n_runs)]

    base_seed = int(seed)

    def task(experiment, repeat, seed):  # the runner's per-task seed is not used
        try:
            return {"row": one_run(by_key[experiment], repeat, base_seed)}
        except (PathFollowingError, SolverError) as err:
            if on_error == "raise":
                raise
            return {"row": dict(key=experiment, run=repeat,
                                failed=f"{type(err).__name__}: {err}")}

    done = run_grid(task, settings, seed=base_seed, n_jobs=n_jobs, progress=False,
                    checkpoint=checkpoint,
                    checkpoint_context=dict(context or {}, experiments=experiments))
    rows = []
    for out in done:
        row = dict(out["row"])
        if "curve" in row:
            row["curve"] = tuple(np.asarray(c, dtype=float) for c in row["curve"])
        rows.append(row)
    return rows


def summarize(experiments, rows):
    """Mean and standard deviation over the runs of :data:`SUMMARY_KEYS` per experiment.

    Returns
    -------
    table : dict
        ``table[key][quantity] = (mean, sd)``.
    table_rows : list of dict
        One tidy row per experiment (``<quantity>_mean``, ``<quantity>_sd``, the setting).
    best : dict
        The method with the best mean test score per experiment.
    """
    table, table_rows, best = {}, [], {}
    for e in experiments:
        rs = [r for r in rows if r["key"] == e["key"]]
        s = {k: (float(np.mean([r[k] for r in rs])), float(np.std([r[k] for r in rs])))
             for k in SUMMARY_KEYS}
        table[e["key"]] = s
        best[e["key"]] = (min if e["model"] == "lasso" else max)(
            ("original", "acs", "gaga"), key=lambda k, s=s: s[k][0])
        table_rows.append(dict(experiment=e["key"], stands_for=e["stands_for"],
                               model=e["model"], regularizer=e["reg"], noise=e["noise"],
                               n_fit=rs[0]["n_fit"], runs=len(rs),
                               **{f"{k}_mean": s[k][0] for k in SUMMARY_KEYS},
                               **{f"{k}_sd": s[k][1] for k in SUMMARY_KEYS}))
    return table, table_rows, best


def verdict(e: dict, table: dict) -> tuple[str, str]:
    """``("matches", ...)`` only if GAGA's mean beats both the original learner and ACS by
    more than the run-to-run spread; otherwise ``("differs", what we saw)``."""
    s = table[e["key"]]
    sgn = -1 if e["model"] == "lasso" else 1
    margins = [sgn * (s["gaga"][0] - s[k][0]) for k in ("original", "acs")]
    spread = max(s["gaga"][1], s["acs"][1], s["original"][1])
    if min(margins) > spread:
        return "matches", "GAGA ahead of both by more than the spread"
    if min(margins) >= -spread:
        return "differs", "within the spread (no clear winner)"
    return "differs", "GAGA behind original or ACS by more than the spread"


def paired_comparison(e: dict, rows, baseline: str, *, z: float = 2.0) -> dict:
    r"""GAGA against ``baseline`` run by run: the mean gain and its standard error over runs.

    The gain of run :math:`k` is :math:`g_k = s_k^{\mathrm{base}} - s_k^{\mathrm{GAGA}}` for an
    error (the Lasso) and :math:`g_k = s_k^{\mathrm{GAGA}} - s_k^{\mathrm{base}}` for an accuracy,
    so that a positive gain means GAGA is better on that split. With :math:`R` runs,

    .. math:: \bar g = \frac1R \sum_k g_k, \qquad
              \mathrm{se} = \frac{1}{\sqrt R}\Big(\frac{1}{R-1}\sum_k (g_k - \bar g)^2
              \Big)^{1/2},

    and the outcome is ``"ahead"`` if :math:`\bar g > z\,\mathrm{se}`, ``"behind"`` if
    :math:`\bar g < -z\,\mathrm{se}` and ``"tie"`` otherwise (:math:`\bar g / \mathrm{se}`
    is the paired t statistic). Both methods are scored on the same split, noise and test
    set in each run, so the split-to-split spread cancels from the difference.

    Parameters
    ----------
    e : dict
        The experiment (its ``key`` and ``model``).
    rows : list of dict
        :func:`one_run` rows; the finished runs of ``e`` are used (at least two; rows of
        failed runs, see :func:`run_protocol`'s ``on_error``, are left out and counted).
    baseline : {"original", "acs"}
    z : float
        Standard errors the mean gain must exceed.

    Returns
    -------
    dict
        ``gain`` (mean), ``se``, ``runs`` (finished), ``failed``, ``wins`` / ``losses``
        (runs with a positive / negative gain) and ``outcome``.
    """
    if baseline not in ("original", "acs"):
        raise ValueError(f"baseline must be 'original' or 'acs'; got {baseline!r}")
    if not np.isfinite(z) or z <= 0:
        raise ValueError(f"z must be a positive number; got {z!r}")
    rs = [r for r in rows if r["key"] == e["key"] and "failed" not in r]
    if len(rs) < 2:
        raise ValueError(f"rows must hold at least two finished runs of {e['key']!r}; "
                         f"got {len(rs)}")
    sgn = -1.0 if e["model"] == "lasso" else 1.0
    g = sgn * (np.array([r["gaga"] for r in rs]) - np.array([r[baseline] for r in rs]))
    gain, se = float(g.mean()), float(g.std(ddof=1) / np.sqrt(len(g)))
    outcome = "ahead" if gain > z * se else ("behind" if gain < -z * se else "tie")
    failed = sum(r["key"] == e["key"] and "failed" in r for r in rows)
    return dict(gain=gain, se=se, runs=len(g), failed=failed, wins=int(np.sum(g > 0)),
                losses=int(np.sum(g < 0)), outcome=outcome)


def robustness_verdict(experiments, rows, *, z: float = 2.0) -> tuple[str, dict]:
    """The verdict on Figure 4 ("GAGA is more robust at relatively high noise"), judged at
    the highest noise ratio of ``experiments`` by :func:`paired_comparison` with both
    baselines.

    ``"matches"`` if GAGA is ahead of both the original learner and ACS by more than ``z``
    standard errors of the per-run gains; ``"contradicted"`` if it is behind either of them
    by more than ``z`` standard errors; ``"differs"`` otherwise (no ordering beyond the
    spread of the runs). The band of ``2 z`` standard errors between the two keeps run-to-run
    noise from turning one verdict into the other.

    Parameters
    ----------
    experiments : list of dict
        :func:`noise_experiments` (one experiment at several noise ratios).
    rows : list of dict
        Their :func:`one_run` rows.
    z : float
        Standard errors of the margin.

    Returns
    -------
    verdict : str
    comparisons : dict
        ``comparisons[key][baseline]`` = :func:`paired_comparison` for every experiment.
    """
    if not experiments:
        raise ValueError("experiments must not be empty")
    comps = {e["key"]: {b: paired_comparison(e, rows, b, z=z) for b in ("original", "acs")}
             for e in experiments}
    top = max(experiments, key=lambda e: e["noise"])
    outcomes = [c["outcome"] for c in comps[top["key"]].values()]
    if all(o == "ahead" for o in outcomes):
        return "matches", comps
    if "behind" in outcomes:
        return "contradicted", comps
    return "differs", comps


def timed(e: dict, n: int, age_max: float, seed: int, run: int = 0):
    """(GAGA seconds, ACS seconds, breakpoints) on a fresh subsample of size ``n`` with 30%
    noise, over ``[e["age_min"], age_max]`` (ACS on the step-0.5 grid)."""
    e = dict(e, n=n)
    X, y = load_data(e, run, seed)
    if e["model"] == "lasso":
        y, _ = datasets.add_response_noise(y, rate=0.3, random_state=seed + run, scale=2.0)
    else:
        y, _ = datasets.flip_labels(y, rate=0.3, random_state=seed + run)
    kw = dict(alpha=e["params"]["alpha"]) if e["model"] == "lasso" else dict(C=e["params"]["C"])
    t0 = time.perf_counter()
    path = age_path(X, y, model=e["model"], regularizer=e["reg"], mixture=e["mixture"],
                    age_min=e["age_min"], age_max=age_max, **kw)
    t1 = time.perf_counter()
    acs_path(X, y, model=e["model"], regularizer=e["reg"], mixture=e["mixture"],
             age_min=e["age_min"], age_max=age_max, age_step=ACS_STEP, max_iter=5000, **kw)
    return t1 - t0, time.perf_counter() - t1, len(path.breakpoints)
