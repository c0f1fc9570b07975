"""The one result type of every path algorithm in the project.

A solution path follows the optimal solution ``z*(t)`` of a problem while a scalar parameter
``t`` moves over an interval. Every path algorithm in :mod:`pathlib_core` returns a
:class:`SolutionPath`:

- ``param_name``: the parameter's name (``"C"``, ``"alpha"``, ``"C_unlabeled"``, ``"age"``, ...);
- ``breakpoints``: sorted increasing, both ends included; between two consecutive breakpoints
  the solution is one smooth piece (affine for the piecewise-linear homotopies, the dense output
  of an ODE solver for GAGA, a warm-started refit for rough paths);
- ``events``: what happened at each breakpoint (:class:`Event` with ``.param``, ``.kind``,
  ``.indices``);
- ``at(t)``: the solution record at any ``t`` in range;
- ``kkt_residuals()``: the largest optimality residual at each breakpoint.

A path may jump (the S3VM path, the GAGA age-path): at a jump two pieces meet at the same
parameter with different solutions. ``at(t)`` then returns, by default, the solution *after*
the jump in the order in which the algorithm traced the path (``direction``); ``side="left"``
and ``side="right"`` ask for the one-sided limits explicitly.

Solution records are model-specific dataclasses (for example ``SVMSolution(alpha,
intercept)``). Linear pieces interpolate every floating-point field of the record and keep
every other field (integer labels, boolean masks, strings) from the piece's left end.

Storing a path
--------------
``pickle.dumps(path)`` stores everything, including the functions a path holds (its residual
function and the evaluators of :class:`FunctionSegment` pieces, often closures made inside a
path function): they are stored by value through cloudpickle (see
:class:`~pathlib_core.core.io.ByValue`), and the loaded path behaves like the original.

:meth:`SolutionPath.to_json` stores data only: the breakpoints, the events, the solution at
every breakpoint (both sides at jumps), the residuals at the breakpoints and the run
statistics. :meth:`SolutionPath.from_json` rebuilds from it a path on which

- ``breakpoints``, ``events``, ``records()``, ``to_rows()`` and ``info`` are those of the
  original path, and ``kkt_residuals()`` returns the stored residuals (there is no residual
  function to evaluate anew);
- ``at(t)`` is exact on the pieces that were linear (:class:`LinearSegment`: the records at
  their ends determine them) and at every breakpoint; inside a piece that was a function of
  the parameter (a :class:`FunctionSegment`: an ODE solver's dense output, a refit) it raises
  ``ValueError``, because JSON holds only the piece's end points. Pickle such paths to keep
  their interiors.

Records come back as instances of their dataclass when its module is importable (a module of
:mod:`pathlib_core` or one already imported), with every array in its stored dtype;
otherwise as dicts of fields.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .io import ByValue, atomic_write_text, storing_by_value, to_jsonable

__all__ = [
    "Event",
    "Segment",
    "LinearSegment",
    "FunctionSegment",
    "SolutionPath",
    "lerp_record",
]


@dataclass(frozen=True)
class Event:
    """Something that happens at one parameter value of a path.

    Attributes
    ----------
    param : float
        Parameter value at which the event happens.
    kind : str
        What happens, e.g. ``"enter"`` (an index joins the free / active set), ``"leave"``
        (it leaves it), ``"jump"`` (the solution is discontinuous, e.g. labels flip),
        ``"turning"`` (a GAGA turning point), ``"restart"``, ``"start"``, ``"end"``.
    indices : tuple of int
        The indices concerned (samples or features).
    info : dict
        Model-specific details (e.g. ``{"from": "elbow", "to": "left"}``).
    """

    param: float
    kind: str
    indices: tuple[int, ...] = ()
    info: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "param", float(self.param))
        object.__setattr__(self, "indices", tuple(int(i) for i in self.indices))

    def to_dict(self) -> dict:
        return {"param": self.param, "kind": self.kind, "indices": list(self.indices),
                "info": to_jsonable(self.info)}


def _is_float_field(value) -> bool:
    if isinstance(value, float | np.floating):
        return True
    if isinstance(value, np.ndarray):
        return np.issubdtype(value.dtype, np.floating)
    return False


def lerp_record(rec0, rec1, w: float):
    """Interpolate two solution records: ``(1 - w) * rec0 + w * rec1`` field by field.

    Floating-point fields (Python floats and float arrays) are interpolated; every other field
    is taken from ``rec0``. Records may be dataclasses, dicts or plain arrays.
    """
    if w == 0.0:
        return rec0
    if w == 1.0:
        return rec1
    if isinstance(rec0, np.ndarray) or isinstance(rec0, float | np.floating):
        return (1.0 - w) * rec0 + w * rec1
    if dataclasses.is_dataclass(rec0):
        changes = {}
        for f in dataclasses.fields(rec0):
            if not f.init:
                continue
            a, b = getattr(rec0, f.name), getattr(rec1, f.name)
            if _is_float_field(a):
                changes[f.name] = (1.0 - w) * a + w * b
        return dataclasses.replace(rec0, **changes)
    if isinstance(rec0, dict):
        return {k: ((1.0 - w) * v + w * rec1[k]) if _is_float_field(v) else v
                for k, v in rec0.items()}
    raise TypeError(f"cannot interpolate records of type {type(rec0).__name__}")


class Segment:
    """One smooth piece of a path on ``[lo, hi]`` (``lo < hi``).

    Subclasses implement :meth:`evaluate`. ``rec_lo`` and ``rec_hi`` are the one-sided
    solutions at the two ends (the limits from inside the piece).
    """

    lo: float
    hi: float
    rec_lo: Any
    rec_hi: Any
    kind: str = "segment"

    def evaluate(self, t: float):  # pragma: no cover - interface
        raise NotImplementedError


class LinearSegment(Segment):
    """A piece on which the solution is affine in the parameter (exact interpolation)."""

    kind = "linear"

    def __init__(self, lo: float, hi: float, rec_lo, rec_hi):
        if not (hi > lo):
            raise ValueError(f"segment needs lo < hi; got [{lo}, {hi}]")
        self.lo, self.hi, self.rec_lo, self.rec_hi = float(lo), float(hi), rec_lo, rec_hi

    def evaluate(self, t: float):
        w = (t - self.lo) / (self.hi - self.lo)
        return lerp_record(self.rec_lo, self.rec_hi, min(1.0, max(0.0, w)))


class FunctionSegment(Segment):
    """A piece given by a callable ``fn(t) -> record`` (ODE dense output, warm refit, ...)."""

    def __init__(self, lo: float, hi: float, fn: Callable[[float], Any], *,
                 rec_lo=None, rec_hi=None, kind: str = "function"):
        if not (hi > lo):
            raise ValueError(f"segment needs lo < hi; got [{lo}, {hi}]")
        self.lo, self.hi, self.fn, self.kind = float(lo), float(hi), fn, kind
        self.rec_lo = fn(self.lo) if rec_lo is None else rec_lo
        self.rec_hi = fn(self.hi) if rec_hi is None else rec_hi

    def evaluate(self, t: float):
        if t == self.lo:
            return self.rec_lo
        if t == self.hi:
            return self.rec_hi
        return self.fn(t)

    # ``fn`` is often a closure: pickled by value (see pathlib_core.core.io.ByValue)
    def __getstate__(self):
        state = self.__dict__.copy()
        return state if storing_by_value() else ByValue(state)

    def __setstate__(self, state):
        self.__dict__.update(state)


class _StoredSegment(Segment):
    """A piece read back from JSON that was a function of the parameter: only its ends are
    known."""

    def __init__(self, lo: float, hi: float, rec_lo, rec_hi, kind: str, param_name: str):
        self.lo, self.hi, self.rec_lo, self.rec_hi = float(lo), float(hi), rec_lo, rec_hi
        self.kind, self.param_name = kind, param_name

    def evaluate(self, t: float):
        if t == self.lo:
            return self.rec_lo
        if t == self.hi:
            return self.rec_hi
        raise ValueError(
            f"{self.param_name}={t!r} lies inside the piece [{self.lo!r}, {self.hi!r}] (kind "
            f"{self.kind!r}), which was a function of the parameter; a path read from JSON "
            "knows such a piece at its ends only (pickle the path to keep its interior)")


class _PointSegment(Segment):
    """Degenerate path made of a single parameter value."""

    kind = "point"

    def __init__(self, t: float, rec):
        self.lo = self.hi = float(t)
        self.rec_lo = self.rec_hi = rec

    def evaluate(self, t: float):
        return self.rec_lo


class SolutionPath:
    """A solution path over one scalar parameter.

    Parameters
    ----------
    param_name : str
        Name of the parameter (``"C"``, ``"alpha"``, ``"age"``, ...).
    segments : sequence of Segment
        Contiguous pieces covering the parameter range: ``segments[k].hi ==
        segments[k + 1].lo`` after sorting by ``lo``.
    events : iterable of Event
        What happens at the breakpoints (sorted by parameter on construction).
    residual : callable, optional
        ``residual(t, record) -> float``, the largest optimality (KKT) residual of ``record``
        as a solution at parameter ``t``. Used by :meth:`kkt_residuals`.
    direction : {+1, -1}
        The order in which the algorithm traced the path: +1 for increasing parameter, -1 for
        decreasing. At a discontinuity, :meth:`at` returns the solution that comes later in
        this order.
    info : dict, optional
        Run statistics (timings, number of restarts, refactorizations, ...).

    Attributes
    ----------
    breakpoints : ndarray of shape (n_breakpoints,)
        Sorted increasing segment ends, both ends of the range included.
    events : list of Event
    """

    def __init__(self, param_name: str, segments: Sequence[Segment], events: Iterable[Event] = (),
                 *, residual: Callable[[float, Any], float] | None = None, direction: int = 1,
                 info: dict | None = None):
        if not segments:
            raise ValueError("a SolutionPath needs at least one segment")
        if direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1; got {direction!r}")
        segs = sorted(segments, key=lambda s: s.lo)
        for a, b in zip(segs[:-1], segs[1:], strict=True):
            if not math.isclose(a.hi, b.lo, rel_tol=1e-12, abs_tol=1e-300):
                raise ValueError(f"segments must be contiguous; gap between {a.hi} and {b.lo}")
            b.lo = a.hi  # make the shared end bit-identical
        self.param_name = str(param_name)
        self._segments = list(segs)
        self.events = sorted(events, key=lambda e: e.param)
        self._residual = residual
        self.direction = direction
        self.info = dict(info or {})
        self.breakpoints = np.array([segs[0].lo] + [s.hi for s in segs], dtype=float)
        if len(segs) == 1 and segs[0].lo == segs[0].hi:
            self.breakpoints = self.breakpoints[:1]
        self._kkt_cache: np.ndarray | None = None

    # -- construction helpers ---------------------------------------------------------
    @classmethod
    def piecewise_linear(cls, param_name: str, params: Sequence[float], records: Sequence[Any],
                         events: Iterable[Event] = (), **kwargs) -> SolutionPath:
        """Build a path that is affine between consecutive ``params``.

        ``params`` must be non-decreasing; a repeated value marks a jump (the record before the
        repeat is the left limit, the one after it the right limit).
        """
        params = [float(p) for p in params]
        if len(params) != len(records):
            raise ValueError("params and records must have the same length")
        if len(params) == 1:
            return cls(param_name, [_PointSegment(params[0], records[0])], events, **kwargs)
        if any(b < a for a, b in zip(params[:-1], params[1:], strict=True)):
            raise ValueError("params must be non-decreasing")
        segs = [LinearSegment(params[k], params[k + 1], records[k], records[k + 1])
                for k in range(len(params) - 1) if params[k + 1] > params[k]]
        return cls(param_name, segs, events, **kwargs)

    # -- access -----------------------------------------------------------------------
    @property
    def segments(self) -> list[Segment]:
        return list(self._segments)

    @property
    def param_range(self) -> tuple[float, float]:
        return float(self.breakpoints[0]), float(self.breakpoints[-1])

    def __len__(self) -> int:
        """Number of breakpoints (both ends of the range included)."""
        return len(self.breakpoints)

    def __repr__(self) -> str:
        lo, hi = self.param_range
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return (f"SolutionPath({self.param_name} in [{lo:.6g}, {hi:.6g}], {len(self)} breakpoints, "
                f"events={kinds})")

    def _clamp(self, t: float) -> float:
        """``t`` moved onto the range when it lies within rounding of one of its ends.

        Rounding means a few units in the last place of the larger end,
        ``16 eps max(|lo|, |hi|)`` (a parameter computed as ``lo * (1 + 1e-16)``, or read back
        from text, is still in range). Farther out is an error naming the range.
        """
        lo, hi = self.param_range
        if lo <= t <= hi:
            return t
        slack = 16.0 * np.finfo(float).eps * max(abs(lo), abs(hi))
        if lo - slack <= t < lo:
            return lo
        if hi < t <= hi + slack:
            return hi
        raise ValueError(f"{self.param_name}={t!r} is outside the path's range [{lo!r}, {hi!r}]")

    def _locate(self, t: float) -> tuple[int, int | None]:
        """Segment index containing t; second index when t is a shared end of two segments."""
        los = np.array([s.lo for s in self._segments])
        k = int(np.searchsorted(los, t, side="right") - 1)
        k = max(k, 0)
        if k > 0 and t == self._segments[k].lo:
            return k - 1, k
        return k, None

    def at(self, t: float, *, side: str | None = None):
        """Solution record at parameter ``t``.

        Parameters
        ----------
        t : float
            Parameter value in ``[breakpoints[0], breakpoints[-1]]`` (within rounding of the
            ends: ``16 eps`` of the larger end in absolute value).
        side : {None, "left", "right"}
            At a breakpoint where the path jumps: the limit from the left (smaller
            parameter) or from the right. ``None`` returns the solution that comes later in
            the tracing order (after the jump).
        """
        if side not in (None, "left", "right"):
            raise ValueError(f"side must be None, 'left' or 'right'; got {side!r}")
        try:
            t = float(t)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{self.param_name} must be a real number; got {t!r}") from exc
        if not math.isfinite(t):
            raise ValueError(f"{self.param_name} must be finite; got {t!r}")
        t = self._clamp(t)
        k, k2 = self._locate(t)
        if k2 is None:
            return self._segments[k].evaluate(t)
        if side is None:
            side = "right" if self.direction > 0 else "left"
        return self._segments[k].rec_hi if side == "left" else self._segments[k2].rec_lo

    def records(self) -> list[tuple[float, str, Any]]:
        """Solutions at every breakpoint as ``(param, side, record)``.

        ``side`` is ``"both"`` where the path is continuous (one record), otherwise one
        ``"left"`` and one ``"right"`` entry.
        """
        out: list[tuple[float, str, Any]] = []
        segs = self._segments
        out.append((segs[0].lo, "both", segs[0].rec_lo))
        for a, b in zip(segs[:-1], segs[1:], strict=True):
            if _records_equal(a.rec_hi, b.rec_lo):
                out.append((a.hi, "both", b.rec_lo))
            else:
                out.append((a.hi, "left", a.rec_hi))
                out.append((a.hi, "right", b.rec_lo))
        if len(segs) > 1 or segs[0].hi > segs[0].lo:
            out.append((segs[-1].hi, "both", segs[-1].rec_hi))
        return out

    def events_of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    # -- checks -----------------------------------------------------------------------
    def kkt_residuals(self) -> np.ndarray:
        """Largest optimality residual at each breakpoint (both one-sided solutions at jumps).

        Raises ``ValueError`` if the path was built without a residual function.
        """
        if self._kkt_cache is None and self._residual is None:
            raise ValueError("this path has no residual function; pass residual= to SolutionPath")
        if self._kkt_cache is None:
            res = {}
            for t, _side, rec in self.records():
                r = float(self._residual(t, rec))
                res[t] = max(res.get(t, 0.0), r)
            self._kkt_cache = np.array([res[float(t)] for t in self.breakpoints])
        return self._kkt_cache.copy()

    # -- export -----------------------------------------------------------------------
    def to_rows(self, fields: Sequence[str] | None = None) -> list[dict]:
        """Tidy table: one row per breakpoint (and side at jumps).

        Columns: the parameter, ``side``, ``kkt_residual`` (when available), the kinds of
        the events at that breakpoint, every scalar field of the record, and for each name in
        ``fields`` one column per array entry (``name[i]``).
        """
        residuals = None
        if self.has_residuals:
            residuals = dict(zip(self.breakpoints.tolist(), self.kkt_residuals().tolist(),
                                 strict=True))
        ev_at: dict[float, list[str]] = {}
        for e in self.events:
            ev_at.setdefault(e.param, []).append(e.kind)
        rows = []
        for t, side, rec in self.records():
            row: dict[str, Any] = {self.param_name: t, "side": side}
            if residuals is not None:
                row["kkt_residual"] = residuals[t]
            row["events"] = ",".join(ev_at.get(t, []))
            for name, value in _record_items(rec):
                if np.ndim(value) == 0 and isinstance(value, int | float | np.number | bool):
                    row[name] = value.item() if isinstance(value, np.generic) else value
                elif fields is not None and name in fields:
                    for i, v in enumerate(np.ravel(value)):
                        row[f"{name}[{i}]"] = v.item() if isinstance(v, np.generic) else v
            rows.append(row)
        return rows

    def to_frame(self, fields: Sequence[str] | None = None):
        """:meth:`to_rows` as a pandas DataFrame (pandas is imported on demand)."""
        import pandas as pd

        return pd.DataFrame(self.to_rows(fields))

    @property
    def has_residuals(self) -> bool:
        """Whether :meth:`kkt_residuals` has values (a residual function or stored ones)."""
        return self._residual is not None or self._kkt_cache is not None

    def to_dict(self) -> dict:
        """Everything needed to rebuild the path's breakpoint solutions, as plain JSON types.

        Keys: ``param_name``, ``direction``, ``breakpoints``, ``events``, ``records`` (one
        entry per breakpoint and side, as :meth:`records`), ``segments`` (each piece's ends,
        kind and whether it is linear), ``record_type`` and ``record_fields`` (how to rebuild
        the records: their class and each field's numpy dtype), ``info`` and, when the path
        has residuals, ``kkt_residuals``. :meth:`from_dict` reads it back.
        """
        recs = self.records()
        out = {
            "param_name": self.param_name,
            "direction": self.direction,
            "breakpoints": self.breakpoints.tolist(),
            "events": [e.to_dict() for e in self.events],
            "records": [{"param": t, "side": s, "record": to_jsonable(_record_dict(r))}
                        for t, s, r in recs],
            "segments": [{"lo": g.lo, "hi": g.hi, "kind": g.kind,
                          "linear": isinstance(g, LinearSegment | _PointSegment)}
                         for g in self._segments],
            "record_type": _record_type(recs[0][2]),
            "record_fields": _record_fields(recs[0][2]),
            "info": to_jsonable(self.info),
        }
        if self.has_residuals:
            out["kkt_residuals"] = to_jsonable(self.kkt_residuals())
        return out

    def to_json(self, path=None, **kwargs) -> str:
        """Serialize :meth:`to_dict` to JSON; write it to ``path`` when given.

        :meth:`from_json` reads it back (see the module docstring for what a path read from
        JSON can do).
        """
        text = json.dumps(self.to_dict(), **kwargs)
        if path is not None:
            atomic_write_text(path, text)
        return text

    @classmethod
    def from_dict(cls, data: dict) -> SolutionPath:
        """Rebuild a path from :meth:`to_dict`'s output.

        The result has the original's breakpoints, events, breakpoint records, stored
        residuals and ``info``; ``at(t)`` is exact on pieces that were linear and at
        breakpoints, and raises ``ValueError`` inside pieces that were functions of the
        parameter (see the module docstring).

        Parameters
        ----------
        data : dict
            A dict as returned by :meth:`to_dict` (or read from :meth:`to_json`'s text).

        Returns
        -------
        SolutionPath
        """
        if not isinstance(data, dict):
            raise ValueError(f"data must be a dict from SolutionPath.to_dict; got "
                             f"{type(data).__name__}")
        missing = {"param_name", "records", "segments"} - set(data)
        if missing:
            raise ValueError(f"data lacks the keys {sorted(missing)} (was it written by "
                             "SolutionPath.to_dict?)")
        name = str(data["param_name"])
        build = _record_builder(data.get("record_type"), data.get("record_fields") or {})
        entries = [(float(e["param"]), e["side"], build(e["record"])) for e in data["records"]]
        # the record just left of / right of every breakpoint
        left: dict[float, Any] = {}
        right: dict[float, Any] = {}
        for t, side, rec in entries:
            if side in ("both", "left"):
                left[t] = rec
            if side in ("both", "right"):
                right[t] = rec
        segs: list[Segment] = []
        for g in data["segments"]:
            lo, hi = float(g["lo"]), float(g["hi"])
            if lo == hi:
                segs.append(_PointSegment(lo, right[lo]))
            elif g.get("linear", False):
                seg = LinearSegment(lo, hi, right[lo], left[hi])
                seg.kind = g.get("kind", "linear")
                segs.append(seg)
            else:
                segs.append(_StoredSegment(lo, hi, right[lo], left[hi], g.get("kind", "function"),
                                           name))
        events = [Event(e["param"], e["kind"], tuple(e.get("indices", ())), e.get("info", {}))
                  for e in data.get("events", [])]
        out = cls(name, segs, events, direction=int(data.get("direction", 1)),
                  info=data.get("info"))
        if data.get("kkt_residuals") is not None:
            out._kkt_cache = np.asarray(data["kkt_residuals"], dtype=float)
        return out

    @classmethod
    def from_json(cls, source) -> SolutionPath:
        """Read a path written by :meth:`to_json`.

        Parameters
        ----------
        source : str or path-like
            The JSON text itself (a string starting with ``{``) or the file holding it.

        Returns
        -------
        SolutionPath
            See :meth:`from_dict`.
        """
        if isinstance(source, str) and source.lstrip().startswith("{"):
            text = source
        elif isinstance(source, str | os.PathLike):
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        else:
            raise ValueError(f"source must be JSON text or a file path; got "
                             f"{type(source).__name__}")
        return cls.from_dict(json.loads(text))

    # the residual function is often a closure: pickled by value (see core.io.ByValue)
    def __getstate__(self):
        state = self.__dict__.copy()
        return state if storing_by_value() else ByValue(state)

    def __setstate__(self, state):
        self.__dict__.update(state)

    def plot(self, field: str | Callable[[Any], np.ndarray], *, ax=None, n_points: int = 0,
             mark_events: bool = True, logx: bool = False, **kwargs):
        """Plot a record field along the path with its events marked.

        See :func:`pathlib_core.core.path_plot.plot_path`.
        """
        from .path_plot import plot_path

        return plot_path(self, field, ax=ax, n_points=n_points, mark_events=mark_events,
                         logx=logx, **kwargs)


def _record_items(rec) -> list[tuple[str, Any]]:
    if dataclasses.is_dataclass(rec):
        return [(f.name, getattr(rec, f.name)) for f in dataclasses.fields(rec)]
    if isinstance(rec, dict):
        return list(rec.items())
    return [("value", rec)]


def _record_dict(rec) -> dict:
    return dict(_record_items(rec))


def _record_type(rec) -> str:
    """How a record is rebuilt: ``"dataclass:<module>:<qualname>"``, ``"dict"`` or
    ``"value"`` (a bare array or number)."""
    if dataclasses.is_dataclass(rec) and not isinstance(rec, type):
        cls = type(rec)
        return f"dataclass:{cls.__module__}:{cls.__qualname__}"
    return "dict" if isinstance(rec, dict) else "value"


def _record_fields(rec) -> dict:
    """The numpy dtype (and dimension) of each array, numpy-scalar or float field of a record
    (a Python float is ``"float"``: JSON stores its non-finite values as strings)."""
    out = {}
    for name, value in _record_items(rec):
        if type(value) is float:
            out[name] = {"dtype": "float", "ndim": 0}
        elif isinstance(value, np.ndarray):
            out[name] = {"dtype": value.dtype.str, "ndim": value.ndim}
        elif isinstance(value, np.generic):
            out[name] = {"dtype": value.dtype.str, "ndim": 0}
    return out


def _resolve_dataclass(spec: str):
    """The dataclass named by ``"<module>:<qualname>"`` when its module is part of
    pathlib_core or already imported; ``None`` otherwise."""
    module, _, qualname = spec.partition(":")
    if module in sys.modules:
        obj = sys.modules[module]
    elif module == "pathlib_core" or module.startswith("pathlib_core."):
        try:
            obj = importlib.import_module(module)
        except ImportError:
            return None
    else:
        return None
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and dataclasses.is_dataclass(obj) else None


def _record_builder(record_type: str | None, fields: dict) -> Callable[[dict], Any]:
    """A function turning one stored record (a dict of JSON values) back into a record."""

    def value(name, v):
        spec = fields.get(name)
        if spec is None or v is None:
            return v
        if spec["dtype"] == "float":
            return float(v)
        arr = np.asarray(v, dtype=np.dtype(spec["dtype"]))
        if spec["ndim"] == 0:
            return arr[()]
        if arr.ndim != spec["ndim"] and arr.size == 0:
            arr = arr.reshape((0,) * spec["ndim"])
        return arr

    def as_dict(stored: dict) -> dict:
        return {k: value(k, v) for k, v in stored.items()}

    if record_type == "value":
        return lambda stored: value("value", stored["value"])
    cls = None
    if record_type is not None and record_type.startswith("dataclass:"):
        cls = _resolve_dataclass(record_type[len("dataclass:"):])
    if cls is None:
        return as_dict
    names = [f.name for f in dataclasses.fields(cls)]

    def as_dataclass(stored: dict):
        if set(stored) != set(names):
            return as_dict(stored)
        rec = object.__new__(cls)  # the stored fields as they were: no __init__ checks
        for k, v in as_dict(stored).items():
            object.__setattr__(rec, k, v)
        return rec

    return as_dataclass


def _records_equal(a, b) -> bool:
    if a is b:
        return True
    ia, ib = _record_items(a), _record_items(b)
    if len(ia) != len(ib):
        return False
    for (na, va), (nb, vb) in zip(ia, ib, strict=True):
        if na != nb:
            return False
        try:
            if not np.array_equal(np.asarray(va), np.asarray(vb)):
                return False
        except (TypeError, ValueError):
            if va != vb:
                return False
    return True
