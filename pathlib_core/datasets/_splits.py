"""Seeded splits and label noise.

Every function takes an explicit ``random_state`` (a non-negative int or a
:class:`numpy.random.Generator`) and is deterministic given it. Index arrays are returned
sorted, as ``int64``.

Stratification uses one *spread order* of the samples: within each class the samples are
randomly permuted and the ``r``-th of ``n_c`` gets the key ``(r + u_c) / n_c`` with one
uniform offset ``u_c`` per class; sorting all samples by key interleaves the classes
evenly, so every prefix of the order (and every residue class of positions) holds each class
within one sample of its proportional share. Splits cut this order into consecutive
chunks; folds take every ``k``-th position. For a continuous target (a float ``y`` with a
non-integer value or more than 50 distinct values), stratification uses the quintile bins
of ``y``.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from ..core.validation import finite_scalar

MAX_CLASSES = 50


class TrainValTest(NamedTuple):
    """Index arrays of a train / validation / test split (:func:`train_val_test_split`).

    A named tuple, so ``train, val, test = split`` unpacks it. The three arrays are disjoint
    and together cover ``range(n)``.

    Attributes
    ----------
    train : ndarray of int64, shape (n_train,)
        Sorted indices of the training samples (at least one).
    val : ndarray of int64, shape (n_val,)
        Sorted indices of the validation samples (may be empty).
    test : ndarray of int64, shape (n_test,)
        Sorted indices of the test samples (at least one).
    """

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


class LabeledUnlabeled(NamedTuple):
    """Index arrays of a semi-supervised split (:func:`labeled_unlabeled_split`).

    A named tuple, so ``labeled, unlabeled = split`` unpacks it. The two arrays are disjoint
    and together cover ``range(n)``.

    Attributes
    ----------
    labeled : ndarray of int64, shape (n_labeled,)
        Sorted indices of the points whose labels are kept (every class at least once).
    unlabeled : ndarray of int64, shape (n - n_labeled,)
        Sorted indices of the points whose labels are hidden.
    """

    labeled: np.ndarray
    unlabeled: np.ndarray


def as_generator(random_state, name: str = "random_state") -> np.random.Generator:
    """A Generator from a non-negative int or a Generator; anything else is a ValueError."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if (isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral)
            or int(random_state) < 0):
        raise ValueError(
            f"{name} must be a non-negative int or a numpy.random.Generator; got {random_state!r}"
        )
    return np.random.default_rng(int(random_state))


def _labels(y, name: str = "y") -> np.ndarray:
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
        raise ValueError(f"{name} must be a 1-D array of labels") from exc
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {arr.shape}")
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _strata(y: np.ndarray) -> np.ndarray:
    """Class codes; a continuous target is cut into quintile bins.

    ``y`` counts as continuous when it is a float array with a non-integer value or with
    more than :data:`MAX_CLASSES` distinct values (diabetes' integer-valued response).
    """
    if y.dtype.kind == "f" and (not np.all(y == np.round(y))
                                or np.unique(y).size > MAX_CLASSES):
        edges = np.quantile(y, [0.2, 0.4, 0.6, 0.8])
        return np.searchsorted(edges, y, side="right")
    return np.unique(y, return_inverse=True)[1]


def _spread_order(strata: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = strata.shape[0]
    key = np.empty(n)
    for c in np.unique(strata):
        members = np.flatnonzero(strata == c)
        perm = rng.permutation(members)
        key[perm] = (np.arange(perm.size) + rng.uniform()) / perm.size
    tie = rng.permutation(n)
    return np.lexsort((tie, key))


def _order(y: np.ndarray, rng: np.random.Generator, stratify: bool) -> np.ndarray:
    if not isinstance(stratify, bool):
        raise ValueError(f"stratify must be True or False; got {stratify!r}")
    return _spread_order(_strata(y), rng) if stratify else rng.permutation(y.shape[0])


def _sizes(sizes, n: int) -> tuple[int, int, int]:
    try:
        parts = [float(s) for s in sizes]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sizes must be three numbers (train, val, test); got {sizes!r}") from exc
    if len(parts) != 3 or any(not np.isfinite(p) or p < 0 for p in parts):
        raise ValueError(f"sizes must be three non-negative numbers (train, val, test); "
                         f"got {sizes!r}")
    if all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in sizes):
        if sum(parts) != n:
            raise ValueError(f"sizes given as counts must sum to the number of samples {n}; "
                             f"got {tuple(sizes)} (sum {int(sum(parts))})")
        counts = [int(p) for p in parts]
    else:
        if abs(sum(parts) - 1.0) > 1e-9:
            raise ValueError(f"sizes given as fractions must sum to 1; got {tuple(sizes)}")
        val, test = (int(np.floor(p * n + 0.5)) for p in parts[1:])
        counts = [n - val - test, val, test]
    if counts[0] < 1 or counts[2] < 1:
        raise ValueError(f"sizes must leave at least one training and one test sample; "
                         f"got counts {tuple(counts)} for {n} samples")
    return counts[0], counts[1], counts[2]


