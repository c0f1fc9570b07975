"""scikit-learn estimators over :func:`~pathlib_core.selective_ridge.fit.selective_fit`."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.validation import encode_binary_labels
from .fit import selective_fit

__all__ = ["SelectiveRidgeRegressor", "SelectiveRidgeClassifier"]


class _SelectiveRidgeEstimator(BaseEstimator):
    """The parameters both estimators share (``__init__`` only stores them)."""

    def __init__(self, alpha=1.0, mu=0.1, method="dual"):
        self.alpha = alpha
        self.mu = mu
        self.method = method


class SelectiveRidgeRegressor(RegressorMixin, _SelectiveRidgeEstimator):
    r"""Selective ridge regression: criterion (11) with the squared loss, fitted in the dual.

    Minimizes :math:`\alpha \sum_i r_\mu(a_i) + \sum_j (y_j - a^\top x_j - b)^2` with the
    selective penalty :math:`r_\mu(a) = 2\mu|a| + \max(0, |a| - \mu)^2` (eq. (11); ``alpha``
    is the paper's :math:`\gamma`); see :func:`~pathlib_core.selective_ridge.fit.selective_fit`.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Weight of the penalty (the paper's :math:`\gamma`).
    mu : float >= 0, default 0.1
        Selectivity; ``mu = 0`` is ridge regression, ``mu >= mu_0`` the empty model.
    method : {"dual", "primal"}, default "dual"
        ``"dual"``: the certified dual method; ``"primal"``: cvxpy on (11), the reference.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The direction vector :math:`a`.
    intercept_ : float
        The bias :math:`b`.
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers :math:`\lambda` (one per training object).
    n_iter_ : int
        Iterations of the fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def fit(self, X, y):
        """Fit the model on ``X`` (objects in rows) and real responses ``y``; returns self."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        res = selective_fit(X, y, alpha=self.alpha, mu=self.mu, loss="squared",
                            method=self.method)
        self.coef_, self.intercept_ = res.coef, res.intercept
        self.dual_coef_, self.n_iter_ = res.dual, res.n_iter
        return self

    def predict(self, X):
        """Predicted responses :math:`X a + b`."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


class SelectiveRidgeClassifier(ClassifierMixin, _SelectiveRidgeEstimator):
    r"""Selective-ridge SVM: criterion (11) with the hinge loss, fitted in the dual.

    Minimizes :math:`\alpha \sum_i r_\mu(a_i) + \sum_j \max(0, 1 - y_j(a^\top x_j + b))`
    (eq. (11) with (8); ``alpha`` is the paper's :math:`\gamma`). Two classes of any labels
    (strings, 0/1, -1/+1) are fitted directly (Theorem 2), ``classes_[1]`` as the positive
    class; more classes one-vs-rest.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Weight of the penalty (the paper's :math:`\gamma`).
    mu : float >= 0, default 0.1
        Selectivity.
    method : {"dual", "primal"}, default "dual"
        ``"dual"``: the certified dual method; ``"primal"``: cvxpy on (11), the reference.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    coef_ : ndarray of shape (n_features,) for two classes, else (n_classes, n_features)
    intercept_ : float or ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def _fit_binary(self, X, y_pm):
        res = selective_fit(X, y_pm, alpha=self.alpha, mu=self.mu, loss="hinge",
                            method=self.method)
        return res.coef, res.intercept

    def fit(self, X, y):
        """Fit on ``X`` (objects in rows) and class labels ``y``; returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError("y must contain at least two classes; got one class")
        if len(classes) == 2:
            y_pm, self.classes_ = encode_binary_labels(y, "y")
            self.coef_, self.intercept_ = self._fit_binary(X, y_pm)
            return self
        self.classes_ = classes
        fits = [self._fit_binary(X, np.where(y == c, 1.0, -1.0)) for c in classes]
        self.coef_ = np.array([f[0] for f in fits])
        self.intercept_ = np.array([f[1] for f in fits])
        return self

    def decision_function(self, X):
        """Scores :math:`X a + b` (one column per class beyond two classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.coef_.ndim == 1:
            return X @ self.coef_ + self.intercept_
        return X @ self.coef_.T + self.intercept_

    def predict(self, X):
        """Predicted class labels."""
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]
