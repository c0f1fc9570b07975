"""scikit-learn face of the S3VM path: :class:`S3VMPathClassifier`.

The classifier is semi-supervised in scikit-learn's way (``LabelSpreading``,
``SelfTrainingClassifier``): the unlabeled points are rows of ``X`` whose label is the marker
``unlabeled`` (default ``-1``), so a ``Pipeline`` transforms them with the labeled rows. It
traces :func:`pathlib_core.s3vm.path.s3vm_path` over ``C^*`` in ``[0, C_unlabeled_max]`` and
keeps the solution at the ``C^*`` of least validation error, found exactly over the continuum
(:func:`pathlib_core.s3vm.path.select_C_unlabeled`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.kernels import gamma_value, linear_kernel, rbf_kernel
from ..core.validation import check_choice, encode_binary_labels, positive_scalar
from .path import (
    S3VMSolution,
    class_balance_bias,
    s3vm_path,
    select_C_unlabeled,
    supervised_fixed_bias,
)

__all__ = ["S3VMPathClassifier"]


class S3VMPathClassifier(ClassifierMixin, BaseEstimator):
    """Semi-supervised SVM trained by the S3VM path (Ogawa et al. 2013), ``C^*`` chosen exactly.

    Parameters
    ----------
    C : float, default 1.0
        Weight of the labeled hinge losses.
    C_unlabeled_max : float, optional
        End of the path in ``C^*``, the weight of the unlabeled losses (default ``C``, the
        end of the paper's annealing).
    kernel : {"rbf", "linear", "precomputed"}, default "rbf"
        With ``"precomputed"``, ``fit`` takes the kernel matrix over all training points
        (labeled and unlabeled) and ``predict`` / ``decision_function`` take the kernel
        between new points (rows) and the training points (columns), as ``SVC`` does.
    gamma : float, "scale" or "auto", default "scale"
        Width of the RBF kernel ``exp(-gamma |x - x'|^2)``: ``"scale"`` is scikit-learn's
        ``1 / (n_features * X.var())`` (over all training rows, labeled or not), ``"auto"``
        is ``1 / n_features``.
    unlabeled : scalar, default -1
        The label value that marks an unlabeled row in ``y`` (scikit-learn's convention for
        semi-supervised learners). If the classes themselves are -1 and +1, choose another
        marker (e.g. 0).
    validation_fraction : float in (0, 1), optional
        Without ``X_val`` in ``fit``: the fraction of labeled rows (at least one per class)
        whose labels are hidden from the path -- they join the unlabeled rows -- and used to
        choose ``C^*``. ``None`` (default): ``C^* = C_unlabeled_max``.
    random_state : int, RandomState instance or None, default None
        Draws the held-out rows of ``validation_fraction``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels (sorted).
    n_features_in_ : int
    path_ : SolutionPath or None
        The S3VM path (``None`` when ``y`` has no unlabeled row: the fit is then the
        supervised SVM with the bias fixed at ``2 r - 1``, the path's start).
    C_unlabeled_ : float
        The chosen ``C^*``.
    validation_error_ : float
        The validation error at ``C_unlabeled_`` (NaN without validation data).
    solution_ : S3VMSolution
        The solution at ``C_unlabeled_``.
    transduction_ : ndarray of shape (n_samples,)
        Labels (in ``classes_``) the solution gives the training rows: the given labels on
        the labeled rows, the predicted ones on the unlabeled rows.
    """

    def __init__(self, C=1.0, C_unlabeled_max=None, kernel="rbf", gamma="scale",
                 unlabeled=-1, validation_fraction=None, random_state=None):
        self.C = C
        self.C_unlabeled_max = C_unlabeled_max
        self.kernel = kernel
        self.gamma = gamma
        self.unlabeled = unlabeled
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # -- kernel ------------------------------------------------------------------------------
    def _kernel_to_train(self, X) -> np.ndarray:
        """``K(x_train_i, x_j)``: training rows, columns for the rows of ``X``."""
        if self.kernel == "precomputed":
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X must have one column per training point "
                                 f"({self.n_features_in_}) when kernel='precomputed'; got "
                                 f"shape {X.shape}")
            return X.T
        if self.kernel == "linear":
            return linear_kernel(self.X_fit_, X)
        return rbf_kernel(self.X_fit_, X, gamma=self.gamma_)

    # -- fit / predict -----------------------------------------------------------------------
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the S3VM path on ``(X, y)`` and keep the solution at the chosen ``C^*``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            Training rows, labeled and unlabeled (the kernel matrix for ``"precomputed"``).
        y : array-like of shape (n_samples,)
            Labels of two classes (any type: strings, 0/1, ...); the marker ``unlabeled`` for
            the unlabeled rows (with string labels, an array of dtype object holding the
            marker, as for scikit-learn's ``SelfTrainingClassifier``).
        X_val, y_val : array-like, optional
            Validation rows (for ``"precomputed"``, their kernel against the training points,
            one row each) and their labels, from ``classes_``: ``C^*`` is chosen by their
            error over the whole path.

        Returns
        -------
        self
        """
        check_choice(self.kernel, "kernel", ("rbf", "linear", "precomputed"))
        C = positive_scalar(self.C, "C")
        X, y = validate_data(self, X, y, dtype=float)
        unl = np.asarray(y == self.unlabeled, dtype=bool)
        check_classification_targets(y[~unl])
        ys, self.classes_ = _encode(y[~unl])
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix when kernel='precomputed'; "
                             f"got shape {X.shape}")
        y_pm = np.zeros(y.shape[0])
        y_pm[~unl] = ys
        self.gamma_ = gamma_value(self.gamma, X) if self.kernel == "rbf" else None
        self.X_fit_ = X if self.kernel != "precomputed" else None
        K = X if self.kernel == "precomputed" else self._kernel_to_train(X)
        val = None
        if X_val is not None:
            Xv = validate_data(self, X_val, dtype=float, reset=False)
            yv = np.asarray(y_val)
            if yv.shape != (Xv.shape[0],) or not np.all(np.isin(yv, self.classes_)):
                raise ValueError("y_val must have one label per row of X_val, from classes_")
            val = (self._kernel_to_train(Xv), np.where(yv == self.classes_[1], 1.0, -1.0))
        elif self.validation_fraction is not None:
            held = self._held_out(y_pm)
            val = (K[:, held], y_pm[held])
            y_pm[held] = 0.0
        Cmax = C if self.C_unlabeled_max is None else self.C_unlabeled_max
        self.validation_error_ = float("nan")
        if np.any(y_pm == 0):
            self.path_ = s3vm_path(K, y_pm, C=C, C_unlabeled_max=Cmax,
                                   kernel="precomputed")
            if val is None:
                self.C_unlabeled_ = float(self.path_.breakpoints[-1])
            else:
                self.C_unlabeled_, self.validation_error_ = select_C_unlabeled(self.path_, *val)
            self.solution_ = self.path_.at(self.C_unlabeled_)
        else:  # no unlabeled row: the path's start, the SVM with the bias fixed at 2 r - 1
            positive_scalar(Cmax, "C_unlabeled_max", allow_zero=True)
            self.path_, self.C_unlabeled_ = None, 0.0
            self.solution_ = _fixed_bias_svm(K, y_pm, C)
        self.transduction_ = self.classes_[(self.solution_.labels > 0).astype(int)]
        return self

    def _held_out(self, y_pm) -> np.ndarray:
        frac = positive_scalar(self.validation_fraction, "validation_fraction")
        if not frac < 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1); got {frac!r}")
        rng = check_random_state(self.random_state)
        held = []
        for c in (-1.0, 1.0):
            idx = np.flatnonzero(y_pm == c)
            m = int(round(frac * idx.size))
            if idx.size < 2 or not 1 <= m < idx.size:
                raise ValueError(f"validation_fraction={frac!r} must leave at least one "
                                 f"labeled row of each class on both sides")
            held.append(rng.choice(idx, m, replace=False))
        return np.sort(np.concatenate(held))

    def decision_function(self, X):
        """``f(x) = sum_i beta_i K(x_i, x) + b`` at the rows of ``X``."""
        check_is_fitted(self, "solution_")
        X = validate_data(self, X, dtype=float, reset=False)
        return self.solution_.decision_function(self._kernel_to_train(X))

    def predict(self, X):
        """The class of each row of ``X`` (``classes_[1]`` where ``f >= 0``)."""
        d = self.decision_function(X)
        return self.classes_[(d >= 0).astype(int)]


def _encode(y_lab):
    """``(y_pm, classes)`` of the labeled rows; a ``ValueError`` unless there are two classes."""
    classes = np.unique(y_lab)
    if classes.size < 2:
        raise ValueError(f"y must contain labeled rows of two classes; got only one class: "
                         f"{classes.tolist()}")
    if classes.size > 2:
        raise ValueError(f"Only binary classification is supported: y must have two classes "
                         f"among its labeled rows; got {classes.size}")
    return encode_binary_labels(y_lab, "y")


def _fixed_bias_svm(K, y_pm, C) -> S3VMSolution:
    b = class_balance_bias(y_pm)
    lab = y_pm != 0
    theta = supervised_fixed_bias(K, y_pm, lab, b, C)
    beta = y_pm * theta
    return S3VMSolution(beta, b, K @ beta + b, theta, y_pm.astype(int))
