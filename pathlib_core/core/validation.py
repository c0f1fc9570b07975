"""Input validation at the public edge.

Every public function of :mod:`pathlib_core` validates its arguments with these helpers, so
that bad input raises a :class:`ValueError` that names the argument and says what was
expected. Internal functions trust their inputs.

The module holds conversions that check as they convert (:func:`as_matrix`,
:func:`as_vector`, :func:`as_kernel`, :func:`as_symmetric`, :func:`as_binary_labels`,
:func:`encode_binary_labels` for any two class labels), scalar checks
(:func:`finite_scalar`, :func:`positive_scalar`, :func:`positive_int`,
:func:`check_choice`) and matrix checks (:func:`check_psd`, :func:`check_bounds`,
:func:`check_all_finite`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .linalg import njit

__all__ = [
    "as_matrix",
    "as_vector",
    "as_kernel",
    "as_symmetric",
    "as_binary_labels",
    "positive_scalar",
    "finite_scalar",
    "positive_int",
    "check_choice",
    "check_psd",
    "check_bounds",
    "check_all_finite",
    "encode_binary_labels",
]


def check_all_finite(arr: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` naming ``name`` (and how many entries) if ``arr`` has NaN or inf."""
    if not np.all(np.isfinite(arr)):
        n_bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} must contain only finite values; found {n_bad} NaN/inf")


