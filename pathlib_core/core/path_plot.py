"""The picture of a solution path: a record field against the parameter, events marked.

:func:`plot_path` draws one line per component of a record field along a
:class:`~pathlib_core.core.solution_path.SolutionPath` (broken at jumps) and a vertical line at
every event, coloured by its kind (:data:`EVENT_STYLE`). matplotlib is imported only when a
path is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["plot_path", "field_getter", "EVENT_STYLE"]

#: colour and line style of each event kind in path plots
EVENT_STYLE = {
    "enter": ("tab:green", ":"),
    "leave": ("tab:red", ":"),
    "hit": ("tab:red", ":"),
    "jump": ("black", "--"),
    "turning": ("tab:purple", ":"),
    "restart": ("tab:orange", "-."),
}


def field_getter(field: str | Callable[[Any], Any]) -> Callable[[Any], np.ndarray]:
    """A function of one solution record returning ``field`` as a 1-D float array.

    ``field`` is an attribute name of the records (``"coef"``) or a function of one record.
    """
    if callable(field):
        return lambda rec: np.atleast_1d(np.asarray(field(rec), dtype=float))
    return lambda rec: np.atleast_1d(np.asarray(getattr(rec, field), dtype=float))


def plot_path(path, field: str | Callable[[Any], Any], *, ax=None, n_points: int = 0,
              mark_events: bool = True, logx: bool = False, event_kinds=None,
              label: str | None = None, **line_kwargs):
    """Plot ``field`` of the solution records along a
    :class:`~pathlib_core.core.solution_path.SolutionPath`.

    Each component of the field becomes one line. Between breakpoints the path is drawn
    through ``n_points`` interior samples per segment (0 is exact for piecewise-linear
    paths); at a jump the line is broken. Events are vertical lines styled by kind
    (:data:`EVENT_STYLE`), one legend entry per kind.

    Parameters
    ----------
    path : pathlib_core.core.solution_path.SolutionPath
        The solution path; its ``segments``, ``events`` and ``param_name`` (the x label) are
        used.
    field : str or callable
        Attribute name of the records (e.g. ``"coef"``), or a function of one record; the
        value is converted to a 1-D float array, one line per component (every record must
        give the same length).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure's axes.
    n_points : int, default 0
        Interior evaluation points per segment (geometrically spaced when ``logx`` and the
        segment starts above 0); 0 draws straight lines between breakpoints.
    mark_events : bool, default True
        Draw a vertical line at every event and add a legend (when any event is drawn).
    logx : bool, default False
        Logarithmic parameter axis.
    event_kinds : collection of str, optional
        Only mark events of these kinds (default: all).
    label : str, optional
        Legend label of the first line only (one entry for a multi-component field). The
        legend is drawn by this function only when events are marked; otherwise call
        ``ax.legend()``.
    **line_kwargs
        Passed to :meth:`matplotlib.axes.Axes.plot` (default ``lw=1.0``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    get = field_getter(field)
    xs: list[float] = []
    ys: list[np.ndarray] = []
    for seg in path.segments:
        ts = [seg.lo]
        if n_points > 0 and seg.hi > seg.lo:
            if logx and seg.lo > 0:
                ts += list(np.geomspace(seg.lo, seg.hi, n_points + 2)[1:-1])
            else:
                ts += list(np.linspace(seg.lo, seg.hi, n_points + 2)[1:-1])
        recs = [seg.rec_lo] + [seg.evaluate(t) for t in ts[1:]]
        if xs and not np.array_equal(get(recs[0]), ys[-1]):
            xs.append(np.nan)  # break the line at a discontinuity
            ys.append(np.full_like(ys[-1], np.nan))
        xs += ts
        ys += [get(r) for r in recs]
        xs.append(seg.hi)
        ys.append(get(seg.rec_hi))
    Y = np.vstack(ys)
    x = np.asarray(xs)
    lines = ax.plot(x, Y, **{"lw": 1.0, **line_kwargs})
    if label is not None and lines:
        lines[0].set_label(label)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(path.param_name)
    if isinstance(field, str):
        ax.set_ylabel(field)
    if mark_events:
        seen = set()
        for e in path.events:
            if event_kinds is not None and e.kind not in event_kinds:
                continue
            color, ls = EVENT_STYLE.get(e.kind, ("gray", ":"))
            ax.axvline(e.param, color=color, ls=ls, lw=0.6, alpha=0.7,
                       label=e.kind if e.kind not in seen else None)
            seen.add(e.kind)
        if seen:
            ax.legend(loc="best", fontsize=8)
    return ax
