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

from ..core.path_plot import EVENT_STYLE, plot_path
from .results import build_dir, notebook_id

__all__ = [
    "setup",
    "save_figure",
    "show",
    "plot_path",
    "figure_manifest",
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
}

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
    import matplotlib

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
