"""Errors of the self-paced learning age-paths that are about the input.

Both are :class:`ValueError` (a different ``age_min``, ``C`` or scaling of the features is
the remedy) and :class:`~pathlib_core.core.exceptions.PathlibCoreError`; failures after the
input was accepted are :class:`~pathlib_core.core.exceptions.PathFollowingError` and
:class:`~pathlib_core.core.exceptions.SolverError`.
"""

from __future__ import annotations

from ..core.exceptions import PathlibCoreError

__all__ = ["DegenerateStartError", "IllPosedError"]


class DegenerateStartError(PathlibCoreError, ValueError):
    """The path cannot start at ``age_min``: no partial optimum exists there, or the one found
    is degenerate (the kernel SVM: samples of one class only keep a positive weight, or
    ``w = 0``). A larger ``age_min`` (more samples admitted) may work; callers that scan for a
    usable start catch this type instead of matching the message."""


class IllPosedError(PathlibCoreError, ValueError):
    """The weighted SVM dual at the start of the path cannot be resolved in double
    precision (its margins cancel to fewer than 8 significant digits)."""
