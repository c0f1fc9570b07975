"""scikit-learn estimators that choose the age of self-paced learning along the exact
age-path: :class:`SelfPacedLasso`, :class:`SelfPacedLogisticRegression` and
:class:`SelfPacedSVC`.

Each ``fit`` holds out a validation share of the training data (or takes ``X_val, y_val``),
traces the exact age-path (:func:`~pathlib_core.gaga.linear_path.age_path`,
:func:`~pathlib_core.gaga.svm_path.svm_age_path`) on the rest, scores the model at every
breakpoint and at ``n_eval_per_piece`` interior points of every piece
(:func:`candidate_ages`), and keeps the first age with the smallest validation error: the
model selection of Section 5 of Qu, Li, Zhao and Gu (NeurIPS 2022) over the whole age
continuum instead of a grid.
"""

from __future__ import annotations

import pickle

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, check_X_y, validate_data

from ..core.threads import single_blas_thread
from ..core.validation import encode_binary_labels, positive_int
from .docstrings import fill_doc
from .exceptions import DegenerateStartError
from .linear_path import age_path
from .svm_dual import check_kernel, kernel_matrix, kernel_width
from .svm_path import svm_age_path

__all__ = ["candidate_ages", "SelfPacedLasso", "SelfPacedLogisticRegression", "SelfPacedSVC"]


def candidate_ages(path, n_interior: int = 8) -> np.ndarray:
    """Ages at which to score a model along an exact age-path: every breakpoint of ``path``
    and ``n_interior`` evenly spaced interior points of every piece of positive length
    (sorted, without repeats).

    The estimators select their age on validation data over these candidates; a chapter that
    compares the path with ACS on a grid scores the path at the same ages.

    Parameters
    ----------
    path : SolutionPath
        An age-path (:func:`~pathlib_core.gaga.linear_path.age_path`,
        :func:`~pathlib_core.gaga.svm_path.svm_age_path`).
    n_interior : int >= 0, default 8
        Interior points per piece (0: the breakpoints only).

    Returns
    -------
    ndarray of float
    """
    k = positive_int(n_interior, "n_interior", minimum=0)
    bp = np.asarray(path.breakpoints, dtype=float)
    inner = [lo + (hi - lo) * (np.arange(1, k + 1) / (k + 1))
             for lo, hi in zip(bp[:-1], bp[1:], strict=True) if hi > lo]
    return np.unique(np.concatenate([bp] + inner))


def _permutation(random_state, n: int) -> np.ndarray:
    """A permutation of ``range(n)`` from ``random_state`` (an int, ``None``, a
    ``numpy.random.Generator`` or a legacy ``RandomState``)."""
    if isinstance(random_state, np.random.RandomState):
        return random_state.permutation(n)
    return np.random.default_rng(random_state).permutation(n)


class _SelfPacedMixin:
    """What the three estimators share: the validation split, the age selection along the
    path, pickling and the tags."""

    def _validation_split(self, n: int):
        """Indices ``(train, validation)`` of a random hold-out of ``validation_fraction``."""
        if not 0 < self.validation_fraction < 1:
            raise ValueError("validation_fraction must be in (0, 1); got "
                             f"{self.validation_fraction!r}")
        perm = _permutation(self.random_state, n)
        n_val = max(1, int(round(self.validation_fraction * n)))
        return perm[n_val:], perm[:n_val]

    def _trace(self, trace):
        """``trace(age_min)``, from ``age_min`` or, where the path cannot start there
        (:class:`~pathlib_core.gaga.exceptions.DegenerateStartError`: e.g. every sample of
        one class has a loss above the age), from the first of ``2 age_min``, ``4
        age_min``, ``8 age_min`` below ``age_max`` where it can; ``age_min_`` records the
        start used."""
        age_min = self.age_min
        for attempt in range(4):
            try:
                path = trace(age_min)
            except DegenerateStartError:
                if attempt == 3 or 2 * age_min >= self.age_max:
                    raise
                age_min *= 2
                continue
            self.age_min_ = age_min
            return path

    def _select_age(self, path, error) -> None:
        """Store the age with the smallest ``error(solution)`` over :func:`candidate_ages`,
        the curve and the path."""
        ages = candidate_ages(path, positive_int(self.n_eval_per_piece, "n_eval_per_piece",
                                                 minimum=0))
        errs = np.array([error(path.at(a)) for a in ages])
        best = int(np.argmin(errs))
        self.path_ = path
        self.age_, self.validation_error_ = float(ages[best]), float(errs[best])
        self.ages_, self.validation_curve_ = ages, errs

    def __getstate__(self):
        # the fitted path is kept where it pickles (its pieces may hold the integrator's
        # dense output as local functions); the selected model always is
        state = super().__getstate__()
        if "path_" in state:
            try:
                pickle.dumps(state["path_"])
            except (pickle.PicklingError, AttributeError, TypeError):
                state = {k: v for k, v in state.items() if k != "path_"}
        return state


