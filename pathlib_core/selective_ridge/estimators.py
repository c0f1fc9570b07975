"""scikit-learn estimators over :func:`~pathlib_core.selective_ridge.fit.selective_fit`."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .fit import selective_fit

__all__ = ["SelectiveRidgeRegressor", "SelectiveRidgeClassifier"]


class SelectiveRidgeRegressor(RegressorMixin, BaseEstimator):
    r"""Selective ridge regression (criterion (11) with the squared loss), fitted in the dual.

    Parameters
    ----------
    gamma : float > 0, default 1.0
    mu : float >= 0, default 0.1
        Selectivity; ``mu = 0`` is ridge regression.
    method : {"dual", "primal"}, default "dual"

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    dual_coef_ : ndarray of shape (n_samples,)
        The multipliers ``lambda`` (one per training object).
    n_iter_ : int
    """

    def __init__(self, gamma=1.0, mu=0.1, method="dual"):
        self.gamma = gamma
        self.mu = mu
        self.method = method

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        res = selective_fit(X, y, gamma=self.gamma, mu=self.mu, loss="squared",
                            method=self.method)
        self.coef_, self.intercept_ = res.coef, res.intercept
        self.dual_coef_, self.n_iter_ = res.dual, res.n_iter
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


class SelectiveRidgeClassifier(ClassifierMixin, BaseEstimator):
    r"""Selective-ridge SVM (criterion (11) with the hinge loss), fitted in the dual.

    Two classes are fitted directly (Theorem 2); more classes one-vs-rest.

    Parameters
    ----------
    gamma : float > 0, default 1.0
    mu : float >= 0, default 0.1
    method : {"dual", "primal"}, default "dual"

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_features,) for two classes, else (n_classes, n_features)
    intercept_ : float or ndarray of shape (n_classes,)
    """

    def __init__(self, gamma=1.0, mu=0.1, method="dual"):
        self.gamma = gamma
        self.mu = mu
        self.method = method

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError("y must contain at least two classes; got one class")
        targets = ([self.classes_[1]] if len(self.classes_) == 2 else list(self.classes_))
        coefs, icpts = [], []
        for c in targets:
            yy = np.where(y == c, 1.0, -1.0)
            res = selective_fit(X, yy, gamma=self.gamma, mu=self.mu, loss="hinge",
                                method=self.method)
            coefs.append(res.coef)
            icpts.append(res.intercept)
        if len(self.classes_) == 2:
            self.coef_, self.intercept_ = coefs[0], icpts[0]
        else:
            self.coef_, self.intercept_ = np.array(coefs), np.array(icpts)
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.coef_.ndim == 1:
            return X @ self.coef_ + self.intercept_
        return X @ self.coef_.T + self.intercept_

    def predict(self, X):
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]
