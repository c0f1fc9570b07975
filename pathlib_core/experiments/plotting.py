"""Deterministic figures: one style and one saving helper.

The path plot itself, :func:`plot_path` (with :data:`EVENT_STYLE`), lives in the engine
(:mod:`pathlib_core.core.path_plot`) and is re-exported here.

Figures are build outputs. A notebook calls :func:`setup` once and then :func:`show` for every
figure: the figure is written as SVG to ``<build>/figures/<notebook-id>/<name>.svg`` and the
*saved file* is what the notebook displays, so the picture in the book is byte-for-byte the
build output. Saved SVGs are deterministic: a fixed ``svg.hashsalt``, text rendered as paths
(no font lookup at view time), no date or creator metadata, the Agg backend.

A figure that plots *measured wall-clock times* cannot be identical between two builds. Such a
figure is saved with ``timing=True`` as ``<name>.timing.svg``: the figure manifest lists it
apart and ``make check-repro`` does not compare its bytes (everything else in it, and every
other figure, must be identical).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path as FsPath

import numpy as np

from ..core.path_plot import EVENT_STYLE, plot_path
from .results import build_dir, notebook_id

__all__ = [
    "setup",
    "save_figure",
    "show",
    "plot_path",
    "figure_manifest",
    "log_ticks",
    "MAX_WIDTH_IN",
    "EVENT_STYLE",
    "STYLE",
    "COLORS",
]

STYLE = {
    "svg.hashsalt": "pathlib-core",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.bbox": "tight",
    "figure.constrained_layout.use": True,
}

#: the widest figure (inches at ``figure.dpi``) that fits the book's text column unscaled
#: enough to be read: 9 in = 900 px
MAX_WIDTH_IN = 9.0

#: colour-blind safe colour cycle (Okabe-Ito)
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
          "#000000"]

_METADATA = {"Date": None, "Creator": None}


def setup() -> None:
    """Apply the book's matplotlib style; safe to call more than once."""
    import matplotlib

    if "ipykernel" not in os.environ.get("MPLBACKEND", "") and not _in_notebook():
        matplotlib.use("Agg")
    from cycler import cycler

    style = dict(STYLE)
    style["axes.prop_cycle"] = cycler(color=COLORS)
    matplotlib.rcParams.update(style)
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    ip = get_ipython()
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


TIMING_SUFFIX = ".timing.svg"


def is_timing_figure(path) -> bool:
    """Whether a saved figure plots measured times (excluded from byte-for-byte comparison)."""
    return str(path).endswith(TIMING_SUFFIX)


def _log_label(v: float, _pos=None) -> str:
    """A log-axis tick label: plain digits from 0.001 to 9999, else powers of ten."""
    if v <= 0 or not np.isfinite(v):
        return ""
    if 1e-3 <= v < 1e4:
        return f"{v:g}"
    k = int(np.floor(np.log10(v) + 1e-9))
    m = v / 10.0**k
    return f"$10^{{{k}}}$" if abs(m - 1) < 1e-6 else f"${m:g}\\times10^{{{k}}}$"


