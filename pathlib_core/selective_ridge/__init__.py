r"""Selective ridge regularization solved in the dual (many more features than objects).

The selective-ridge paper ({cite}`selectiveridge`, "the paper" below) fits a generalized linear
model :math:`z = a^\top x + b` with the criterion (its eq. (11))

.. math::

    J(a, b) = \gamma \sum_{i=1}^{n} r_\mu(a_i) + \sum_{j=1}^{N} q(y_j, a^\top x_j + b),
    \qquad
    r_\mu(a) = \begin{cases} 2\mu|a|, & |a| \le \mu \\ \mu^2 + a^2, & |a| > \mu\end{cases}
             = 2\mu|a| + \max(0, |a| - \mu)^2,

with the squared loss :math:`q(y, z) = (y - z)^2` (regression, eq. (7)) or the hinge loss
:math:`q(y, z) = \max(0, 1 - yz)` (SVM, eq. (8)).

The dual (eqs. (22), (26)) has one multiplier per object. In the paper's scaling
(:math:`a_i = s_i` for a strongly active feature) it reads

.. math::

    \min_{\lambda \in \mathbb{R}^N} W(\lambda) = \tfrac12 \sum_{i=1}^n \max(0, s_i^2 - \mu^2)
      + \sum_{j=1}^N \varphi(y_j, \lambda_j),
    \qquad s = X^\top \lambda, \quad \textstyle\sum_j \lambda_j = 0,

with :math:`\varphi(y, \lambda) = \tfrac{\gamma}{2}\lambda^2 - y\lambda` (Theorem 1, eq. (33))
or :math:`\varphi(y, \lambda) = -y\lambda` on :math:`0 \le y\lambda \le 1/(2\gamma)` (Theorem 2,
eq. (36)). Strong duality: :math:`\min J = -2\gamma \min W`.

The coefficients follow feature by feature from :math:`s = X^\top\lambda` (eq. (20)):
:math:`a_i = s_i` where :math:`|s_i| > \mu`, :math:`a_i = 0` where :math:`|s_i| < \mu`. **A
difference from the paper**: the penalty is linear on :math:`[0, \mu]`, so a feature can also
sit exactly at :math:`|s_i| = \mu` with :math:`0 \le \operatorname{sign}(s_i) a_i \le \mu`
(a lasso-like regime that eq. (20) leaves out; it occurs on sets of data of positive measure).
Our dual iteration therefore works with three feature sets -- ``P`` (:math:`|s_i| > \mu`),
``K`` (:math:`s_i = \pm\mu`, the coefficient is the multiplier of that equality) and ``Z`` --
and each inner problem is the paper's inner problem (34) / (37) plus at most ``N`` equality
rows :math:`x^{i\top}\lambda = \pm\mu`. All linear algebra is ``N x N`` (objects); the only
work in ``n`` is ``X_P X_P^T`` and ``X^T lambda``, both linear in ``n``.

When the set iteration does not settle (squared loss), an augmented Lagrangian search in the
``N`` multipliers (:mod:`pathlib_core.selective_ridge.alm`, after {cite}`li2018ssnal`) proposes the
feature sets and the set iteration re-solves exactly on them. If that fails, an exact homotopy
in ``mu`` takes over: for fixed sets the solution of the inner system is affine in ``mu``, so
it is followed from sets known to be optimal at a larger ``mu`` (a warm start, or the empty
model at ``mu_0``) down to the target, one set change per breakpoint
(:mod:`pathlib_core.selective_ridge.homotopy`).
For the hinge loss the dual is a linear program as long as no feature is strong, and a QP in
a split of ``s`` otherwise; fits start from the sets of these problems, found by constraint
generation over the features (:mod:`pathlib_core.selective_ridge.cuts`).

Modules:

- :mod:`~pathlib_core.selective_ridge.objectives` -- the penalty, the criterion (11), its dual,
  the duality gap and the KKT residuals
- :mod:`~pathlib_core.selective_ridge.empty_model` -- the empty model and ``mu_0`` (39)-(41)
- :mod:`~pathlib_core.selective_ridge.fit` -- :func:`selective_fit`, one certified fit
- :mod:`~pathlib_core.selective_ridge.inner` -- the inner problem on fixed feature sets
- :mod:`~pathlib_core.selective_ridge.set_iteration` -- the set iteration over those sets
- :mod:`~pathlib_core.selective_ridge.alm` -- the augmented-Lagrangian search for feature sets
- :mod:`~pathlib_core.selective_ridge.cuts` -- the hinge loss's working-set LP and split QP
- :mod:`~pathlib_core.selective_ridge.hinge_search` -- the hinge loss's search for the sets
- :mod:`~pathlib_core.selective_ridge.homotopy` -- the exact homotopy in ``mu``
- :mod:`~pathlib_core.selective_ridge.cvxpy_solves` -- the cvxpy primal (reference) and dual
  (rescue start)
- :mod:`~pathlib_core.selective_ridge.units` -- the solver's units and tolerances
- :mod:`~pathlib_core.selective_ridge.path` -- :func:`selectivity_path`, the path over ``mu``
- :mod:`~pathlib_core.selective_ridge.estimators` -- the scikit-learn estimators
- :mod:`~pathlib_core.selective_ridge.data` -- EEG-like synthetic data
- :mod:`~pathlib_core.selective_ridge.newton` -- the paper's own Newton iteration (27)-(32)
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["alm", "cuts", "cvxpy_solves", "data", "empty_model", "estimators", "fit",
                "hinge_search", "homotopy", "inner", "newton", "objectives", "path", "result",
                "set_iteration", "units"],
    submod_attrs={
        "objectives": ["selective_penalty", "primal_objective", "dual_objective",
                       "duality_gap", "kkt_residuals"],
        "empty_model": ["mu_0"],
        "result": ["SelectiveResult"],
        "fit": ["selective_fit"],
        "path": ["selectivity_path"],
        "data": ["eeg_like"],
        "estimators": ["SelectiveRidgeRegressor", "SelectiveRidgeClassifier"],
        "newton": ["paper_newton_iteration", "NewtonIterationResult"],
    },
)