def _store_parameters(estimator, params: dict) -> None:
    """Store the ``__init__`` arguments as attributes of the same names, unchanged (the
    scikit-learn rule: ``__init__`` stores its parameters and does nothing else)."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


def _check_samples(n: int) -> None:
    if n < 2:
        raise ValueError(f"at least 2 samples are needed (a training and a validation part); "
                         f"got n_samples = {n}")


def _check_validation(X_val, y_val, n_features: int, y_numeric: bool = False):
    """``X_val, y_val`` checked, with the training data's number of columns."""
    X_val, y_val = check_X_y(X_val, y_val, y_numeric=y_numeric)
    if X_val.shape[1] != n_features:
        raise ValueError(f"X_val must have {n_features} columns; got {X_val.shape[1]}")
    return X_val, y_val


class _LinearSelfPaced(_SelfPacedMixin):
    """``fit`` of the Lasso and of logistic regression: data, split, path, selection."""

    _model = ""

    def _path(self, X, y):
        kw = {"alpha": self.alpha} if self._model == "lasso" else {"C": self.C}
        return self._trace(lambda age_min: age_path(
            X, y, model=self._model, regularizer=self.regularizer, mixture=self.mixture,
            age_min=age_min, age_max=self.age_max, **kw))

    def _fit(self, X, y, X_val, y_val):
        if X_val is None:
            tr, val = self._validation_split(X.shape[0])
            X, y, X_val, y_val = X[tr], y[tr], X[val], y[val]
        path = self._path(X, y)
        self._select_age(path, lambda sol: self._error(sol, X_val, y_val))
        sol = path.at(self.age_)
        self.coef_, self.intercept_, self.weights_ = sol.coef, sol.intercept, sol.weights
        return self

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_ + self.intercept_


