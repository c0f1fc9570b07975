"""The self-paced estimators as scikit-learn estimators: the common checks, labels of any
two classes, clone / GridSearchCV / Pipeline / pickle, and the kernel parameters."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from pathlib_core import datasets
from pathlib_core.core.kernels import rbf_kernel
from pathlib_core.gaga import SelfPacedLasso, SelfPacedLogisticRegression, SelfPacedSVC

# short age ranges and few evaluation points: the checks fit dozens of times. The checks'
# random labels are not separable: with C = 0.1 every loss starts far below the ages, so no
# class drops out of the weighted problems (with C = 1 one can, and the path stops there)
LASSO = SelfPacedLasso(alpha=0.05, age_min=0.5, age_max=2.0, n_eval_per_piece=1)
LOGISTIC = SelfPacedLogisticRegression(C=0.1, age_min=1.0, age_max=3.0, n_eval_per_piece=1)
SVC_RBF = SelfPacedSVC(C=1.0, kernel="rbf", age_min=2.5, age_max=4.0, n_eval_per_piece=1)


def _expected_failures(estimator):
    """Checks that cannot pass, each with its reason."""
    return {}


@parametrize_with_checks([LASSO, LOGISTIC, SVC_RBF],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _classification(n=80, seed=0):
    X, y = datasets.load("breast_cancer", standardize=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return X[idx][:, :5], y[idx]


@pytest.mark.parametrize("make", [lambda: clone(LOGISTIC), lambda: clone(SVC_RBF)])
def test_classifiers_take_any_two_labels(make):
    X, y = _classification()
    ref = make().fit(X, y)
    for labels in (np.array(["benign", "malignant"]), np.array([0, 1]), np.array([False, True])):
        yy = labels[(y > 0).astype(int)]
        est = make().fit(X, yy)
        np.testing.assert_array_equal(est.classes_, labels)
        np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X))
        np.testing.assert_array_equal(est.predict(X), labels[(ref.predict(X) > 0).astype(int)])
        assert est.score(X, yy) == ref.score(X, y) and est.n_features_in_ == 5


@pytest.mark.parametrize("est", [LASSO, LOGISTIC, SVC_RBF])
def test_clone_pickle_and_not_fitted(est):
    X, y = _classification()
    est = clone(est)
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.age_ == est.age_ and back.path_.breakpoints.size == est.path_.breakpoints.size
    assert clone(est).get_params() == est.get_params()


def test_grid_search_and_pipeline():
    X, y = _classification(n=60)
    pipe = make_pipeline(StandardScaler(), clone(LOGISTIC))
    search = GridSearchCV(pipe, {"selfpacedlogisticregression__C": [0.5, 1.0]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["selfpacedlogisticregression__C"] in (0.5, 1.0)
    assert 0.5 <= search.score(X, y) <= 1.0
    Xr, yr = datasets.load("diabetes", standardize=True)
    yr = yr - yr.mean()
    reg = GridSearchCV(clone(LASSO), {"alpha": [0.02, 0.05]}, cv=2).fit(Xr[:120], yr[:120])
    assert reg.best_estimator_.coef_.shape == (Xr.shape[1],)


def test_gamma_is_the_kernel_width_and_scale_is_sklearns():
    X, y = _classification()
    est = clone(SVC_RBF).fit(X, y)
    tr, _ = est._validation_split(X.shape[0])
    assert est.gamma_ == 1.0 / (X.shape[1] * X[tr].var())
    np.testing.assert_allclose(
        est.decision_function(X), rbf_kernel(X, est.X_fit_, gamma=est.gamma_) @ est.dual_coef_
        + est.intercept_)
    fixed = clone(SVC_RBF).set_params(gamma=0.3).fit(X, y)
    assert fixed.gamma_ == 0.3
    with pytest.raises(ValueError, match="gamma"):
        clone(SVC_RBF).set_params(gamma="auto").fit(X, y)


def test_mixture_parameter_is_the_regularizers():
    X, y = _classification()
    est = clone(LOGISTIC).set_params(regularizer="mixture", mixture=1.0).fit(X, y)
    assert est.path_.info["mixture"] == 1.0
    with pytest.raises(ValueError, match="mixture"):
        clone(LOGISTIC).set_params(regularizer="mixture").fit(X, y)


def test_precomputed_kernel_gives_the_rbf_model():
    X, y = _classification()
    width = 0.2
    rbf = clone(SVC_RBF).set_params(gamma=width).fit(X, y)
    pre = clone(SVC_RBF).set_params(kernel="precomputed").fit(rbf_kernel(X, gamma=width), y)
    K_test = rbf_kernel(X[:10], X, gamma=width)
    np.testing.assert_allclose(pre.decision_function(K_test), rbf.decision_function(X[:10]),
                               atol=1e-9)
    assert pre.__sklearn_tags__().input_tags.pairwise


def test_validation_data_given_explicitly():
    X, y = _classification(n=100)
    est = clone(LOGISTIC).fit(X[:70], y[:70], X_val=X[70:], y_val=y[70:])
    assert est.weights_.shape == (70,)
    with pytest.raises(ValueError, match="labels not seen"):
        clone(LOGISTIC).fit(X[:70], y[:70], X_val=X[70:], y_val=np.full(30, 5.0))
