"""Parameter descriptions shared by several functions of the part, written once.

A docstring names a fragment as a line ``{name}`` (indented like a parameter entry);
:func:`fill_doc` replaces it by the text below, so the rendered docstrings are complete
numpydoc sections while the source says each thing in one place.
"""

from __future__ import annotations

__all__ = ["fill_doc"]


_FRAGMENTS = {
    # (first: it is made of other fragments, filled after it)
    "svm_acs_options": """\
    {hinge_C}
    {mixture}
    {kernel_parameters}
    {acs_controls}
""",
    "svm_data": """\
    X : array_like of shape (n, d), or (n, n) with ``kernel="precomputed"``
        Training data, one sample per row (the kernel is evaluated on it).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
""",
    "linear_data": """\
    X : array_like of shape (n, d)
        Data, one sample per row.
    y : array_like of shape (n,)
        Responses (``model="lasso"``) or labels in {-1, +1} with both classes present
        (``model="logistic"``).
""",
    "penalties": """\
    alpha : float > 0, optional
        Lasso penalty (required for ``model="lasso"``, ignored otherwise).
    C : float > 0, optional
        Logistic loss weight (default 1; ignored by the Lasso).
""",
    "acs_bad_input": """\
    ValueError
        Bad input, naming the argument (including ``max_iter`` not an integer >= 1 and
        ``tol <= 0`` / NaN / inf).
""",
    "acs_grid_bad_input": """\
    ValueError
        Empty or non-positive ``ages``, a bad range, ``max_iter`` not an integer >= 1,
        ``tol <= 0`` or other bad input, naming the argument.
""",
    "acs_linear_models_raise": """\
    NotImplementedError
        ``model="svm"`` (the kernel SVM has its own: :func:`svm_acs`, :func:`svm_acs_path`).
    SolverError
        (a ``RuntimeError``) Logistic model: a weighted problem whose samples with
        ``v_i > 0`` are all of one class (no minimizer).
""",
    "regularizer_at_age": """\
    age : float > 0
        The age :math:`\\lambda`; ``0 < age < 1`` for ``regularizer="log"``.
    regularizer : {"hard", "linear", "mixture", "log"}
        Which SP-regularizer (keyword-only, no default).
    mixture : float > 0, optional
        Parameter of the mixture regularizer, the paper's :math:`\\gamma` (required for it,
        ignored by the others).
""",
    "linear_age_range": """\
    age_min, age_max : float, default 0.1 and 20.0
        The age range traced (from ``2 age_min``, ``4 age_min`` or ``8 age_min`` where the
        path cannot start at ``age_min``; ``age_min_`` is the start used).
""",
    "estimator_selection": """\
    validation_fraction : float in (0, 1), default 0.25
        Held-out share of ``(X, y)`` when ``fit`` gets no ``X_val``.
    n_eval_per_piece : int >= 0, default 8
        Interior points of every piece at which the validation error is evaluated.
    random_state : int, Generator, RandomState or None, default 0
        The validation split's randomness.
""",
    "hinge_C": """\
    C : float > 0, default 1.0
        Hinge-loss weight (``None`` also means 1).
""",
    "kernel_parameters": """\
    kernel : {"linear", "rbf", "precomputed"} or Kernel, default "linear"
        ``"linear"`` (or ``None``): ``K = X X'`` (``coef`` is reported); ``"rbf"``:
        ``exp(-gamma ||x - x'||^2)``; ``"precomputed"``: ``X`` is the ``(n, n)`` training
        kernel matrix; or a :class:`~pathlib_core.core.kernels.Kernel` evaluated on ``X``
        (e.g. ``kernel_from_name("rbf", gamma=0.5)``).
    gamma : float > 0 or "scale", default "scale"
        Width of the RBF kernel (ignored by the others); ``"scale"`` is scikit-learn's
        ``1 / (n_features * X.var())``.
""",
    "mixture": """\
    mixture : float > 0, optional
        Parameter of the mixture regularizer, the paper's :math:`\\gamma` (required for
        ``regularizer="mixture"``, ignored by the others).
""",
    "acs_controls": """\
    max_iter : int >= 1, default 500
        Cap on the ACS iterations at each age (an integer; a float only with an integral
        value, never truncated).
    tol : float > 0, default 1e-11
        Partial-optimum tolerance (the relative certificate) that stops ACS.
""",
    "acs_grid": """\
    ages : array_like of shape (n_ages,), optional
        The ages :math:`\\lambda > 0`, visited in the given order (they need not be sorted).
        Without them, the grid ``age_min, age_min + age_step, ...`` below ``age_max``, then
        ``age_max`` (the paper's grid, Appendix D.2).
    age_min, age_max : float, optional
        The age range of the grid (``0 < age_min < age_max``; not with ``ages``).
    age_step : float > 0, default 0.5
        The grid step (the paper's 0.5).
""",
}


def fill_doc(fn):
    """Replace every ``{name}`` line of ``fn.__doc__`` by the shared fragment ``name``."""
    doc = fn.__doc__
    for name, text in _FRAGMENTS.items():
        doc = doc.replace("    {" + name + "}\n", text)
    fn.__doc__ = doc
    return fn