def log_ticks(ax, axis: str = "both", *, only_default: bool = False) -> None:
    """Readable ticks on the log-scaled axes of ``ax``: labelled major ticks, unlabelled
    minor ones.

    Matplotlib labels minor ticks when an axis spans less than a decade or so, and the
    labels run into each other. Here the major ticks are the powers of ten, with 2 and 5
    (ranges under three decades) or 2, 3 and 5 (under one) in between; minor ticks carry no
    label. Called by :func:`save_figure` on every axis that still has matplotlib's default
    log formatter (``only_default=True``), so a chapter need not call it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    axis : {"x", "y", "both"}
    only_default : bool
        Leave an axis alone if its major formatter is not matplotlib's log formatter.
    """
    from matplotlib.ticker import FuncFormatter, LogFormatter, LogLocator, NullFormatter

    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both'; got {axis!r}")
    for name in ("x", "y") if axis == "both" else (axis,):
        a = getattr(ax, f"{name}axis")
        if a.get_scale() != "log":
            continue
        if only_default and not isinstance(a.get_major_formatter(), LogFormatter):
            continue
        lo, hi = sorted(getattr(ax, f"get_{name}lim")())
        decades = np.log10(hi / lo) if lo > 0 else np.inf
        subs = (1.0,) if decades > 3 else (1.0, 2.0, 5.0) if decades > 1 else (
            1.0, 2.0, 3.0, 5.0)
        a.set_major_locator(LogLocator(base=10.0, subs=subs))
        a.set_major_formatter(FuncFormatter(_log_label))
        a.set_minor_locator(LogLocator(base=10.0, subs=np.arange(2.0, 10.0)))
        a.set_minor_formatter(NullFormatter())


def save_figure(fig, name: str, *, notebook: str | None = None, directory=None,
                timing: bool = False) -> FsPath:
    """Save ``fig`` as a deterministic SVG and return the file's path.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    name : str
        File stem (letters, digits, ``-`` and ``_``).
    notebook : str, optional
        Notebook id (default :func:`pathlib_core.experiments.results.notebook_id`).
    directory : path-like, optional
        Override the target folder (default ``<build>/figures/<notebook-id>``).
    timing : bool
        The figure shows measured wall-clock times: saved as ``<name>.timing.svg`` and not
        compared byte for byte between builds (see the module docstring).
    """
    if not name or not all(ch.isalnum() or ch in "-_" for ch in name):
        raise ValueError(f"name must be a non-empty file stem of letters, digits, - and _; "
                         f"got {name!r}")
    if fig.get_figwidth() > MAX_WIDTH_IN + 1e-9:
        raise ValueError(f"figure {name!r} is {fig.get_figwidth():.1f} in wide; the book's "
                         f"column takes at most MAX_WIDTH_IN = {MAX_WIDTH_IN} in")
    import matplotlib

    for ax in fig.axes:
        log_ticks(ax, only_default=True)
    nb = notebook or notebook_id()
    target_dir = FsPath(directory) if directory is not None else build_dir() / "figures" / nb
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / (name + (TIMING_SUFFIX if timing else ".svg"))
    tmp = target.with_name(target.name + ".tmp")
    with matplotlib.rc_context({"svg.hashsalt": STYLE["svg.hashsalt"],
                                "svg.fonttype": STYLE["svg.fonttype"]}):
        fig.savefig(tmp, format="svg", metadata=_METADATA)
    os.replace(tmp, target)
    return target


def show(fig, name: str, **kwargs) -> None:
    """Save ``fig`` (see :func:`save_figure`), display the saved SVG, and close the figure.

    Returns nothing, so that a notebook cell ending with ``show(...)`` displays only the
    figure (use :func:`save_figure` for the saved file's path).

    Outside a Jupyter kernel the figure is only saved and closed (nothing is displayed).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; it is closed afterwards.
    name : str
        File stem (letters, digits, ``-`` and ``_``).
    **kwargs
        Passed to :func:`save_figure`: ``notebook``, ``directory``, ``timing``.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        An invalid ``name`` (from :func:`save_figure`).
    """
    import matplotlib.pyplot as plt

    path = save_figure(fig, name, **kwargs)
    plt.close(fig)
    if _in_notebook():
        from IPython.display import display

        # raw=True keeps the saved bytes: the picture in the book *is* the build output
        display({"image/svg+xml": path.read_text(encoding="utf-8")}, raw=True)


def figure_manifest(root=None) -> dict[str, str]:
    """SHA-256 of every saved figure under ``root`` (default ``<build>/figures``)."""
    root = FsPath(root) if root is not None else build_dir() / "figures"
    out = {}
    for p in sorted(root.rglob("*.svg")):
        out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
