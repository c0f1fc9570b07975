r"""The protocol of Appendix D.6 (robust baselines, Tables 7-8) and D.7 (sensitivity
analysis, Tables 9-16) of Qu, Li, Zhao and Gu (NeurIPS 2022).

The splits and the noise are those of :mod:`~pathlib_core.gaga.protocol` (3:1 train/test
split, a quarter of the training set for validation, noise on the training responses only,
seeded by ``seed + run``). Two model classes, both with the linear SP-regularizer as in the
paper's appendix:

- regression: the self-paced Lasso (GAGA's exact age-path against ACS on the step-0.5
  grid, ages 0.1 to 20), its robust baselines the Huber Lasso, RLSSVM and Re-LSSVM (linear
  kernel);
- classification: the self-paced SVM with the *linear* kernel (the base model of D.7), ages
  1 to 20, its robust baselines the label-noise robust SVM, RLSSVM and Re-LSSVM (linear
  kernel).

A *configuration* (:func:`sensitivity_configs`) is one row of a table: a data set, a noise
level and the backbone parameter (``alpha`` for the Lasso, ``C`` for the SVM), with the
tables it belongs to. :func:`robust_run` runs one split of one configuration (GAGA, ACS,
the original learner and, for the configurations of Tables 7-8, every robust baseline with
its hyperparameters chosen by grid search on the validation split); :func:`run_sensitivity`
runs them all with joblib; :func:`summarize_sensitivity` gives means and spreads and
:func:`compare` sorts a pair of methods per configuration into ahead / within the spread /
behind.
"""

from __future__ import annotations

import itertools

import numpy as np
from sklearn.linear_model import Lasso
from sklearn.svm import SVC

from .. import datasets
from ..core.exceptions import SolverError
from . import protocol
from .acs_baseline import acs_path, svm_acs_path
from .estimators import candidate_ages
from .exceptions import DegenerateStartError
from .linear_path import age_path
from .robust_baselines import huber_lasso_fit, relssvm_fit, rlssvm_fit, robust_svm_fit

__all__ = ["sensitivity_configs", "robust_run", "run_sensitivity", "summarize_sensitivity",
           "compare", "BASELINES", "TABLES"]

#: Robust baselines per model class (Table 7: regression, Table 8: classification).
BASELINES = {"lasso": ("huber_lasso", "rlssvm", "relssvm"),
             "svm": ("robust_svm", "rlssvm", "relssvm")}
#: The paper's tables: (model, swept quantity, data set stand-in).
TABLES = {
    "9": ("lasso", "alpha", "compactiv"), "10": ("lasso", "alpha", "concrete"),
    "11": ("svm", "C", "digits"), "12": ("svm", "C", "penbased"),
    "13": ("lasso", "noise", "compactiv"), "14": ("lasso", "noise", "concrete"),
    "15": ("svm", "noise", "digits"), "16": ("svm", "noise", "penbased"),
}
_STANDS_FOR = {"compactiv": "ailerons", "concrete": "music", "digits": "mfeat-pixel",
               "penbased": "pendigits"}


def sensitivity_configs(mode: str = "quick") -> list[dict]:
    r"""The configurations of Tables 7-16 at the chosen scale.

    Each table sweeps one quantity around a base setting (noise 30%, Lasso
    :math:`\alpha = 0.01`, SVM :math:`C = 1`), as in Appendix D.7; the noise sweeps
    (Tables 13-16) also carry the robust baselines (Tables 7-8 use the same runs, as in the
    paper, where GAGA's numbers in Tables 7-8 are those of Tables 13-16). A configuration
    shared by two tables (the base setting) is run once.

    Parameters
    ----------
    mode : {"quick", "full"}
        ``quick``: Lasso on 200 points (3 runs), SVM on 120 (2 runs), two or three values
        per sweep; ``full``: Lasso on 400 points (10 runs), SVM on 150 (5 runs), four or
        five values per sweep (the exact SVM path costs seconds per run, which bounds the
        full mode's scale).

    Returns
    -------
    list of dict
        ``key``, ``model``, ``data``, ``stands_for``, ``n``, ``noise``, ``param`` (alpha or C),
        ``runs``, ``tables`` (the tables the row belongs to), ``baselines`` (bool).
    """
    if mode not in protocol.MODES:
        raise ValueError(f"mode must be one of {protocol.MODES}; got {mode!r}")
    quick = mode == "quick"
    n = {"lasso": 200 if quick else 400, "svm": 120 if quick else 150}
    runs = {"lasso": 3 if quick else 10, "svm": 2 if quick else 5}
    sweeps = {
        "alpha": (0.003, 0.01, 0.03) if quick else (0.001, 0.003, 0.01, 0.03, 0.1),
        "C": (0.2, 1.0) if quick else (0.2, 0.5, 1.0, 1.9),
        "lasso_noise": (0.1, 0.3, 0.5) if quick else (0.1, 0.2, 0.3, 0.4, 0.5),
        "svm_noise": (0.1, 0.3) if quick else (0.1, 0.2, 0.3, 0.4),
    }
    base = {"lasso": 0.01, "svm": 1.0}
    out: dict[tuple, dict] = {}

    def add(table, model, data, noise, param):
        k = (model, data, noise, param)
        if k not in out:
            name = "alpha" if model == "lasso" else "C"
            out[k] = dict(key=f"{data} noise {noise:g} {name} {param:g}", model=model,
                          data=data, stands_for=_STANDS_FOR[data], n=n[model], noise=noise,
                          param=param, runs=runs[model], tables=[], baselines=False)
        out[k]["tables"].append(table)
        if table in ("13", "14", "15", "16"):
            out[k]["baselines"] = True

    for table, (model, what, data) in TABLES.items():
        if what == "noise":
            for noise in sweeps[f"{model}_noise"]:
                add(table, model, data, noise, base[model])
        else:
            for p in sweeps[what]:
                add(table, model, data, 0.3, p)
    return list(out.values())


