"""scikit-learn conventions of :class:`pathlib_core.s3vm.estimator.S3VMPathClassifier`."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from pathlib_core.core.kernels import rbf_kernel
from pathlib_core.s3vm.estimator import S3VMPathClassifier
from pathlib_core.s3vm.path import s3vm_path

_MARKER = ("the labels -1 / +1 of this check collide with the default unlabeled marker -1: "
           "the -1 rows are read as unlabeled, leaving one class (pass unlabeled=0 for such "
           "labels)")
_INDEFINITE = ("the kernel matrix this check builds (in its float32 variant, or shifted by its "
               "mean) is indefinite beyond rounding; the S3VM's conditional problems are "
               "then non-convex and a kernel that is not positive semi-definite is refused "
               "with a ValueError")


def _expected_failed_checks(est):
    out = {"check_classifiers_classes": _MARKER}
    if est.kernel == "precomputed":
        out.update(check_classifiers_train=_INDEFINITE, check_estimators_dtypes=_INDEFINITE,
                   check_positive_only_tag_during_fit=_INDEFINITE)
    return out


@parametrize_with_checks([S3VMPathClassifier(), S3VMPathClassifier(kernel="linear"),
                          S3VMPathClassifier(kernel="precomputed")],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_checks(estimator, check):
    check(estimator)


def _semi_supervised(labels=(0, 1), seed=7):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1.5, 1, (40, 2)), rng.normal(1.5, 1, (40, 2))])
    yt = np.asarray(labels)[np.r_[np.zeros(40, int), np.ones(40, int)]]
    y = np.full(80, -1, dtype=object if isinstance(labels[0], str) else int)
    idx = np.r_[0, 1, 2, 40, 41, 42]
    y[idx] = yt[idx]
    return X, y, yt, idx


@pytest.mark.parametrize("labels", [(0, 1), ("no", "yes"), (3, 7)])
def test_any_two_labels_and_the_marker(labels):
    X, y, yt, idx = _semi_supervised(labels)
    clf = S3VMPathClassifier(C=10.0, gamma=0.5).fit(X, y)
    assert list(clf.classes_) == list(labels)
    assert clf.n_features_in_ == 2
    assert np.array_equal(clf.transduction_[idx], yt[idx])
    assert np.mean(clf.predict(X) == yt) > 0.8
    assert clf.score(X, yt) > 0.8


def test_predict_before_fit_raises_not_fitted():
    with pytest.raises(NotFittedError):
        S3VMPathClassifier().predict(np.ones((3, 2)))


def test_gamma_scale_is_sklearns():
    X, y, _, _ = _semi_supervised()
    clf = S3VMPathClassifier().fit(X, y)
    assert clf.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert S3VMPathClassifier(gamma="auto").fit(X, y).gamma_ == 0.5


def test_precomputed_equals_rbf():
    X, y, _, _ = _semi_supervised()
    a = S3VMPathClassifier(C=10.0, gamma=0.5).fit(X, y)
    K = rbf_kernel(X, gamma=0.5)
    b = S3VMPathClassifier(C=10.0, kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(a.decision_function(X[:7]), b.decision_function(K[:7]),
                               rtol=1e-12, atol=1e-12)
    ypm = np.where(y == 1, 1.0, np.where(y == 0, -1.0, 0.0))
    path = s3vm_path(K, ypm, C=10.0, C_unlabeled_max=10.0)
    np.testing.assert_allclose(b.solution_.coef, path.at(10.0).coef, rtol=1e-12, atol=1e-14)


def test_clone_pipeline_grid_search_and_pickle():
    X, y, yt, _ = _semi_supervised()
    clf = clone(S3VMPathClassifier(C=10.0, validation_fraction=0.5, random_state=0))
    pipe = make_pipeline(StandardScaler(), clf).fit(X, y)
    assert np.mean(pipe.predict(X) == yt) > 0.8
    grid = GridSearchCV(S3VMPathClassifier(), {"C": [1.0, 10.0]}, cv=2).fit(X[y != -1],
                                                                           y[y != -1])
    assert grid.best_params_["C"] in (1.0, 10.0)
    fitted = S3VMPathClassifier(C=10.0, gamma=0.5).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.decision_function(X), fitted.decision_function(X))


def test_validation_fraction_is_reproducible():
    X, y, _, _ = _semi_supervised()
    a = S3VMPathClassifier(C=10.0, validation_fraction=0.5, random_state=3).fit(X, y)
    b = S3VMPathClassifier(C=10.0, validation_fraction=0.5, random_state=3).fit(X, y)
    assert a.C_unlabeled_ == b.C_unlabeled_
    assert np.isfinite(a.validation_error_)
    with pytest.raises(ValueError, match="validation_fraction"):
        S3VMPathClassifier(validation_fraction=1.5).fit(X, y)


def test_path_and_baselines_take_data_first():
    from pathlib_core.s3vm.baselines import cccp_tsvm

    X, y, _, _ = _semi_supervised()
    ypm = np.where(y == 1, 1.0, np.where(y == 0, -1.0, 0.0))
    K = rbf_kernel(X, gamma=0.5)
    a = s3vm_path(X, ypm, kernel="rbf", gamma=0.5, C=10.0, C_unlabeled_max=10.0)
    b = s3vm_path(K, ypm, C=10.0, C_unlabeled_max=10.0)
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    r1 = cccp_tsvm(X, ypm, kernel="rbf", gamma=0.5, C=10.0, C_unlabeled=5.0)
    r2 = cccp_tsvm(K, ypm, C=10.0, C_unlabeled=5.0)
    np.testing.assert_array_equal(r1.coef, r2.coef)
