"""Showing an object in the running notebook: the one place that asks IPython.

:mod:`results` (verdict boxes) and :mod:`tables` (rendered tables) both display through
here, so neither imports the other for it.
"""

from __future__ import annotations

__all__ = ["in_kernel", "display"]


def in_kernel() -> bool:
    """Whether this code runs in an IPython kernel (a notebook)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def display(obj) -> None:
    """Show ``obj`` in a running IPython kernel (a notebook); elsewhere, do nothing."""
    if in_kernel():
        from IPython.display import display as _ipython_display

        _ipython_display(obj)