def _experiment(cfg: dict) -> dict:
    kw = {"alpha": cfg["param"]} if cfg["model"] == "lasso" else {"C": cfg["param"]}
    return protocol.experiment(cfg["key"], cfg["model"], cfg["data"], cfg["stands_for"],
                               noise=cfg["noise"], n=(cfg["n"], cfg["n"]), **kw)


def _grid_search(fit, grid, Xf, yf, Xv, yv, e):
    """The fit of ``grid`` with the best validation score (first one on ties); a setting
    whose fit is impossible (e.g. every point truncated) is skipped."""
    sign = 1.0 if e["model"] == "lasso" else -1.0
    best, best_val = None, np.inf
    for params in grid:
        try:
            res = fit(Xf, yf, **params)
        except SolverError:
            continue
        val = sign * protocol.score(e, res.decision_function(Xv), yv)
        if val < best_val - 1e-12:
            best, best_val = (res, params), val
    return best


def _baseline_grids(model: str, y_fit) -> dict:
    """Hyperparameter grids (the paper: "chosen from the best performance by grid search";
    its Table 7 lists the chosen values but not the grids). A grid first had three values
    per hyperparameter (four for the flip rate); it is extended by one step beyond an edge
    where the choices piled up there (an edge value chosen in more than half of the runs
    of the quick mode, seed 0): the Huber threshold up to 3 s, the RLSSVM truncation
    (regression) up to 4 s, the robust SVM's C down to 0.01 and the Re-LSSVM coverage
    (classification) down to 0.25."""
    if model == "lasso":
        s = 1.483 * float(np.median(np.abs(y_fit - np.median(y_fit))))
        s = s if s > 0 else 1.0
        return {
            "huber_lasso": [dict(alpha=a * s, delta=d * s)
                            for a, d in itertools.product((1e-3, 1e-2, 1e-1),
                                                          (0.1, 0.3, 1.0, 3.0))],
            "rlssvm": [dict(C=c, tau=t * s)
                       for c, t in itertools.product((0.01, 0.1, 1.0), (0.5, 1.0, 2.0, 4.0))],
            "relssvm": [dict(C=c, coverage=q)
                        for c, q in itertools.product((0.01, 0.1, 1.0), (0.5, 0.75, 0.9))],
        }
    return {
        "robust_svm": [dict(C=c, mu=m)
                       for c, m in itertools.product((0.01, 0.1, 1.0, 10.0),
                                                     (0.1, 0.2, 0.3, 0.4))],
        "rlssvm": [dict(C=c, tau=t)
                   for c, t in itertools.product((0.01, 0.1, 1.0), (1.0, 1.5, 1.9))],
        "relssvm": [dict(C=c, coverage=q)
                    for c, q in itertools.product((0.01, 0.1, 1.0), (0.25, 0.5, 0.75, 0.9))],
    }


_FITS = {"huber_lasso": lambda X, y, **p: huber_lasso_fit(X, y, tol=1e-8, **p),
         "rlssvm": rlssvm_fit, "relssvm": relssvm_fit, "robust_svm": robust_svm_fit}