def train_val_test_split(X, y, *, sizes=(0.6, 0.2, 0.2), random_state, stratify: bool = True
                         ) -> TrainValTest:
    """Split sample indices into train / validation / test.

    ``sizes`` is three fractions summing to 1 (validation and test counts are
    ``round_half_up(fraction * n)``, train takes the rest) or three ints summing to ``n``;
    a zero validation size gives an empty ``val``. ``X`` is used only to check that it has
    as many rows as ``y``; pass ``None`` to skip that check. Returns sorted index arrays.

    Parameters
    ----------
    X : array_like or None
        Features with ``n`` rows (only its length is used), or ``None``.
    y : array_like of shape (n,)
        Labels (any comparable dtype) or a continuous target; non-empty, finite if numeric.
    sizes : sequence of three numbers, default (0.6, 0.2, 0.2)
        ``(train, val, test)`` as non-negative fractions summing to 1, or as non-negative ints
        summing to ``n``. Train and test must end up with at least one sample each.
    random_state : int or numpy.random.Generator
        A non-negative int (passed to :func:`numpy.random.default_rng`) or a Generator,
        which is used, and advanced, as is.
    stratify : bool, default True
        Use the stratified spread order of the module docstring (class proportions kept
        within one sample; quintile bins for a continuous ``y``); ``False``: a plain random
        permutation.

    Returns
    -------
    TrainValTest
        ``(train, val, test)``: sorted ``int64`` index arrays partitioning ``range(n)``; the
        stratified split cuts the spread order into three consecutive chunks.

    Raises
    ------
    ValueError
        An empty, non-1-D or non-finite ``y``; ``X`` with a different number of rows; bad
        ``sizes`` (not three non-negative numbers, fractions not summing to 1, counts not
        summing to ``n``, an empty train or test part); a bad ``random_state``; a non-bool
        ``stratify``.
    """
    y = _labels(y)
    if X is not None and np.shape(X)[0] != y.shape[0]:
        raise ValueError(f"X must have as many rows as y has entries ({y.shape[0]}); "
                         f"got {np.shape(X)[0]}")
    n_train, n_val, _ = _sizes(sizes, y.shape[0])
    order = _order(y, as_generator(random_state), stratify)
    cut = (order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:])
    return TrainValTest(*(np.sort(c).astype(np.int64) for c in cut))


def default_n_labeled(n_train: int) -> int:
    """The S3VM chapter's rule: ``|L| = min(30, 10% of the training set)`` (at least 2)."""
    return int(max(2, min(30, int(np.floor(0.1 * n_train)))))


