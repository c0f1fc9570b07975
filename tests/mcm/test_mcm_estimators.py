"""The MCM estimators as scikit-learn users meet them: labels of any two classes, clone,
Pipeline, GridSearchCV, pickle, NotFittedError and the meaning of gamma="scale"."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pathlib_core.core.kernels import rbf_kernel
from pathlib_core.mcm import ConformalMCMClassifier, ConformalSVMClassifier, MCMClassifier

ESTIMATORS = [MCMClassifier(l1=0.05), ConformalMCMClassifier(l1=0.05),
              ConformalSVMClassifier(l1=0.05)]
IDS = ["mcm", "conformal-mcm", "conformal-svm"]


def _data(seed=0, n=30, d=3):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.9 * y[:, None]
    return X, y


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_string_and_01_labels_give_the_pm1_model(est):
    X, y = _data()
    ref = clone(est).fit(X, y)
    for labels, classes in [((y > 0).astype(int), [0, 1]),
                            (np.where(y > 0, "yes", "no"), ["no", "yes"])]:
        fitted = clone(est).fit(X, labels)
        assert list(fitted.classes_) == classes and fitted.n_features_in_ == X.shape[1]
        np.testing.assert_allclose(fitted.decision_function(X), ref.decision_function(X),
                                   atol=1e-10)
        assert set(fitted.predict(X)) <= set(classes)


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_clone_pipeline_grid_search_pickle(est):
    X, y = _data(1)
    with pytest.raises(NotFittedError):
        clone(est).predict(X)
    pipe = make_pipeline(StandardScaler(), clone(est)).fit(X, y)
    assert pipe.score(X, y) >= 0.8
    grid = GridSearchCV(clone(est), {"C": [0.5, 2.0]}, cv=2).fit(X, y)
    assert grid.best_params_["C"] in (0.5, 2.0)
    fitted = clone(est).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.decision_function(X), fitted.decision_function(X))


def test_gamma_scale_is_scikit_learns():
    """gamma="scale" is 1 / (n_features * X.var()), as in sklearn.svm.SVC."""
    X, y = _data(2, d=4)
    X = X * np.array([1.0, 3.0, 0.5, 2.0])
    g = 1.0 / (X.shape[1] * X.var())
    a = MCMClassifier(l1=0.05).fit(X, y)
    b = MCMClassifier(gamma=g, l1=0.05).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-12)
    c = MCMClassifier(kernel="precomputed", l1=0.05).fit(rbf_kernel(X, gamma=g), y)
    np.testing.assert_allclose(c.decision_function(rbf_kernel(X, gamma=g)),
                               a.decision_function(X), atol=1e-7)
