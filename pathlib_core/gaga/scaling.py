"""Exact power-of-two rescaling of the age-path problems, and the map back to the user's units.

The engines solve each problem in rescaled variables (columns of ``X``, ``y``, the kernel, the
age, divided by powers of two), which is exact in floating point: data that differ by powers
of two give paths that are the same bit for bit in the user's units. :func:`map_path` turns a
path traced in internal units into one in the user's.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.solution_path import Event, FunctionSegment, SolutionPath


def _pow2(x) -> np.ndarray:
    """The power of two nearest (in ratio) to each positive entry of ``x``; 1 for zeros.

    Exact: ``x * 2**k`` gives ``2**k`` times the result (the mantissa decides), so data that
    differ by a power of two are scaled to bit-identical internal problems.
    """
    m, e = np.frexp(np.asarray(x, dtype=float))
    e = np.where(m * m < 0.5, e - 1, e)
    return np.where(np.asarray(x) > 0, np.ldexp(1.0, e), 1.0)


def _pow4(x: float) -> float:
    """The power of 4 nearest (in ratio) to ``x > 0`` (1 for 0); exact under ``x 4**k``."""
    if not x > 0:
        return 1.0
    e = math.frexp(x)[1] - 1  # 2**e <= x < 2**(e + 1)
    lo = e - (e % 2)  # 4**(lo / 2) <= x < 4**(lo / 2 + 1)
    return math.ldexp(1.0, lo) if x * x < math.ldexp(1.0, 2 * lo + 2) else math.ldexp(1.0, lo + 2)


def _rms_columns(X) -> np.ndarray:
    """Root mean square of each column, without overflow or underflow."""
    big = np.max(np.abs(X), axis=0)
    safe = np.where(big > 0, big, 1.0)
    return big * np.sqrt(np.mean((X / safe) ** 2, axis=0))


class _InUserUnits:
    """A piece of an internal path read in the user's units (a picklable callable)."""

    def __init__(self, segment, factor: float, rec_map):
        self.segment, self.factor, self.rec_map = segment, factor, rec_map

    def __call__(self, t: float):
        return self.rec_map(self.segment.evaluate(t / self.factor))


def map_path(path: SolutionPath, factor: float, rec_map, residual, info) -> SolutionPath:
    """``path`` traced in internal units as a path in the user's units.

    The parameter is multiplied by ``factor`` (a power of two: exact) and every record mapped
    by ``rec_map``; ``residual(t, record)`` is the certificate in the user's units and
    ``info`` the path's run statistics.
    """
    segs = [FunctionSegment(s.lo * factor, s.hi * factor, _InUserUnits(s, factor, rec_map),
                            rec_lo=rec_map(s.rec_lo), rec_hi=rec_map(s.rec_hi), kind=s.kind)
            for s in path.segments]
    events = [Event(e.param * factor, e.kind, e.indices, e.info) for e in path.events]
    return SolutionPath(path.param_name, segs, events, residual=residual,
                        direction=path.direction, info=info)


def unchanged(record):
    """The identity map of records (a picklable ``rec_map`` for :func:`map_path`)."""
    return record