def labeled_unlabeled_split(y, *, n_labeled=None, random_state, stratify: bool = True
                            ) -> LabeledUnlabeled:
    """Choose the labeled points of a semi-supervised problem; the rest are unlabeled.

    ``n_labeled`` defaults to :func:`default_n_labeled` (``min(30, 10% of len(y))``). Every
    class present in ``y`` is guaranteed at least one labeled point (if a stratified or
    random draw misses a class, the labeled point of the most represented class that comes
    last in the draw is swapped for the first point of the missing class).

    Parameters
    ----------
    y : array_like of shape (n,)
        Labels (at least two classes); non-empty, finite if numeric.
    n_labeled : int, optional
        Number of labeled points, with ``n_classes <= n_labeled < n``; default
        :func:`default_n_labeled` of ``n`` (``max(2, min(30, floor(0.1 n)))``).
    random_state, stratify
        As in :func:`train_val_test_split`.

    Returns
    -------
    LabeledUnlabeled
        ``(labeled, unlabeled)``: sorted ``int64`` index arrays partitioning ``range(n)``,
        with ``n_labeled`` labeled points covering every class.

    Raises
    ------
    ValueError
        A bad ``y`` (empty, not 1-D, non-finite, a single class), ``n_labeled`` not an int in
        ``[n_classes, n)`` (also when the default does not fit, e.g. ``n <= 2``), a bad
        ``random_state`` or a non-bool ``stratify``.
    """
    y = _labels(y)
    n = y.shape[0]
    classes = np.unique(y)
    if n_labeled is None:
        n_labeled = default_n_labeled(n)
    if (isinstance(n_labeled, bool) or not isinstance(n_labeled, numbers.Integral)
            or not classes.size <= int(n_labeled) < n):
        raise ValueError(f"n_labeled must be an int with {classes.size} (one per class) <= "
                         f"n_labeled < {n}; got {n_labeled!r}")
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes; found only {classes.tolist()}")
    order = _order(y, as_generator(random_state), stratify)
    labeled = list(order[:int(n_labeled)])
    rest = list(order[int(n_labeled):])
    for c in classes:
        if np.any(y[labeled] == c):
            continue
        counts = {k: int(np.sum(y[labeled] == k)) for k in classes}
        big = max(counts, key=lambda k: counts[k])
        pos_out = max(i for i, j in enumerate(labeled) if y[j] == big)
        pos_in = next(i for i, j in enumerate(rest) if y[j] == c)
        labeled[pos_out], rest[pos_in] = rest[pos_in], labeled[pos_out]
    return LabeledUnlabeled(np.sort(np.asarray(labeled, dtype=np.int64)),
                            np.sort(np.asarray(rest, dtype=np.int64)))


