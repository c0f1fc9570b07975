"""Checks of the controls shared by the age-paths and the ACS baselines: the age range, the
ACS grid and the ACS stopping rule."""

from __future__ import annotations

import numpy as np

from ..core.validation import as_vector, positive_int, positive_scalar

__all__ = ["check_age_range", "check_acs_controls", "acs_ages"]


def check_age_range(age_min, age_max) -> tuple[float, float]:
    """``0 < age_min < age_max``, both finite."""
    age_min = positive_scalar(age_min, "age_min")
    age_max = positive_scalar(age_max, "age_max")
    if age_min >= age_max:
        raise ValueError(f"age_min must be < age_max; got {age_min} >= {age_max}")
    return age_min, age_max


def check_acs_controls(max_iter, tol) -> tuple[int, float]:
    """``max_iter`` an integer >= 1 and ``tol`` > 0 (shared by the ACS entry points)."""
    return positive_int(max_iter, "max_iter"), positive_scalar(tol, "tol")


def acs_ages(ages, age_min, age_max, age_step) -> np.ndarray:
    """The ages of an ACS baseline: ``ages`` as given, or the grid ``age_min, age_min +
    age_step, ...`` below ``age_max``, then ``age_max`` (the paper's grid, Appendix D.2)."""
    if ages is not None:
        if age_min is not None or age_max is not None:
            raise ValueError("give either ages or age_min and age_max, not both")
        ages = as_vector(ages, "ages")
        if ages.size == 0 or np.any(ages <= 0):
            raise ValueError("ages must be a non-empty array of positive values")
        return ages
    if age_min is None or age_max is None:
        raise ValueError("age_min and age_max must be given (or the ages themselves)")
    age_min, age_max = check_age_range(age_min, age_max)
    step = positive_scalar(age_step, "age_step")
    return np.unique(np.r_[np.arange(age_min, age_max, step), age_max])
