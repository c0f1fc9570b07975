r"""Self-paced regularizers: the SP-regularizer ``f(v, lambda)``, its weights ``v*`` and
their derivatives (Section 2.2 of Qu, Li, Zhao and Gu, NeurIPS 2022).

Self-paced learning trains a model ``w`` together with sample weights ``v in [0, 1]^n``,

.. math::

    \min_{w,\; v \in [0,1]^n} \; \mathcal{L}(w, v) = R(w) + \sum_{i=1}^n
    \bigl[ v_i \, \ell_i(w) + f(v_i, \lambda) \bigr]                                  \qquad (2)

where ``f`` is a *self-paced regularizer* and ``lambda > 0`` is the *age*. For fixed ``w`` the
problem in ``v`` separates and has a closed-form minimizer ``v*(l, lambda)``
(:func:`sp_weights`). The mixture regularizer has one parameter of its own, the paper's
:math:`\gamma`; it is called ``mixture`` throughout the package (``mixture`` is reserved for
the width of a kernel).

The age-paths follow branches of ``v*`` on which each sample stays in one set: ``E``
(``v = 1``, or ``1 - l / lambda`` for the linear regularizer), ``M`` (the interior branch of
the mixture regularizer) or ``D`` (``v = 0``); :func:`sp_weights_derivatives` gives ``v``
and its derivatives on a fixed branch, the terms of the ODE (6).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.validation import as_vector, check_choice, positive_scalar
from .docstrings import fill_doc

__all__ = ["REGULARIZERS", "PATH_REGULARIZERS", "sp_regularizer", "sp_weights",
           "sp_weights_derivatives"]


#: Self-paced regularizers with a closed-form minimizer (:func:`sp_weights`).
REGULARIZERS = ("hard", "linear", "mixture", "log")


#: Regularizers supported by :func:`age_path` (``v*`` continuous in the loss).
PATH_REGULARIZERS = ("linear", "mixture")


_E, _M, _D = 0, 1, 2  # sample partition: easy (v = 1 or 1 - l/lam), mixed, difficult (v = 0)


def _check_reg(regularizer, mixture, age=None):
    check_choice(regularizer, "regularizer", REGULARIZERS)
    if regularizer == "mixture":
        if mixture is None:
            raise ValueError("mixture must be given (> 0) with the mixture regularizer")
        mixture = positive_scalar(mixture, "mixture")
    if regularizer == "log" and age is not None and np.any(np.asarray(age) >= 1):
        raise ValueError("age must be in (0, 1) with the LOG regularizer (zeta = 1 - age)")
    return mixture


@fill_doc
def sp_regularizer(v, age, *, regularizer: str, mixture: float | None = None) -> np.ndarray:
    r"""The SP-regularizer ``f(v, lambda)`` (Section 2.2 of the paper).

    - hard: ``f = -lambda v``;
    - linear: ``f = lambda (v^2 / 2 - v)``;
    - mixture: ``f = gamma^2 / (v + gamma / lambda)``;
    - LOG (Jiang et al. 2014): ``f = zeta v - zeta^v / log(zeta)`` with ``zeta = 1 - lambda``,
      ``0 < lambda < 1`` (the paper writes it in a KL form; the minimizer is the same family).

    In formulas, with :math:`\lambda` the age and :math:`\zeta = 1 - \lambda`,

    .. math::

        f_{\mathrm{hard}}(v, \lambda) = -\lambda v, \qquad
        f_{\mathrm{lin}}(v, \lambda) = \lambda\bigl(\tfrac12 v^2 - v\bigr), \qquad
        f_{\mathrm{mix}}(v, \lambda) = \frac{\gamma^2}{v + \gamma / \lambda}, \qquad
        f_{\mathrm{LOG}}(v, \lambda) = \zeta v - \frac{\zeta^v}{\log \zeta};

    these are the terms :math:`f(v_i, \lambda)` of the SPL objective (2).

    Parameters
    ----------
    v : array_like of float
        Sample weights, any shape (a scalar is accepted). Not checked to lie in
        :math:`[0, 1]`; the formula is evaluated as written.
    {regularizer_at_age}

    Returns
    -------
    ndarray of float
        :math:`f(v, \lambda)` with the shape of ``v`` (a NumPy scalar for scalar ``v``).

    Raises
    ------
    ValueError
        ``age <= 0`` or not finite, an unknown ``regularizer``, ``mixture`` missing or
        ``<= 0`` with the mixture regularizer, ``age >= 1`` with the LOG regularizer.
    """
    age = positive_scalar(age, "age")
    mixture = _check_reg(regularizer, mixture, age)
    v = np.asarray(v, dtype=float)
    if regularizer == "hard":
        return -age * v
    if regularizer == "linear":
        return age * (0.5 * v ** 2 - v)
    if regularizer == "mixture":
        return mixture ** 2 / (v + mixture / age)
    zeta = 1.0 - age
    return zeta * v - zeta ** v / math.log(zeta)


@fill_doc
def sp_weights(loss, age, *, regularizer: str, mixture: float | None = None) -> np.ndarray:
    r"""Closed-form ``v*(l, lambda) = argmin_{v in [0, 1]} v l + f(v, lambda)``.

    - hard: ``v = 1`` if ``l < lambda`` else ``0``;
    - linear: ``v = max(0, 1 - l / lambda)``;
    - mixture: ``v = 1`` if ``sqrt(l) <= lambda gamma / (lambda + gamma)``, ``0`` if
      ``sqrt(l) >= lambda``, else ``gamma / sqrt(l) - gamma / lambda``;
    - LOG: ``v = log(l + zeta) / log(zeta)`` if ``l < lambda`` else ``0``.

    This is the closed-form ``v``-step of alternate convex search: for fixed ``w`` the SPL
    objective (2) separates over the samples, and each weight solves

    .. math::

        v^*(\ell_i, \lambda) = \operatorname*{arg\,min}_{v \in [0, 1]} \; v\,\ell_i
            + f(v, \lambda)

    with :math:`f` of :func:`sp_regularizer`.

    Parameters
    ----------
    loss : array_like of float
        Per-sample losses :math:`\ell_i \ge 0`, any shape (a scalar is accepted).
    {regularizer_at_age}

    Returns
    -------
    ndarray of float
        The weights :math:`v^* \in [0, 1]`, with the shape of ``loss``.

    Raises
    ------
    ValueError
        A negative or non-finite loss, ``age <= 0`` or not finite, an unknown
        ``regularizer``, ``mixture`` missing or ``<= 0`` with the mixture regularizer,
        ``age >= 1`` with the LOG regularizer.
    """
    age = positive_scalar(age, "age")
    mixture = _check_reg(regularizer, mixture, age)
    loss = np.asarray(loss, dtype=float)
    if np.any(loss < 0) or not np.all(np.isfinite(loss)):
        raise ValueError("loss must be finite and >= 0")
    if regularizer == "hard":
        return (loss < age).astype(float)
    if regularizer == "linear":
        return np.maximum(0.0, 1.0 - loss / age)
    if regularizer == "mixture":
        s = np.sqrt(loss)
        with np.errstate(divide="ignore"):
            v = np.where(s > 0, mixture / np.where(s > 0, s, 1.0) - mixture / age, 1.0)
        return np.clip(v, 0.0, 1.0)
    zeta = 1.0 - age
    with np.errstate(invalid="ignore"):
        v = np.where(loss < age, np.log(np.minimum(loss, age) + zeta) / math.log(zeta), 0.0)
    return np.clip(v, 0.0, 1.0)


def _partition(loss, age, regularizer, mixture) -> np.ndarray:
    """Set of each sample (E, M, D) by the partition rule (Figure 3)."""
    part = np.full(loss.shape, _E, dtype=np.int8)
    if regularizer == "linear":
        part[loss >= age] = _D
    else:
        s = np.sqrt(loss)
        lo = age * mixture / (age + mixture)
        part[s > lo] = _M
        part[s >= age] = _D
    return part


def sp_weights_derivatives(loss, age, part, *, regularizer: str, mixture=None):
    """``v``, ``dv/dl`` and ``dv/dlambda`` on the branch of ``v*`` given by ``part``.

    ``part`` holds 0 (E: ``v = 1``, or ``1 - l/lambda`` for the linear regularizer), 1 (M, the
    interior branch of the mixture regularizer) or 2 (D: ``v = 0``) for each sample.
    Only the ``"linear"`` and ``"mixture"`` regularizers have such branches.
    """
    check_choice(regularizer, "regularizer", ("linear", "mixture"))
    mixture = _check_reg(regularizer, mixture)
    loss = as_vector(loss, "loss")
    age = positive_scalar(age, "age")
    part = np.asarray(part)
    if part.shape != loss.shape or not np.isin(part, (_E, _M, _D)).all():
        raise ValueError(f"part must hold 0, 1 or 2 for each of the {loss.size} losses")
    return _sp_weights_derivatives(loss, age, part, regularizer, mixture)


def _sp_weights_derivatives(loss, age, part, regularizer, mixture):
    """:func:`sp_weights_derivatives` for trusted inputs (the ODE's right-hand side)."""
    v = np.zeros_like(loss)
    dl = np.zeros_like(loss)
    dlam = np.zeros_like(loss)
    e = part == _E
    if regularizer == "linear":
        v[e] = 1.0 - loss[e] / age
        dl[e] = -1.0 / age
        dlam[e] = loss[e] / age ** 2
    else:
        m = part == _M
        v[e] = 1.0
        s = np.maximum(np.sqrt(loss[m]), 1e-100)  # M has sqrt(l) > 0; guard Newton trials
        v[m] = mixture / s - mixture / age
        dl[m] = -0.5 * mixture / s ** 3
        dlam[m] = mixture / age ** 2
    return v, dl, dlam


def _sp_slope(loss, age, regularizer, mixture, widen: float = 0.0) -> np.ndarray:
    """``|d v*(l, lambda) / d l|`` at the losses (0 where ``v*`` is flat or a step); with
    ``widen``, the sloped branch extends that far (relative) past its thresholds (a loss
    within rounding of a threshold is on either side)."""
    out = np.zeros_like(loss)
    hi = age * (1.0 + widen)
    if regularizer == "linear":
        out[loss < hi] = 1.0 / age
    elif regularizer == "mixture":
        s = np.sqrt(loss)
        m = (s > age * mixture / (age + mixture) * (1.0 - widen)) & (s < hi)
        out[m] = 0.5 * mixture / (loss[m] * s[m])
    elif regularizer == "log":
        zeta = 1.0 - age
        m = loss < age
        out[m] = 1.0 / ((loss[m] + zeta) * abs(math.log(zeta)))
    return out