def kfold_indices(y, *, n_splits: int = 5, random_state, stratify: bool = True
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` (train, test) index pairs; the test folds partition ``range(len(y))``.

    Position ``r`` of the (spread or random) order goes to fold ``r mod n_splits``, so the
    fold sizes differ by at most one and, when stratified, each fold holds every class in
    proportion (within about one sample).

    Parameters
    ----------
    y : array_like of shape (n,)
        Labels (any comparable dtype) or a continuous target; non-empty, finite if numeric.
    n_splits : int, default 5
        Number of folds, ``2 <= n_splits <= n``.
    random_state, stratify
        As in :func:`train_val_test_split`.

    Returns
    -------
    list of (ndarray, ndarray)
        ``n_splits`` pairs ``(train, test)`` of sorted ``int64`` index arrays; fold ``k``'s
        ``test`` is its fold and ``train`` the complement.

    Raises
    ------
    ValueError
        A bad ``y``, ``n_splits`` not an int in ``[2, n]``, a bad ``random_state`` or a non-bool
        ``stratify``.
    """
    y = _labels(y)
    if (isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral)
            or not 2 <= n_splits <= y.shape[0]):
        raise ValueError(f"n_splits must be an int with 2 <= n_splits <= {y.shape[0]}; "
                         f"got {n_splits!r}")
    order = _order(y, as_generator(random_state), stratify)
    fold = np.empty(y.shape[0], dtype=np.int64)
    fold[order] = np.arange(y.shape[0]) % n_splits
    return [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(n_splits)]


def _rate(rate) -> float:
    val = finite_scalar(rate, "rate")
    if not 0.0 <= val <= 1.0:
        raise ValueError(f"rate must be in [0, 1]; got {val}")
    return val


def n_noisy(rate: float, n: int) -> int:
    """Number of corrupted entries: ``round_half_up(rate * n)``."""
    return int(np.floor(_rate(rate) * n + 0.5))


def _noisy_rows(rate, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_noisy(rate, n)`` rows drawn without replacement, and their boolean mask."""
    k = n_noisy(rate, n)
    chosen = rng.choice(n, size=k, replace=False)
    mask = np.zeros(n, dtype=bool)
    mask[chosen] = True
    return chosen, mask


def flip_labels(y, *, rate, random_state) -> tuple[np.ndarray, np.ndarray]:
    """Flip exactly ``round_half_up(rate * n)`` labels, chosen uniformly without replacement.

    Each chosen label is replaced by one of the *other* classes present in ``y``, uniformly
    (for labels in {-1, +1} this is a sign flip). Returns ``(new_y, flipped_mask)``;
    ``new_y`` has the dtype of ``y``; ``y`` itself is not modified.

    Parameters
    ----------
    y : array_like of shape (n,)
        Class labels (at least two distinct values); non-empty, finite if numeric. Every
        distinct value counts as a class, so pass labels, not a continuous target.
    rate : float in [0, 1]
        Fraction of labels to flip; the count is ``floor(rate * n + 0.5)``.
    random_state : int or numpy.random.Generator
        A non-negative int (passed to :func:`numpy.random.default_rng`) or a Generator,
        which is used, and advanced, as is.

    Returns
    -------
    new_y : ndarray of shape (n,)
        A copy of ``y`` (as an array, same dtype) with the chosen labels replaced.
    flipped_mask : ndarray of bool, shape (n,)
        ``True`` exactly at the flipped positions (every one of them changed class).

    Raises
    ------
    ValueError
        A bad ``y`` (empty, not 1-D, non-finite, a single class), ``rate`` not a finite
        number in [0, 1], or a bad ``random_state``.
    """
    y = _labels(y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes; found only {classes.tolist()}")
    rng = as_generator(random_state)
    chosen, mask = _noisy_rows(rate, y.shape[0], rng)
    k = chosen.size
    new = y.copy()
    if k:
        code = np.searchsorted(classes, y[chosen])
        shift = rng.integers(1, classes.size, size=k)
        new[chosen] = classes[(code + shift) % classes.size]
    return new, mask


def add_response_noise(y, *, rate, random_state, scale: float = 1.0, relative: bool = True
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""Corrupt a ``rate`` fraction of regression responses with additive Gaussian noise.

    Model: exactly ``round_half_up(rate * n)`` responses, chosen uniformly without
    replacement, get ``y_i + sigma * e_i`` with ``e_i ~ N(0, 1)`` i.i.d.; ``sigma = scale *
    std(y)`` when ``relative`` (default), else ``sigma = scale``. The other responses are
    untouched. Returns ``(new_y, noisy_mask)``.

    .. math::

        \tilde y_i = y_i + \sigma \varepsilon_i \;(i \in S), \qquad
        \tilde y_i = y_i \;(i \notin S), \qquad \varepsilon_i \sim \mathcal N(0, 1),
        \qquad |S| = \lfloor \mathrm{rate}\cdot n + \tfrac12 \rfloor.

    Parameters
    ----------
    y : array_like of shape (n,)
        Real responses, non-empty and finite.
    rate : float in [0, 1]
        Fraction of responses to corrupt.
    random_state : int or numpy.random.Generator
        A non-negative int (passed to :func:`numpy.random.default_rng`) or a Generator,
        which is used, and advanced, as is.
    scale : float > 0, default 1.0
        Noise level, in units of ``std(y)`` when ``relative`` (then a constant ``y`` gets no
        noise at all, although the mask still marks the chosen entries), else absolute.
    relative : bool, default True
        Whether ``scale`` is relative to the (population) standard deviation of ``y``.

    Returns
    -------
    new_y : ndarray of float, shape (n,)
        A corrupted copy of ``y``.
    noisy_mask : ndarray of bool, shape (n,)
        ``True`` at the corrupted positions.

    Raises
    ------
    ValueError
        A bad ``y`` (empty, not 1-D, non-finite), ``scale <= 0``, a non-bool ``relative``,
        ``rate`` not a finite number in [0, 1], or a bad ``random_state``.
    """
    from ..core.validation import as_vector, positive_scalar

    arr = as_vector(y, "y")
    if arr.shape[0] == 0:
        raise ValueError("y must be non-empty")
    sigma = positive_scalar(scale, "scale")
    if not isinstance(relative, bool):
        raise ValueError(f"relative must be True or False; got {relative!r}")
    if relative:
        sigma *= float(np.std(arr))
    rng = as_generator(random_state)
    chosen, mask = _noisy_rows(rate, arr.shape[0], rng)
    new = arr.copy()
    new[chosen] += sigma * rng.standard_normal(chosen.size)
    return new, mask
