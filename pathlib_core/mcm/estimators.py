"""scikit-learn estimators of the MCM part: the kernel MCM and the conformal-kernel MCM / SVM.

:class:`MCMClassifier` fits the linear program of :func:`pathlib_core.mcm.lp.fit_mcm`;
:class:`ConformalMCMClassifier` and :class:`ConformalSVMClassifier` run the 8-step algorithm
of Badge et al. (2021), whose kernel comes from
:func:`pathlib_core.mcm.conformal.optimize_conformal`, and differ in the final learner.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.kernels import (
    conformal_basis,
    conformal_kernel,
    gamma_value,
    linear_kernel,
    rbf_kernel,
)
from ..core.validation import check_choice, encode_binary_labels, positive_scalar
from .conformal import optimize_conformal
from .lp import _linear_mcm, fit_mcm

__all__ = ["MCMClassifier", "ConformalMCMClassifier", "ConformalSVMClassifier"]


def _gamma_value(gamma, X: np.ndarray, name: str = "gamma") -> float:
    """The RBF width (:func:`~pathlib_core.core.kernels.gamma_value`; ``"scale"`` only)."""
    return gamma_value(gamma, X, name, choices=("scale",))


def _binary_targets(est, y) -> np.ndarray:
    """Labels of any two classes (strings, 0/1, -1/+1) as -1/+1; sets ``est.classes_``."""
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"y must contain two classes; got only one class: {classes}")
    if classes.size > 2 or type_of_target(y) != "binary":
        raise ValueError("Only binary classification is supported: y must have two classes; "
                         f"got {classes.size} (type {type_of_target(y)!r}). Use "
                         "sklearn.multiclass.OneVsRestClassifier for more")
    y_pm, est.classes_ = encode_binary_labels(y, "y")
    return y_pm


def _store_result(est, res, yb) -> None:
    """The fitted attributes of an MCM (``result_``, ``support_``, ``n_support_`` per class as
    in SVC, ``dual_coef_``, ``intercept_``, ``h_``) from a
    :class:`~pathlib_core.mcm.lp.MCMResult`."""
    est.result_ = res
    est.support_ = res.support
    est.n_support_ = np.array([np.sum(yb[res.support] < 0), np.sum(yb[res.support] > 0)],
                              dtype=np.int32)
    est.dual_coef_ = res.coef[res.support]
    est.intercept_ = res.intercept
    est.h_ = res.h


class _BinaryKernelClassifier(ClassifierMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = getattr(self, "kernel", "rbf") == "precomputed"
        return tags

    def predict(self, X):
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]


class MCMClassifier(_BinaryKernelClassifier):
    """Kernel Minimal Complexity Machine (binary), trained by :func:`fit_mcm`.

    Parameters
    ----------
    C : float, default 1.0
        Slack penalty of eq. (30).
    kernel : {"rbf", "linear", "precomputed"}, default "rbf"
    gamma : float or "scale", default "scale"
        RBF width ``exp(-gamma ||x - x'||^2)``; ``"scale"`` is ``1 / (d Var(X))`` as in SVC.
    l1 : float, default 0.0
        Weight of ``sum |lambda_j|`` (0 is the paper's LP; see :func:`fit_mcm`).
    method : {"highs", "highs-ds", "highs-ipm"}
    sv_tol : float, default 1e-8

    Attributes
    ----------
    classes_, support_, n_support_ (per class, as in SVC), support_vectors_ (not for
    "precomputed"), dual_coef_ (``lambda`` on the support), intercept_, h_, result_,
    coef_ (the weights ``w`` of ``f(x) = x'w + b`` for ``kernel="linear"`` with ``l1 = 0``,
    else None).
    Prediction evaluates the kernel between the new points and the training support vectors
    only (``kernel="precomputed"``: columns are all training points). With
    ``kernel="linear"`` and ``l1 = 0`` the LP is solved from the columns of ``X`` (see
    :func:`_linear_mcm`): features of very different scales then give the same training
    decision values as unit-scale features, and prediction is ``x'w + b``.
    """

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", l1=0.0, method="highs",
                 sv_tol=1e-8):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.l1 = l1
        self.method = method
        self.sv_tol = sv_tol

    def _kernel(self, X, Y=None):
        if self.kernel == "linear":
            return linear_kernel(X, Y)
        return rbf_kernel(X, Y, gamma=self._gamma)

    def fit(self, X, y):
        check_choice(self.kernel, "kernel", ("rbf", "linear", "precomputed"))
        positive_scalar(self.C, "C")
        X, y = validate_data(self, X, y, dtype=float)
        yb = _binary_targets(self, y)
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"X must be a square kernel matrix when kernel='precomputed'; "
                                 f"got shape {X.shape}")
            K = X
            self._gamma = None
        else:
            self._gamma = _gamma_value(self.gamma, X) if self.kernel == "rbf" else None
            K = self._kernel(X)
        self.coef_ = None
        if self.kernel == "linear" and positive_scalar(self.l1, "l1", allow_zero=True) == 0:
            res, self.coef_ = _linear_mcm(X, yb, C=self.C, method=self.method,
                                          sv_tol=self.sv_tol)
        else:
            res = fit_mcm(K, yb, C=self.C, l1=self.l1, method=self.method, sv_tol=self.sv_tol)
        _store_result(self, res, yb)
        if self.kernel == "precomputed":
            self._coef_full = res.coef
        else:
            self.support_vectors_ = X[res.support]
        return self

    def decision_function(self, X):
        check_is_fitted(self, "result_")
        X = validate_data(self, X, dtype=float, reset=False)
        if self.kernel == "precomputed":
            if X.shape[1] != self._coef_full.shape[0]:
                raise ValueError(f"X must have {self._coef_full.shape[0]} columns (kernel "
                                 f"against the training points); got {X.shape[1]}")
            return X @ self._coef_full + self.intercept_
        if self.coef_ is not None:  # linear kernel, l1 = 0: f(x) = x'w + b
            return X @ self.coef_ + self.intercept_
        if self.support_.size == 0:
            return np.full(X.shape[0], self.intercept_)
        return self._kernel(X, self.support_vectors_) @ self.dual_coef_ + self.intercept_


class _ConformalBase(_BinaryKernelClassifier):
    """Steps 1-7 of the conformal kernel algorithm; the final learner is set by subclasses."""

    def __init__(self, C=1.0, gamma="scale", conformal_gamma=None, D=1e-3, l1=0.0,
                 cores="support", sv_tol=1e-8):
        self.C = C
        self.gamma = gamma
        self.conformal_gamma = conformal_gamma
        self.D = D
        self.l1 = l1
        self.cores = cores
        self.sv_tol = sv_tol

    def _final_fit(self, K, yb):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, X, y):
        positive_scalar(self.C, "C")
        positive_scalar(self.D, "D")
        check_choice(self.cores, "cores", ("support", "all"))
        X, y = validate_data(self, X, y, dtype=float)
        yb = _binary_targets(self, y)
        # step 1: zero mean, unit variance (training statistics)
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Z = (X - self.mean_) / self.scale_
        self._gamma0 = _gamma_value(self.gamma, Z, "gamma")
        self._gamma1 = (self._gamma0 if self.conformal_gamma is None
                        else _gamma_value(self.conformal_gamma, Z, "conformal_gamma"))
        K0 = rbf_kernel(Z, gamma=self._gamma0)
        # step 2: base MCM, empirical cores = its support vectors
        self.base_result_ = fit_mcm(K0, yb, C=self.C, l1=self.l1, sv_tol=self.sv_tol)
        idx = (self.base_result_.support if self.cores == "support"
               else np.arange(Z.shape[0]))
        self.fallback_ = None
        if idx.size == 0:
            # documented fallback: no empirical cores -> c == 1, the basic kernel unchanged
            self.fallback_ = "no empirical cores: conformal factor c = 1"
            self.cores_ = Z[:0]
            self.alpha_ = np.array([1.0])
            self.conformal_ = None
            c = np.ones(Z.shape[0])
        else:
            self.cores_ = Z[idx]
            K1 = conformal_basis(Z, self.cores_, gamma=self._gamma1)
            # steps 3-5: scatter matrices, eigenproblem, factor c
            self.conformal_ = optimize_conformal(K0, yb, K1, D=self.D)
            self.alpha_ = self.conformal_.alpha
            c = self.conformal_.c_train
        # steps 6-7: optimized kernel, final learner
        self._Z = Z
        self._c_train = c
        self._final_fit(conformal_kernel(K0, c), yb)
        return self

    def _factor(self, Z):
        if self.cores_.shape[0] == 0:
            return np.ones(Z.shape[0])
        return conformal_basis(Z, self.cores_, gamma=self._gamma1) @ self.alpha_

    def test_kernel(self, X):
        """Conformal kernel between new points and the training points: ``c(x) c(x_j) k0``."""
        check_is_fitted(self, "alpha_")
        X = validate_data(self, X, dtype=float, reset=False)
        Z = (X - self.mean_) / self.scale_
        K0 = rbf_kernel(Z, self._Z, gamma=self._gamma0)
        return conformal_kernel(K0, self._factor(Z), self._c_train)


class ConformalMCMClassifier(_ConformalBase):
    """MCM with a conformally optimized RBF kernel (the 8-step algorithm of Badge et al.).

    1. standardize with training statistics; 2. base MCM with ``k0 = rbf(gamma)``; its support
    vectors are the empirical cores ``a_i`` (``cores="all"`` uses every training point);
    3. ``B0, W0`` (eqs. (38)-(39)); 4. the eigenproblem (41) with ridge ``D``; 5. the factor
    ``c(x) = alpha_0 + sum_i alpha_i exp(-conformal_gamma ||x - a_i||^2)``; 6. the kernel
    ``c(x) c(x') k0(x, x')``; 7. the final MCM on it; 8. prediction with the *test-vs-train*
    conformal kernel (never the training kernel).

    Parameters
    ----------
    C : float, default 1.0
    gamma : float or "scale", default "scale"
        Width of the basic kernel ``k0`` (on standardized features).
    conformal_gamma : float, "scale" or None, default None
        Width of ``k1``; None uses ``gamma``.
    D : float, default 1e-3
        Ridge of eq. (41).
    l1 : float, default 0.0
        Norm of ``lambda`` in both MCM fits (see :func:`fit_mcm`).
    cores : {"support", "all"}, default "support"
    sv_tol : float, default 1e-8

    Attributes
    ----------
    classes_, base_result_, cores_, alpha_, conformal_ (:class:`ConformalSolution` or None when
    the documented fallback ``c = 1`` was used because there were no cores; ``fallback_`` says
    so), result_, support_, n_support_, dual_coef_, intercept_, h_.
    """

    def _final_fit(self, K, yb):
        res = fit_mcm(K, yb, C=self.C, l1=self.l1, sv_tol=self.sv_tol)
        _store_result(self, res, yb)
        self._coef_full = res.coef

    def decision_function(self, X):
        check_is_fitted(self, "result_")
        return self.test_kernel(X) @ self._coef_full + self.intercept_


class ConformalSVMClassifier(_ConformalBase):
    """The comparison: the same conformal kernel (cores from a base MCM) fed to ``SVC``.

    Parameters as :class:`ConformalMCMClassifier`; ``C`` is used both by the base MCM that
    finds the cores and by the final ``SVC(kernel="precomputed", C=C)``.
    """

    def _final_fit(self, K, yb):
        self.svc_ = SVC(kernel="precomputed", C=float(self.C)).fit(K, yb)
        self.support_ = self.svc_.support_
        self.n_support_ = self.svc_.n_support_
        self.dual_coef_ = self.svc_.dual_coef_.ravel()
        self.intercept_ = float(self.svc_.intercept_[0])

    def decision_function(self, X):
        check_is_fitted(self, "svc_")
        return self.svc_.decision_function(self.test_kernel(X))