@fill_doc
class SelfPacedLasso(RegressorMixin, _LinearSelfPaced, BaseEstimator):
    """Self-paced Lasso (eq. 10) whose age is chosen on validation data along the exact
    age-path (validation mean squared error).

    Parameters
    ----------
    alpha : float > 0, default 0.01
        Lasso penalty: ``R(w) = alpha ||w||_1``, losses ``(x_i'w - y_i)^2 / (2n)``, no
        intercept.
    regularizer : {"linear", "mixture"}, default "linear"
        SP-regularizer.
    {mixture}
    {linear_age_range}
    {estimator_selection}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        Always 0.
    weights_ : ndarray of shape (n_train,)
        The sample weights ``v`` at the selected age.
    age_ : float
        The selected age.
    validation_error_ : float
    ages_, validation_curve_ : ndarray
        The candidate ages and their validation errors.
    path_ : SolutionPath
        The traced age-path.
    n_features_in_ : int
    """

    _model = "lasso"

    def __init__(self, alpha: float = 0.01, *, regularizer: str = "linear",
                 mixture: float | None = None, age_min: float = 0.1, age_max: float = 20.0,
                 validation_fraction: float = 0.25, n_eval_per_piece: int = 8,
                 random_state=0):
        _store_parameters(self, locals())

    @single_blas_thread
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the age-path on ``(X, y)`` and keep the age with the smallest mean squared
        error on ``(X_val, y_val)`` (default: a held-out ``validation_fraction`` of
        ``(X, y)``)."""
        X, y = validate_data(self, X, y, y_numeric=True)
        _check_samples(X.shape[0])
        if X_val is not None:
            X_val, y_val = _check_validation(X_val, y_val, X.shape[1], y_numeric=True)
        return self._fit(X, y.astype(float), X_val, y_val)

    def _error(self, sol, X, y):
        return float(np.mean((X @ sol.coef - y) ** 2))

    def predict(self, X):
        """``X @ coef_``."""
        return self._decision(X)


class _SelfPacedClassifier(_SelfPacedMixin):
    """Labels of any two classes, encoded as -1 / +1 (``classes_``)."""

    def _encode(self, y, name="y"):
        """``y`` as -1 / +1 against the fitted ``classes_``."""
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not np.all(known):
            raise ValueError(f"{name} holds labels not seen in y: {np.unique(y[~known])[:5]}")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _fit_labels(self, X, y, X_val, y_val):
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        _check_samples(X.shape[0])
        if type_of_target(y) != "binary":
            raise ValueError("Only binary classification is supported; the target is "
                             f"{type_of_target(y)}")
        y_pm, self.classes_ = encode_binary_labels(y)
        if X_val is not None:
            X_val, y_val = _check_validation(X_val, y_val, X.shape[1])
            y_val = self._encode(y_val, "y_val")
        return X, y_pm, X_val, y_val

    def predict(self, X):
        """The label of ``classes_[1]`` where the decision function is >= 0, else
        ``classes_[0]``."""
        f = self.decision_function(X)
        return self.classes_[(f >= 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def _misclassified(f, y) -> float:
    return float(np.mean(np.where(f >= 0, 1.0, -1.0) != y))


@fill_doc
class SelfPacedLogisticRegression(_SelfPacedClassifier, ClassifierMixin, _LinearSelfPaced,
                                  BaseEstimator):
    """Self-paced logistic regression (eq. 24) whose age is chosen on validation data along
    the exact age-path (validation misclassification rate). Binary: any two labels.

    Parameters
    ----------
    C : float > 0, default 1.0
        Loss weight: losses ``C log(1 + exp(-y_i (x_i'w + b)))``, ``R(w) = ||w||^2 / 2``.
    regularizer : {"linear", "mixture"}, default "linear"
        SP-regularizer.
    {mixture}
    {linear_age_range}
    {estimator_selection}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    weights_, age_, validation_error_, ages_, validation_curve_, path_, n_features_in_
        As in :class:`SelfPacedLasso`.
    """

    _model = "logistic"

    def __init__(self, C: float = 1.0, *, regularizer: str = "linear",
                 mixture: float | None = None, age_min: float = 0.1, age_max: float = 20.0,
                 validation_fraction: float = 0.25, n_eval_per_piece: int = 8,
                 random_state=0):
        _store_parameters(self, locals())

    @single_blas_thread
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the age-path on ``(X, y)`` and keep the age with the smallest
        misclassification rate on ``(X_val, y_val)`` (default: a held-out
        ``validation_fraction`` of ``(X, y)``)."""
        return self._fit(*self._fit_labels(X, y, X_val, y_val))

    def _error(self, sol, X, y):
        return _misclassified(X @ sol.coef + sol.intercept, y)

    def decision_function(self, X):
        """``X @ coef_ + intercept_`` (positive: ``classes_[1]``)."""
        return self._decision(X)


@fill_doc
class SelfPacedSVC(_SelfPacedClassifier, ClassifierMixin, BaseEstimator):
    """Self-paced SVM (eq. 7) whose age is chosen on validation data along the exact age-path
    (validation misclassification rate). Binary: any two labels.

    Parameters
    ----------
    C : float > 0, default 1.0
        Hinge-loss weight.
    {kernel_parameters}
    regularizer : {"linear", "mixture"}, default "linear"
        SP-regularizer.
    {mixture}
    age_min, age_max : float, default 2.5 and 20.0
        The age range traced (with ``C = 1``: below about ``2 C`` ACS can end at the
        trivial partial optimum that drops a whole class, reported as an error).
    {estimator_selection}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    dual_coef_ : ndarray of shape (n_train,)
        ``alpha * y`` on the training part: the decision function is ``K(X, X_fit_) @
        dual_coef_ + intercept_``.
    coef_ : ndarray of shape (n_features,) or None
        The primal weights for the linear kernel.
    intercept_ : float
    gamma_ : float or None
        The RBF width used (``gamma`` resolved; ``None`` for other kernels).
    X_fit_ : ndarray
        The training part (with ``kernel="precomputed"``: the indices of its columns in the
        kernel matrix given to ``fit``, ``fit_index_``, instead).
    weights_, age_, validation_error_, ages_, validation_curve_, path_, n_features_in_
        As in :class:`SelfPacedLasso`.
    """

    def __init__(self, C: float = 1.0, *, kernel="linear", gamma="scale",
                 regularizer: str = "linear", mixture: float | None = None,
                 age_min: float = 2.5, age_max: float = 20.0,
                 validation_fraction: float = 0.25, n_eval_per_piece: int = 8,
                 random_state=0):
        _store_parameters(self, locals())

    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    @single_blas_thread
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the age-path on ``(X, y)`` and keep the age with the smallest
        misclassification rate on ``(X_val, y_val)`` (default: a held-out
        ``validation_fraction`` of ``(X, y)``). With ``kernel="precomputed"``, ``X`` is the
        square training kernel matrix and ``X_val`` the kernel between the validation and
        the training samples."""
        check_kernel(self.kernel)
        X, y, X_val, y_val = self._fit_labels(X, y, X_val, y_val)
        n = X.shape[0]
        tr = np.arange(n)
        if X_val is None:
            tr, val = self._validation_split(n)
            X_val, y_val = (X[np.ix_(val, tr)] if self._precomputed() else X[val]), y[val]
        elif self._precomputed():
            pass  # X_val already holds K(validation, training)
        y_fit = y[tr]
        if self._precomputed():
            self.fit_index_, self.gamma_ = tr, None
            X_fit = X[np.ix_(tr, tr)]
            K_val = X_val
        else:
            X_fit = self.X_fit_ = X[tr]
            self.gamma_ = kernel_width(X_fit, self.gamma) if self.kernel == "rbf" else None
            K_val = kernel_matrix(X_val, X_fit, self.kernel, self.gamma_)
        path = self._trace(lambda age_min: svm_age_path(
            X_fit, y_fit, regularizer=self.regularizer, mixture=self.mixture, age_min=age_min,
            age_max=self.age_max, C=self.C, kernel=self.kernel, gamma=self.gamma_ or "scale"))
        self._select_age(path, lambda sol: _misclassified(K_val @ sol.dual_coef
                                                          + sol.intercept, y_val))
        sol = path.at(self.age_)
        self.coef_, self.dual_coef_ = sol.coef, sol.dual_coef
        self.intercept_, self.weights_ = sol.intercept, sol.weights
        return self

    def decision_function(self, X):
        """``K(X, X_fit_) @ dual_coef_ + intercept_`` (positive: ``classes_[1]``); with
        ``kernel="precomputed"``, ``X`` is the kernel between the samples and those given
        to ``fit``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if self._precomputed():
            return X[:, self.fit_index_] @ self.dual_coef_ + self.intercept_
        return kernel_matrix(X, self.X_fit_, self.kernel, self.gamma_) @ self.dual_coef_ + (
            self.intercept_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()
        return tags
