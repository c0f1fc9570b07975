"""EEG-like synthetic data (the paper's EEG set is proprietary)."""

from __future__ import annotations

import math

import numpy as np

from ..core.validation import positive_int

__all__ = ["eeg_like"]


def eeg_like(*, n_objects=196, n_channels=66, n_samples=100, target_fraction=0.5,
             evoked_amplitude=1.0, random_state):
    r"""Synthetic evoked-potential data shaped like the paper's EEG set (section VI.A).

    Each object is one EEG fragment: ``n_channels`` channels x ``n_samples`` time samples,
    concatenated channel by channel into ``n = n_channels * n_samples`` features. The
    generator:

    - **noise** = a few shared latent sources (spatial pattern x slowly varying time course,
      with variances falling geometrically, so that the eigenvalues of ``X X'`` fall quickly
      as in the paper) + spatially smooth channel noise (covariance ``exp(-|c - c'| / 8)``
      over the channel index) that is AR(1) in time (coefficient 0.9);
    - **targets** (``y = +1``) add an evoked component: a positive bump peaking about 30% of
      the way into the fragment (a P300-like wave), strongest on a band of channels;
      non-targets (``y = -1``) do not.

    Parameters
    ----------
    n_objects, n_channels, n_samples : int
    target_fraction : float in (0, 1)
    evoked_amplitude : float
        Amplitude of the evoked bump relative to the unit noise scale.
    random_state : int or numpy.random.Generator
        Seed or generator of all the randomness (required: the data are reproducible).

    Returns
    -------
    X : ndarray of shape (n_objects, n_channels * n_samples)
    y : ndarray of shape (n_objects,) with values -1 / +1 (both present)
    """
    from ..datasets import as_generator

    rng = as_generator(random_state, "random_state")
    n_objects = positive_int(n_objects, "n_objects")
    n_channels = positive_int(n_channels, "n_channels")
    n_samples = positive_int(n_samples, "n_samples")
    if not 0 < target_fraction < 1:
        raise ValueError(f"target_fraction must be in (0, 1); got {target_fraction}")
    if n_objects < 2:
        raise ValueError(f"n_objects must be at least 2; got {n_objects}")
    n_pos = min(n_objects - 1, max(1, int(round(target_fraction * n_objects))))
    y = np.full(n_objects, -1.0)
    y[rng.permutation(n_objects)[:n_pos]] = 1.0
    ch = np.arange(n_channels)
    t = np.arange(n_samples) / n_samples
    # spatially smooth channel noise, AR(1) in time
    C = np.exp(-np.abs(ch[:, None] - ch[None, :]) / 8.0)
    Lc = np.linalg.cholesky(C + 1e-10 * np.eye(n_channels))
    e = rng.standard_normal((n_objects, n_samples, n_channels)) @ Lc.T
    noise = np.empty_like(e)
    noise[:, 0] = e[:, 0]
    rho = 0.9
    for k in range(1, n_samples):
        noise[:, k] = rho * noise[:, k - 1] + math.sqrt(1 - rho ** 2) * e[:, k]
    # shared latent sources with geometrically falling variance
    n_src = 8
    for r in range(n_src):
        pattern = np.cos(math.pi * (r + 1) * (ch + 0.5) / n_channels) + 0.3
        course = np.sin(2 * math.pi * (r + 1) * t + rng.uniform(0, 2 * math.pi))
        amp = rng.standard_normal(n_objects) * 6.0 * 0.55 ** r
        noise += amp[:, None, None] * course[None, :, None] * pattern[None, None, :]
    # evoked component for targets
    bump = np.exp(-0.5 * ((t - 0.3) / 0.05) ** 2)
    topo = np.exp(-0.5 * ((ch - 0.6 * n_channels) / (0.15 * n_channels)) ** 2)
    evoked = evoked_amplitude * bump[:, None] * topo[None, :]
    noise[y > 0] += evoked[None]
    X = noise.transpose(0, 2, 1).reshape(n_objects, n_channels * n_samples)
    return X, y
