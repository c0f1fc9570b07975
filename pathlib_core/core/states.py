"""Where each index of a box-constrained problem sits: the one index-state enum.

Every active-set and homotopy engine labels each variable (a dual coefficient, a Lasso
coefficient, a weight) by one :class:`IndexState`: strictly between its bounds, at its lower
bound, at its upper bound, or fixed (``lb == ub``). State arrays hold the values as ``int8``.

numpy compares an array or a numpy scalar with an :class:`~enum.IntEnum` member several times
more slowly than with a plain ``int`` (the member is an ``int`` subclass and takes numpy's
generic conversion path), so the module also offers the values as plain ints,
:data:`FREE`, :data:`LOWER`, :data:`UPPER` and :data:`FIXED`, for the engines' inner loops and
for compiled (numba) code.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["IndexState", "FREE", "LOWER", "UPPER", "FIXED", "STATE_NAMES"]


class IndexState(IntEnum):
    """The state of one index of a box-constrained problem ``lb <= x <= ub``.

    Attributes
    ----------
    FREE : 0
        Strictly between its bounds: the index is in the free (active) set.
    LOWER : 1
        At its lower bound.
    UPPER : 2
        At its upper bound.
    FIXED : 3
        Fixed because its bounds are equal.
    """

    FREE = 0
    LOWER = 1
    UPPER = 2
    FIXED = 3


#: :class:`IndexState` values as plain ints (fast comparisons with int8 state arrays)
FREE, LOWER, UPPER, FIXED = (int(s) for s in IndexState)
#: lower-case name of each state value (event records: ``{"from": "free", "to": "upper"}``)
STATE_NAMES = {int(s): s.name.lower() for s in IndexState}
