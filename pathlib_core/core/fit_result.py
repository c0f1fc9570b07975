"""The one convention of fit results: a record in the style of scipy's ``OptimizeResult``.

Every fit of the package (one QP, one MCM linear program, one selective-ridge fit, one run of
alternate convex search, ...) returns a dataclass that derives from :class:`FitResult`. Its
own fields say what the fit produced (``coef``, ``intercept``, ``dual``, ...); the base adds
what :class:`scipy.optimize.OptimizeResult` offers, under scipy's names:

``success``
    Whether the fit met its own termination test (an optimality certificate, a convergence
    test). Derived from ``status``.
``status``
    A short word: ``"optimal"`` or ``"converged"`` on success; otherwise what stopped the fit
    (``"max_iter"``, ``"infeasible"``, ...).
``message``
    A sentence for people.
``nit``
    Iterations, an alias of the record's ``n_iter``.
``fun``
    The objective value at the returned point, an alias of ``objective`` where the record has
    one.

The record is also read like scipy's (a ``dict`` there): ``res["coef"]``, ``"coef" in res``,
``res.keys()``, ``dict(res.items())``; and its ``repr`` lists the fields one per line, as
scipy's does. It stays a dataclass, so the fields are typed, documented and compared.

A subclass is declared ``@dataclass(repr=False)`` (the ``repr`` comes from here) and provides
``status`` (a field or a property); it overrides ``fun`` or ``nit`` when its objective or
iteration count is stored under another name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["FitResult", "SUCCESS_STATUSES"]

#: The values of ``status`` that mean ``success``.
SUCCESS_STATUSES = frozenset({"optimal", "converged"})

_MESSAGES = {
    "optimal": "Optimization terminated successfully (optimality conditions met).",
    "converged": "The iteration converged (its stopping rule was met).",
    "max_iter": "The iteration limit was reached before the stopping rule was met.",
    "infeasible": "The problem is infeasible.",
    "unbounded": "The problem is unbounded.",
}

_DERIVED = ("message", "success", "status", "fun", "nit")


class FitResult:
    """Base of the result record of one fit (see the module docstring)."""

    @property
    def success(self) -> bool:
        """True when the fit met its termination test (``status`` is optimal or converged)."""
        return str(self.status) in SUCCESS_STATUSES

    @property
    def message(self) -> str:
        """A sentence describing how the fit ended."""
        info = getattr(self, "info", None)
        if isinstance(info, dict) and isinstance(info.get("message"), str):
            return info["message"]
        status = str(self.status)
        return _MESSAGES.get(status, f"The fit ended with status {status!r}.")

    @property
    def nit(self) -> int:
        """Iterations of the fit (scipy's name for ``n_iter``)."""
        return int(self.n_iter)

    @property
    def fun(self) -> float:
        """Objective value at the returned point (scipy's name for ``objective``)."""
        return float(self.objective)

    # -- mapping access, as scipy's OptimizeResult (a dict) -------------------------------

    def _field_names(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self) if not f.name.startswith("_")]

    def keys(self) -> list[str]:
        """The record's names: scipy's (``message``, ``success``, ...) then its own fields."""
        own = self._field_names()
        return [k for k in _DERIVED if k not in own and self._has(k)] + own

    def _has(self, key: str) -> bool:
        try:
            getattr(self, key)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return False
        return True

    def items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs in the order of :meth:`keys`."""
        return [(k, getattr(self, k)) for k in self.keys()]

    def values(self) -> list[Any]:
        """Values in the order of :meth:`keys`."""
        return [getattr(self, k) for k in self.keys()]

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str) or key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.keys()

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if the record has ``key``, else ``default``."""
        return self[key] if key in self else default

    def __dir__(self) -> Iterator[str]:
        return iter(sorted(set(super().__dir__()) | set(self.keys())))

    def __repr__(self) -> str:
        keys = self.keys()
        if not keys:
            return f"{type(self).__name__}()"
        width = max(map(len, keys)) + 1
        lines = [f"{type(self).__name__}:"]
        for k in keys:
            lines.append(f"{k.rjust(width)}: {_short(getattr(self, k), width + 2)}")
        return "\n".join(lines)


def _short(value: Any, indent: int) -> str:
    """One field's value for :meth:`FitResult.__repr__` (long arrays and dicts abbreviated)."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8, edgeitems=3, precision=6,
                               max_line_width=88 - indent)
        return text.replace("\n", "\n" + " " * indent)
    if isinstance(value, dict):
        names = ", ".join(map(str, list(value)[:8]))
        more = ", ..." if len(value) > 8 else ""
        return f"{{{names}{more}}} ({len(value)} entries)" if value else "{}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"{type(value).__name__} of {len(value)}"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 200 else text[:197] + "..."