def _float_array(value, name: str, ndim: int) -> np.ndarray:
    """``value`` as a float array with ``ndim`` dimensions, or ``ValueError`` naming ``name``."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric {ndim}-D array; got "
                         f"{type(value).__name__}") from exc
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got an array of shape {arr.shape}")
    return arr


def as_matrix(X, name: str = "X", *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """Return ``X`` as a finite 2-D float array, or raise ``ValueError`` naming ``name``."""
    arr = _float_array(X, name, 2)
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise ValueError(
            f"{name} must have at least {min_rows} row(s) and {min_cols} column(s); "
            f"got shape {arr.shape}"
        )
    check_all_finite(arr, name)
    return arr


def as_vector(v, name: str, *, length: int | None = None, length_of: str = "") -> np.ndarray:
    """Return ``v`` as a finite 1-D float array (optionally of a given length)."""
    arr = _float_array(v, name, 1)
    if length is not None and arr.shape[0] != length:
        what = f" (the number of rows of {length_of})" if length_of else ""
        raise ValueError(f"{name} must have length {length}{what}; got {arr.shape[0]}")
    check_all_finite(arr, name)
    return arr


def as_kernel(K, name: str = "K", *, symmetric_tol: float = 1e-8) -> np.ndarray:
    """Return ``K`` as a finite, square, symmetric float matrix.

    Symmetry is checked relative to the largest absolute entry (whatever the scale of ``K``);
    the returned matrix is exactly symmetrized, ``(K + K') / 2``. Positive semi-definiteness
    is not checked here (it costs an eigendecomposition): engines call :func:`check_psd` when
    a factorization meets negative curvature.
    """
    return as_symmetric(K, name, symmetric_tol=symmetric_tol, what="kernel matrix")


def as_symmetric(M, name: str, *, symmetric_tol: float = 1e-8, what: str = "matrix",
                 scale_floor: float = 0.0) -> np.ndarray:
    """Return ``M`` as a finite, square, exactly symmetrized float matrix ``(M + M') / 2``.

    ``M`` counts as symmetric when its largest ``|M - M'|`` entry is at most
    ``symmetric_tol * max(scale_floor, max |M|)``; ``what`` names the matrix in the message
    of the ``ValueError`` raised otherwise (and for a matrix that is not square).
    """
    arr = as_matrix(M, name)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square {what}; got shape {arr.shape}")
    sym, largest, asym = _symmetrized(np.ascontiguousarray(arr))
    scale = max(scale_floor, largest)
    if asym > symmetric_tol * scale:
        raise ValueError(
            f"{name} must be symmetric; largest |{name} - {name}'| entry is {asym:.3g} "
            f"(tolerance {symmetric_tol:g} x max|{name}|)"
        )
    return sym


@njit(cache=True)
def _symmetrized(M):  # pragma: no cover - compiled
    """``((M + M') / 2, max|M|, max|M - M'|)`` in one blocked pass over the square ``M`` (the
    same values as the numpy expressions, without their three ``n x n`` temporaries)."""
    n = M.shape[0]
    out = np.empty((n, n))
    largest, asym = 0.0, 0.0
    bs = 64
    for i0 in range(0, n, bs):
        for j0 in range(i0, n, bs):
            for i in range(i0, min(i0 + bs, n)):
                for j in range(max(j0, i), min(j0 + bs, n)):
                    a, b = M[i, j], M[j, i]
                    largest = max(largest, abs(a), abs(b))
                    asym = max(asym, abs(a - b))
                    v = 0.5 * (a + b)
                    out[i, j] = v
                    out[j, i] = v
    return out, largest, asym


def as_binary_labels(y, name: str = "y", *, length: int | None = None,
                     length_of: str = "") -> np.ndarray:
    """Return labels in {-1, +1} as a float array; both classes must be present."""
    arr = as_vector(y, name, length=length, length_of=length_of)
    values = set(np.unique(arr).tolist())
    if not values <= {-1.0, 1.0}:
        bad = sorted(values - {-1.0, 1.0})[:5]
        raise ValueError(f"{name} must contain only -1 and +1; found {bad}")
    if len(values) < 2:
        raise ValueError(f"{name} must contain both classes -1 and +1; found only {values}")
    return arr


def encode_binary_labels(y, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Map any two-class label vector to ``{-1, +1}``, as scikit-learn classifiers do.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels of any type numpy can sort (strings, 0/1, -1/+1, booleans).
    name : str
        Argument name used in error messages.

    Returns
    -------
    y_pm : ndarray of float, shape (n,)
        ``-1.0`` for ``classes[0]`` and ``+1.0`` for ``classes[1]``.
    classes : ndarray of shape (2,)
        The sorted distinct labels (store them as the estimator's ``classes_``);
        ``classes[(f > 0).astype(int)]`` turns a decision value back into a label.

    Raises
    ------
    ValueError
        If ``y`` is not one-dimensional, is empty, or does not hold exactly two classes.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    classes, inverse = np.unique(arr, return_inverse=True)
    if classes.size != 2:
        raise ValueError(f"{name} must hold exactly two classes; found {classes.size} "
                         f"({classes[:5].tolist()})")
    return np.where(inverse == 1, 1.0, -1.0), classes


def finite_scalar(x, name: str) -> float:
    """Return ``x`` as a finite float."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real | np.floating | np.integer):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    val = float(x)
    if not np.isfinite(val):
        raise ValueError(f"{name} must be finite; got {val}")
    return val


def positive_scalar(x, name: str, *, allow_zero: bool = False) -> float:
    """Return ``x`` as a finite float that is > 0 (or >= 0 with ``allow_zero``)."""
    val = finite_scalar(x, name)
    if val < 0 or (val == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}; got {val}")
    return val


def positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` that is >= ``minimum`` (default 1).

    Accepted: a Python or NumPy integer, or a finite float with an integral value (``3.0``
    -> ``3``). Rejected with a ``ValueError`` naming ``name``: ``bool``, non-numbers, NaN /
    inf, non-integral values (``0.5``, ``2.7``; never truncated) and values below
    ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.floating | np.integer):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if isinstance(value, int | np.integer):
        val = int(value)
    else:
        fval = float(value)
        if not np.isfinite(fval) or fval != math.floor(fval):
            raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r} "
                             "(not an integral value)")
        val = int(fval)
    if val < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {val}")
    return val


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` if it is one of ``choices``; otherwise list the valid choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}; got {value!r}")
    return value


def check_psd(K, name: str = "K", *, rtol: float = 1e-10) -> None:
    """Raise ``ValueError`` if the symmetric matrix ``K`` is not positive semi-definite.

    The test is on the eigenvalues: the smallest must be ``>= -rtol`` times the largest in
    absolute value (rounding in a kernel computed from data leaves eigenvalues of about
    ``-1e-13`` relative). Costs one symmetric eigendecomposition, so engines call it when a
    factorization meets negative curvature rather than on every input.
    """
    arr = np.asarray(K, dtype=float)
    if arr.size == 0:
        return
    ev = np.linalg.eigvalsh(0.5 * (arr + arr.T))
    top = float(np.max(np.abs(ev)))
    if top > 0 and ev[0] < -rtol * top:
        raise ValueError(
            f"{name} must be positive semi-definite (a valid kernel); its smallest eigenvalue "
            f"is {ev[0]:.3g}, {-ev[0] / top:.2g} times its largest in absolute value "
            f"(tolerance {rtol:g})")


def check_bounds(lb, ub, lb_name: str = "lb", ub_name: str = "ub") -> None:
    """Raise ``ValueError`` if a lower bound exceeds its upper bound (naming both)."""
    lo, hi = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
    bad = np.flatnonzero(np.broadcast_to(lo > hi, np.broadcast_shapes(lo.shape, hi.shape)))
    if bad.size:
        i = int(bad[0])
        lo_i = float(np.broadcast_to(lo, np.broadcast_shapes(lo.shape, hi.shape)).ravel()[i])
        hi_i = float(np.broadcast_to(hi, np.broadcast_shapes(lo.shape, hi.shape)).ravel()[i])
        raise ValueError(f"{lb_name} must not exceed {ub_name}; at index {i}: "
                         f"{lb_name}={lo_i!r} > {ub_name}={hi_i!r} ({bad.size} such entries)")