def robust_run(cfg: dict, run: int, seed: int) -> dict:
    """One split of a configuration: test scores of GAGA, ACS and the original learner, and
    (``cfg["baselines"]``) of every robust baseline tuned on the validation split.

    Regression is scored by the normalized test error, classification by test accuracy
    (:func:`~pathlib_core.gaga.protocol.score`); the age of GAGA (every breakpoint and
    eight points per piece) and of ACS (step-0.5 grid) is chosen by validation score.

    Returns
    -------
    dict
        ``key``, ``run``, ``n_fit``, ``original``, ``acs``, ``gaga``, ``age_gaga``,
        ``age_acs``, ``age_min``, and per baseline its score and ``<name>_params``.
    """
    e = _experiment(cfg)
    X, y = protocol.load_data(e, run, seed)
    fit, val, te = protocol.split(len(y), run, seed)
    lasso = e["model"] == "lasso"
    if lasso:
        y_fit, _ = datasets.add_response_noise(y[fit], rate=e["noise"], random_state=seed + run,
                                               scale=2.0)
        kw = dict(alpha=cfg["param"])
        orig = Lasso(alpha=cfg["param"], fit_intercept=False, tol=1e-12, max_iter=100_000)
        f_orig = orig.fit(X[fit], y_fit).predict
    else:
        y_fit, _ = datasets.flip_labels(y[fit], rate=e["noise"], random_state=seed + run)
        kw = dict(C=cfg["param"], kernel="linear")
        f_orig = SVC(C=cfg["param"], kernel="linear", tol=1e-10).fit(
            X[fit], y_fit).decision_function
    Xf = X[fit]
    sign = 1.0 if lasso else -1.0
    age_min = e["age_min"]
    while True:   # a degenerate start is refused: double the first age (as the protocol)
        try:
            path = age_path(Xf, y_fit, model=e["model"], regularizer="linear",
                            age_min=age_min, age_max=protocol.AGE_MAX, **kw)
            break
        except DegenerateStartError:
            if age_min >= 8.0:
                raise
            age_min *= 2

    def decision(c, b):
        if lasso:
            return lambda Z: Z @ c + b
        return lambda Z: (Z @ Xf.T) @ c + b

    def coef(s):
        return s.coef if lasso else s.dual_coef

    cand = candidate_ages(path, 8)
    fs = [decision(coef(s), s.intercept) for s in map(path.at, cand)]
    ig = int(np.argmin([sign * protocol.score(e, f(X[val]), y[val]) for f in fs]))
    if lasso:
        apath = acs_path(Xf, y_fit, model="lasso", regularizer="linear", age_min=age_min,
                         age_max=protocol.AGE_MAX, age_step=protocol.ACS_STEP, max_iter=5000,
                         **kw)
        grid = np.asarray(apath.info["ages"])
        sols = [(s.coef, s.intercept) for s in map(apath.at, grid)]
    else:
        apath = svm_acs_path(Xf, y_fit, regularizer="linear", age_min=age_min,
                             age_max=protocol.AGE_MAX, age_step=protocol.ACS_STEP, **kw)
        grid = np.asarray(apath.info["ages"])
        sols = [(s.dual_coef, s.intercept) for s in map(apath.at, grid)]
    fa = [decision(c, b) for c, b in sols]
    ia = int(np.argmin([sign * protocol.score(e, f(X[val]), y[val]) for f in fa]))
    row = dict(key=cfg["key"], run=run, n_fit=len(fit),
               original=protocol.score(e, f_orig(X[te]), y[te]),
               acs=protocol.score(e, fa[ia](X[te]), y[te]),
               gaga=protocol.score(e, fs[ig](X[te]), y[te]),
               age_gaga=float(cand[ig]), age_acs=float(grid[ia]), age_min=age_min)
    if cfg["baselines"]:
        for name, grid_p in _baseline_grids(e["model"], y_fit).items():
            res, params = _grid_search(_FITS[name], grid_p, Xf, y_fit, X[val], y[val], e)
            row[name] = protocol.score(e, res.decision_function(X[te]), y[te])
            row[f"{name}_params"] = params
    return row


def run_sensitivity(configs, seed: int, *, n_jobs: int = 1) -> list[dict]:
    """:func:`robust_run` for runs ``0 .. cfg["runs"] - 1`` of every configuration (joblib
    worker processes when ``n_jobs != 1``), in the order configuration, run."""
    from joblib import Parallel, delayed

    for c in configs:
        if not isinstance(c.get("runs"), int) or c["runs"] < 1:
            raise ValueError(f"every configuration needs a positive integer 'runs'; got "
                             f"{c.get('runs')!r} for {c.get('key')!r}")
    tasks = [(c, r) for c in configs for r in range(c["runs"])]
    if n_jobs == 1:
        return [robust_run(c, r, int(seed)) for c, r in tasks]
    return Parallel(n_jobs=n_jobs)(delayed(robust_run)(c, r, int(seed)) for c, r in tasks)


def summarize_sensitivity(configs, rows) -> dict:
    """``table[key][method] = (mean, sd over runs)`` for every method present in the rows."""
    table = {}
    for c in configs:
        rs = [r for r in rows if r["key"] == c["key"]]
        methods = ["original", "acs", "gaga"] + ([*BASELINES[c["model"]]]
                                                 if c["baselines"] else [])
        table[c["key"]] = {m: (float(np.mean([r[m] for r in rs])),
                               float(np.std([r[m] for r in rs]))) for m in methods}
    return table


def compare(cfg: dict, table: dict, other: str) -> str:
    """``"ahead"``, ``"within"`` or ``"behind"``: GAGA's mean against ``other``'s, by more
    than the larger of the two spreads over the runs (lower error / higher accuracy is
    better)."""
    s = table[cfg["key"]]
    sgn = -1.0 if cfg["model"] == "lasso" else 1.0
    margin = sgn * (s["gaga"][0] - s[other][0])
    spread = max(s["gaga"][1], s[other][1])
    if margin > spread:
        return "ahead"
    if margin >= -spread:
        return "within"
    return "behind"
