"""Kernels: linear, RBF, ARD-RBF (with hyperparameter gradients) and the conformal transform.

All kernel functions take data matrices ``X`` of shape (n, d) and ``Y`` of shape (m, d) and
return the (n, m) matrix ``K[i, j] = k(x_i, y_j)``; ``Y=None`` means ``Y = X`` (then the result
is exactly symmetric with an exact diagonal).

Squared distances
-----------------
``||x - y||^2`` is computed feature by feature, ``sum_d (x_d - y_d)^2``, when there are at most
``32`` features: duplicates give exact zeros and there is no cancellation. With more features it
uses the Gram expansion ``||x||^2 + ||y||^2 - 2 x'y`` on data centred at the mean of ``X`` (a
translation does not change distances but removes most of the cancellation), clipped at zero,
with an exact zero diagonal for ``Y=None``.

Conformal transform
-------------------
Following Amari & Wu (1999), Xiong et al. (2005) and the MCM kernel-optimization notes
(``mcm_conformal-kernel_notes.md``), a basic kernel ``k_0`` is magnified around *empirical
cores* ``a_1, ..., a_{n_ec}`` by the factor

.. math::

    c(x) = \\alpha_0 + \\sum_{i=1}^{n_{ec}} \\alpha_i k_1(x, a_i), \\qquad
    k_1(x, a) = \\exp(-\\gamma \\|x - a\\|^2),

giving ``k(x, y) = c(x) c(y) k_0(x, y)``; on a sample, ``K = C K_0 C`` with
``C = diag(c(x_1), ..., c(x_M))`` and ``c = K_1 alpha`` (notes eq. 34), ``K_1 = [1, k_1(x_j,
a_i)]`` of shape ``(M, n_ec + 1)``. At prediction the transformed kernel is always evaluated
test-vs-train: ``K(X_test, X_train) = diag(c(X_test)) K_0(X_test, X_train) diag(c(X_train))``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .validation import as_matrix, as_vector, check_choice, finite_scalar, positive_scalar

__all__ = [
    "gamma_value",
    "squared_distances",
    "linear_kernel",
    "rbf_kernel",
    "ard_rbf_kernel",
    "ard_rbf_partial",
    "ard_rbf_gradient_contract",
    "conformal_basis",
    "conformal_factor",
    "conformal_kernel",
    "ConformalKernel",
    "Kernel",
    "kernel_from_name",
    "KERNEL_NAMES",
]

#: Names accepted by :func:`kernel_from_name`.
KERNEL_NAMES = ("linear", "rbf", "ard", "precomputed", "conformal")

_DIRECT_MAX_FEATURES = 32


# -- validation -----------------------------------------------------------------------------

def _pair(X, Y, x_name: str = "X", y_name: str = "Y") -> tuple[np.ndarray, np.ndarray | None]:
    X = as_matrix(X, x_name)
    if Y is None:
        return X, None
    Y = as_matrix(Y, y_name)
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"{y_name} must have {X.shape[1]} columns (the number of features of "
                         f"{x_name}); got {Y.shape[1]}")
    return X, Y


def _scales(scales, n_features: int, name: str = "scales") -> np.ndarray:
    if np.ndim(scales) == 0:
        s = np.full(n_features, positive_scalar(_as_number(scales, name), name))
    else:
        s = as_vector(scales, name)
        if s.size != n_features:
            raise ValueError(f"{name} must have one entry per feature ({n_features}); "
                             f"got {s.size}")
    if np.any(s <= 0):
        raise ValueError(f"{name} must be > 0 (inverse squared length-scales); found "
                         f"{np.count_nonzero(s <= 0)} entries <= 0")
    return s


def _as_number(x, name: str):
    if isinstance(x, np.ndarray):
        x = x.item()
    return x


# -- distances and the basic kernels --------------------------------------------------------

def squared_distances(X, Y=None, *, scales=None) -> np.ndarray:
    """Weighted squared Euclidean distances ``D[i, j] = sum_d s_d (x_id - y_jd)^2``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), optional
        Defaults to ``X``; then ``D`` is exactly symmetric with a zero diagonal.
    scales : float or array_like of shape (d,), optional
        Positive per-feature weights ``s_d`` (default 1).

    Returns
    -------
    ndarray of shape (n, m), entries ``>= 0``.
    """
    X, Y = _pair(X, Y)
    s = None if scales is None else _scales(scales, X.shape[1])
    return _sqdist(X, Y, s)


def _sqdist(X: np.ndarray, Y: np.ndarray | None, s: np.ndarray | None) -> np.ndarray:
    same = Y is None
    Yv = X if same else Y
    d = X.shape[1]
    if d <= _DIRECT_MAX_FEATURES:
        D = np.zeros((X.shape[0], Yv.shape[0]))
        for k in range(d):
            diff = X[:, k, None] - Yv[None, :, k]
            diff *= diff
            if s is not None:
                diff *= s[k]
            D += diff
        return D
    mu = X.mean(axis=0)
    w = 1.0 if s is None else np.sqrt(s)
    Xc = (X - mu) * w
    Yc = Xc if same else (Yv - mu) * w
    xx = np.einsum("ij,ij->i", Xc, Xc)
    yy = xx if same else np.einsum("ij,ij->i", Yc, Yc)
    D = xx[:, None] + yy[None, :] - 2.0 * (Xc @ Yc.T)
    np.maximum(D, 0.0, out=D)
    if same:
        D = 0.5 * (D + D.T)
        np.fill_diagonal(D, 0.0)
    return D


def linear_kernel(X, Y=None) -> np.ndarray:
    """Linear kernel ``k(x, y) = x'y``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), optional (defaults to ``X``)

    Returns
    -------
    ndarray of shape (n, m)
    """
    X, Y = _pair(X, Y)
    if Y is None:
        K = X @ X.T
        return 0.5 * (K + K.T)
    return X @ Y.T


def rbf_kernel(X, Y=None, *, gamma) -> np.ndarray:
    """Gaussian kernel ``k(x, y) = exp(-gamma ||x - y||^2)``.

    Same convention as :func:`sklearn.metrics.pairwise.rbf_kernel`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), optional (defaults to ``X``; then the diagonal is 1)
    gamma : float
        Positive width parameter.

    Returns
    -------
    ndarray of shape (n, m), entries in ``[0, 1]``.
    """
    X, Y = _pair(X, Y)
    gamma = positive_scalar(_as_number(gamma, "gamma"), "gamma")
    D = _sqdist(X, Y, None)
    D *= -gamma
    return np.exp(D, out=D)


def ard_rbf_kernel(X, Y=None, *, scales, return_gradient: bool = False):
    """Gaussian kernel with automatic relevance determination (one scale per feature).

    .. math::

        k(x, y) = \\exp\\Bigl(-\\sum_{d=1}^{D} s_d (x_d - y_d)^2\\Bigr),
        \\qquad \\frac{\\partial k(x, y)}{\\partial s_d} = -(x_d - y_d)^2 k(x, y).

    ``scales`` are the *inverse squared length-scales* ``s_d > 0`` themselves (not their
    logarithms; ``s_d = 1 / (2 l_d^2)`` for length-scales ``l_d``). With all ``s_d = gamma`` it
    is :func:`rbf_kernel`. For gradients w.r.t. ``log s_d`` multiply by ``s_d`` (chain rule),
    or use ``wrt="log_scales"`` in :func:`ard_rbf_gradient_contract`.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d), optional (defaults to ``X``)
    scales : float or array_like of shape (d,)
        Positive per-feature scales ``s_d``.
    return_gradient : bool
        Also return the tensor ``dK[d] = dK / ds_d`` of shape (d, n, m). It takes ``d``
        times the memory of ``K``: for a hyperparameter gradient prefer
        :func:`ard_rbf_gradient_contract` (or :func:`ard_rbf_partial` for one feature).

    Returns
    -------
    K : ndarray of shape (n, m)
    dK : ndarray of shape (d, n, m), only with ``return_gradient=True``
    """
    X, Y = _pair(X, Y)
    s = _scales(scales, X.shape[1])
    D = _sqdist(X, Y, s)
    D *= -1.0
    K = np.exp(D, out=D)
    if not return_gradient:
        return K
    Yv = X if Y is None else Y
    dK = np.empty((X.shape[1], X.shape[0], Yv.shape[0]))
    for k in range(X.shape[1]):
        diff = X[:, k, None] - Yv[None, :, k]
        np.multiply(diff * diff, K, out=dK[k])
        dK[k] *= -1.0
    return K, dK


def ard_rbf_partial(X, Y=None, *, scales, feature: int, K=None) -> np.ndarray:
    """One slice of the ARD gradient: ``dK / ds_d = -(x_d - y_d)^2 K`` for ``d = feature``.

    Parameters
    ----------
    X, Y, scales
        As in :func:`ard_rbf_kernel`.
    feature : int
        The feature index ``d``.
    K : array_like of shape (n, m), optional
        The kernel matrix, if already computed.

    Returns
    -------
    ndarray of shape (n, m)
    """
    X, Y = _pair(X, Y)
    if isinstance(feature, bool) or not isinstance(feature, int | np.integer) or not (
            0 <= feature < X.shape[1]):
        raise ValueError(f"feature must be an integer in [0, {X.shape[1]}); got {feature!r}")
    Yv = X if Y is None else Y
    K = ard_rbf_kernel(X, Y, scales=scales) if K is None else _kernel_shape(
        K, "K", (X.shape[0], Yv.shape[0]))
    diff = X[:, feature, None] - Yv[None, :, feature]
    return -(diff * diff) * K


def ard_rbf_gradient_contract(X, Y, scales, G, *, K=None, wrt: str = "scales") -> np.ndarray:
    """Contract the ARD gradient with a matrix: ``v_d = sum_ij G_ij dK_ij / ds_d``.

    With ``H = G * K`` (elementwise),

    .. math::

        v_d = -\\sum_{ij} H_{ij} (x_{id} - y_{jd})^2
            = -\\Bigl(\\sum_i x_{id}^2 (H 1)_i + \\sum_j y_{jd}^2 (H' 1)_j
              - 2 \\sum_i x_{id} (H Y)_{id}\\Bigr),

    computed in ``O(n m d)`` time and ``O(n m)`` memory, without the (d, n, m) tensor (the
    expanded form is used on centred data when there are more than 32 features, the direct
    sum otherwise). This is what a hyperparameter gradient needs: for an objective ``L(K)``,
    ``dL/ds = ard_rbf_gradient_contract(X, Y, s, dL/dK)``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d) or None
        ``None`` means ``Y = X``.
    scales : float or array_like of shape (d,)
        Positive per-feature scales ``s_d``.
    G : array_like of shape (n, m)
        The contraction weights (e.g. ``dL/dK``).
    K : array_like of shape (n, m), optional
        ``ard_rbf_kernel(X, Y, scales=scales)`` if already computed.
    wrt : {"scales", "log_scales"}
        Differentiate w.r.t. ``s_d`` or ``log s_d`` (the latter multiplies by ``s_d``).

    Returns
    -------
    ndarray of shape (d,)
    """
    X, Y = _pair(X, Y)
    check_choice(wrt, "wrt", {"scales", "log_scales"})
    s = _scales(scales, X.shape[1])
    Yv = X if Y is None else Y
    shape = (X.shape[0], Yv.shape[0])
    G = _kernel_shape(G, "G", shape)
    K = np.exp(-_sqdist(X, Y, s)) if K is None else _kernel_shape(K, "K", shape)
    H = G * K
    if X.shape[1] <= _DIRECT_MAX_FEATURES:
        v = np.empty(X.shape[1])
        for k in range(X.shape[1]):
            diff = X[:, k, None] - Yv[None, :, k]
            v[k] = -np.sum(H * diff * diff)
    else:
        mu = X.mean(axis=0)
        Xc, Yc = X - mu, Yv - mu
        v = -((Xc * Xc).T @ H.sum(axis=1) + (Yc * Yc).T @ H.sum(axis=0)
              - 2.0 * np.einsum("id,id->d", Xc, H @ Yc))
    return v * s if wrt == "log_scales" else v


def _kernel_shape(A, name: str, shape: tuple[int, int]) -> np.ndarray:
    A = as_matrix(A, name)
    if A.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {A.shape}")
    return A


# -- conformal transform --------------------------------------------------------------------

def conformal_basis(X, cores, *, gamma) -> np.ndarray:
    """The matrix ``K_1`` of the MCM notes (eq. 34): ``[1, k_1(x_j, a_1), ..., k_1(x_j, a_ec)]``.

    ``c = K_1 alpha`` with ``alpha = (alpha_0, alpha_1, ..., alpha_ec)`` gives the conformal
    factor at every row of ``X``; the kernel optimization of Xiong et al. / Jayadeva et al.
    solves a generalized eigenproblem in ``alpha`` with ``P = K_1' B_0 K_1`` and
    ``Q = K_1' (W_0 + D I) K_1``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    cores : array_like of shape (n_ec, d)
        The empirical cores ``a_i`` (e.g. the support vectors of a first fit).
    gamma : float
        Width of ``k_1(x, a) = exp(-gamma ||x - a||^2)``, > 0.

    Returns
    -------
    ndarray of shape (n, n_ec + 1)
    """
    X, A = _pair(X, cores, "X", "cores")
    K1 = rbf_kernel(X, A, gamma=gamma)
    return np.hstack([np.ones((X.shape[0], 1)), K1])


def conformal_factor(X, cores, *, alphas, alpha0, gamma) -> np.ndarray:
    """The conformal factor ``c(x) = alpha_0 + sum_i alpha_i exp(-gamma ||x - a_i||^2)``.

    Parameters
    ----------
    X : array_like of shape (n, d)
    cores : array_like of shape (n_ec, d)
        Empirical cores ``a_i``.
    alphas : array_like of shape (n_ec,)
        Combination coefficients ``alpha_i``.
    alpha0 : float
        Constant term ``alpha_0``.
    gamma : float
        Width of the core kernel ``k_1``, > 0.

    Returns
    -------
    ndarray of shape (n,)
    """
    X, A = _pair(X, cores, "X", "cores")
    alphas = as_vector(alphas, "alphas", length=A.shape[0], length_of="cores")
    alpha0 = finite_scalar(_as_number(alpha0, "alpha0"), "alpha0")
    return alpha0 + rbf_kernel(X, A, gamma=gamma) @ alphas


def conformal_kernel(K0, c_x, c_y=None) -> np.ndarray:
    """Conformally transformed kernel ``K[i, j] = c(x_i) c(y_j) K0[i, j]``.

    That is ``diag(c_x) K0 diag(c_y)``; with ``c_y=None`` (``Y = X``) the result is exactly
    symmetric when ``K0`` is, and positive semi-definite when ``K0`` is and ``c`` is real.

    Parameters
    ----------
    K0 : array_like of shape (n, m)
        The basic kernel matrix ``k_0(x_i, y_j)``.
    c_x : array_like of shape (n,)
        Conformal factor at the rows.
    c_y : array_like of shape (m,), optional
        Conformal factor at the columns; ``None`` uses ``c_x`` (``K0`` must be square).

    Returns
    -------
    ndarray of shape (n, m)
    """
    K0 = as_matrix(K0, "K0")
    c_x = as_vector(c_x, "c_x", length=K0.shape[0], length_of="K0")
    if c_y is None:
        if K0.shape[0] != K0.shape[1]:
            raise ValueError(f"c_y is required when K0 is not square; K0 has shape {K0.shape}")
        c_y = c_x
    else:
        c_y = as_vector(c_y, "c_y", length=K0.shape[1])
    return K0 * np.outer(c_x, c_y)  # c_i c_j == c_j c_i exactly: symmetry is kept


class ConformalKernel:
    """A basic kernel ``k_0`` magnified around empirical cores: ``c(x) c(y) k_0(x, y)``.

    Parameters
    ----------
    base : callable or str
        The basic kernel ``base(X, Y=None) -> ndarray``, or a name for
        :func:`kernel_from_name` (then ``base_params`` are its parameters).
    cores, alphas, alpha0, gamma
        The conformal factor ``c`` (see :func:`conformal_factor`): empirical cores ``a_i``
        of shape (n_ec, d), their coefficients ``alpha_i`` (n_ec,), the constant term
        ``alpha_0`` and the width of the core kernel ``k_1(x, a) = exp(-gamma ||x - a||^2)``.
    base_params : dict, optional
        Parameters of a named base kernel.

    Examples
    --------
    Train on ``K = ck(X_train)`` and predict with ``ck(X_test, X_train)`` (test-vs-train).
    """

    def __init__(self, base, cores, *, alphas, alpha0, gamma, base_params: dict | None = None):
        if isinstance(base, str):
            base = kernel_from_name(base, **(base_params or {}))
        elif not callable(base):
            raise ValueError(f"base must be a kernel callable or name; got {type(base).__name__}")
        self.base = base
        self.cores = as_matrix(cores, "cores")
        self.alphas = as_vector(alphas, "alphas", length=self.cores.shape[0],
                                length_of="cores")
        self.alpha0 = finite_scalar(_as_number(alpha0, "alpha0"), "alpha0")
        self.gamma = positive_scalar(_as_number(gamma, "gamma"), "gamma")

    @classmethod
    def from_alpha_vector(cls, base, cores, alpha, *, gamma, base_params=None):
        """Build from the stacked vector ``alpha = (alpha_0, alpha_1, ..., alpha_ec)`` of
        eq. 34 (the generalized eigenvector of the kernel optimization)."""
        alpha = as_vector(alpha, "alpha")
        return cls(base, cores, alphas=alpha[1:], alpha0=alpha[0], gamma=gamma,
                   base_params=base_params)

    def factor(self, X) -> np.ndarray:
        """``c(x)`` at every row of ``X``."""
        return conformal_factor(X, self.cores, alphas=self.alphas, alpha0=self.alpha0,
                                gamma=self.gamma)

    def __call__(self, X, Y=None) -> np.ndarray:
        """``diag(c(X)) K_0(X, Y) diag(c(Y))``; ``Y=None`` means ``Y = X``."""
        X = as_matrix(X, "X")
        K0 = np.asarray(self.base(X) if Y is None else self.base(X, Y), dtype=float)
        c_x = self.factor(X)
        c_y = None if Y is None else self.factor(Y)
        return conformal_kernel(K0, c_x, c_y)

    def __repr__(self) -> str:
        return (f"ConformalKernel(base={self.base!r}, n_cores={self.cores.shape[0]}, "
                f"alpha0={self.alpha0:g}, gamma={self.gamma:g})")


# -- named kernels --------------------------------------------------------------------------

class Kernel:
    """A named kernel callable ``kernel(X, Y=None) -> K`` with its parameters.

    For ``name="precomputed"`` the first argument *is* the kernel matrix (train-vs-train to
    fit, test-vs-train to predict) and is returned as a validated float matrix.
    """

    def __init__(self, name: str, fn: Callable, params: dict):
        self.name, self._fn, self.params = name, fn, dict(params)

    def __call__(self, X, Y=None) -> np.ndarray:
        return self._fn(X, Y)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items())
        return f"Kernel({self.name!r}{', ' if args else ''}{args})"


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape})"
    return repr(v)


_REQUIRED = {"linear": (), "rbf": ("gamma",), "ard": ("scales",), "precomputed": (),
             "conformal": ("base", "cores", "alphas", "alpha0", "gamma")}
_OPTIONAL = {"conformal": ("base_params",)}


def kernel_from_name(name: str, **params) -> Kernel:
    """Build a kernel callable from its name (for estimators taking ``kernel="rbf"``, ...).

    Parameters
    ----------
    name : {"linear", "rbf", "ard", "precomputed", "conformal"}
    **params
        ``rbf``: ``gamma``; ``ard``: ``scales``; ``conformal``: the arguments of
        :class:`ConformalKernel` (``base``, ``cores``, ``alphas``, ``alpha0``, ``gamma``,
        optionally ``base_params``).

    Returns
    -------
    Kernel
        ``kernel(X, Y=None) -> ndarray`` (validated at construction: bad parameters raise
        ``ValueError`` naming them).
    """
    check_choice(name, "name", KERNEL_NAMES)
    allowed = set(_REQUIRED[name]) | set(_OPTIONAL.get(name, ()))
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for the {name!r} kernel; expected "
                         f"{sorted(allowed) or 'none'}")
    missing = [p for p in _REQUIRED[name] if p not in params]
    if missing:
        raise ValueError(f"the {name!r} kernel needs parameter(s) {missing}")
    if name == "linear":
        return Kernel(name, linear_kernel, {})
    if name == "rbf":
        gamma = positive_scalar(_as_number(params["gamma"], "gamma"), "gamma")
        return Kernel(name, lambda X, Y=None: rbf_kernel(X, Y, gamma=gamma), {"gamma": gamma})
    if name == "ard":
        raw = params["scales"]
        if np.ndim(raw) == 0:
            s = positive_scalar(_as_number(raw, "scales"), "scales")
        else:
            s = as_vector(raw, "scales")
            _scales(s, s.size)
        return Kernel(name, lambda X, Y=None: ard_rbf_kernel(X, Y, scales=s), {"scales": s})
    if name == "precomputed":
        return Kernel(name, _precomputed, {})
    ck = ConformalKernel(params["base"], params["cores"], alphas=params["alphas"],
                         alpha0=params["alpha0"], gamma=params["gamma"],
                         base_params=params.get("base_params"))
    return Kernel(name, ck, {"gamma": ck.gamma, "alpha0": ck.alpha0,
                             "n_cores": ck.cores.shape[0]})


def _precomputed(K, Y=None) -> np.ndarray:
    if Y is not None:
        raise ValueError("a precomputed kernel takes the kernel matrix as its only argument; "
                         "Y must be None")
    return as_matrix(K, "K")


def gamma_value(gamma, X, name: str = "gamma", choices=("scale", "auto")) -> float:
    """The RBF width for the data ``X``, as scikit-learn's ``SVC`` reads ``gamma``.

    A positive number is returned as given; ``"scale"`` is ``1 / (n_features * X.var())``
    and ``"auto"`` is ``1 / n_features`` (both 1 when ``X`` has no variance or no entries).
    ``choices`` restricts the accepted strings; ``name`` is used in error messages.
    """
    if isinstance(gamma, str):
        check_choice(gamma, name, tuple(choices))
        X = np.asarray(X)
        var = (float(X.var()) if X.size else 0.0) if gamma == "scale" else 1.0
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return positive_scalar(gamma, name)
