"""The package's exception hierarchy.

Bad input is always a :class:`ValueError` that names the offending argument (raised at the
public edge by :mod:`pathlib_core.core.validation`). Everything that fails *after* the input
was accepted derives from :class:`PathlibCoreError`:

- :class:`PathFollowingError` -- a solution path cannot be continued (an unresolvable tie,
  a singular start, an integrator that gives up); :class:`HomotopyError` is the piecewise-
  linear engine's case of it;
- :class:`SolverError` -- an inner optimization (QP, LP, Newton) did not reach its
  certificate; :class:`QPSolverError` is the active-set QP's case of it.

Both failure families are also :class:`RuntimeError`, so ``except RuntimeError`` keeps
working. :class:`NotPSDError` is bad input (a kernel or Hessian that is not positive
semi-definite) and therefore a :class:`ValueError` as well as a package error.
"""

from __future__ import annotations

__all__ = [
    "PathlibCoreError",
    "PathFollowingError",
    "HomotopyError",
    "SolverError",
    "QPSolverError",
    "NotPSDError",
]


class PathlibCoreError(Exception):
    """Base class of every error raised by :mod:`pathlib_core` itself."""


class PathFollowingError(PathlibCoreError, RuntimeError):
    """A solution path cannot be continued past some parameter value."""


class HomotopyError(PathFollowingError):
    """The piecewise-linear path cannot be continued (unresolvable tie, singular start,
    infeasible problem)."""


class SolverError(PathlibCoreError, RuntimeError):
    """An inner solver stopped without reaching its optimality certificate."""


class QPSolverError(SolverError):
    """The active-set QP solver failed (iteration limit, cycling, singular working set)."""


class NotPSDError(PathlibCoreError, ValueError):
    """A matrix that must be positive semi-definite (a kernel, a QP Hessian) is not."""
