"""Tables for the book: a DataFrame rendered as an HTML table, with the best entries marked.

The chapters show their tables (the papers' tables beside ours) through :func:`show_table`
instead of printing fixed-width text: the book renders an HTML table that fits the text
column, and a plain-text rendering is kept for terminals and for papermill's text output.

Rendering uses :class:`pandas.io.formats.style.Styler` (pandas and Jinja2 are dependencies
of the book, not of the engines, so they are imported only here).
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["Table", "show_table"]

_BEST_CSS = "font-weight: bold"
#: how the plain-text rendering marks a best entry
BEST_MARK = "*"


class Table:
    """A table to display: HTML (best entries in bold) in the book, plain text elsewhere.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as displayed. Cells may be strings (e.g. ``"0.21 ± 0.03"``).
    caption : str, optional
        Shown above the table.
    best : {"min", "max"}, optional
        Mark the smallest or largest entry of each row (``axis=1``) or column (``axis=0``)
        among the columns ``subset``.
    key : pandas.DataFrame, optional
        Numbers that decide the best entries, with the index and the ``subset`` columns of
        ``frame`` (needed when ``frame`` holds strings). Defaults to ``frame`` itself.
    subset : list, optional
        The columns compared (default: every column).
    axis : {0, 1}
        1 compares the entries of a row, 0 those of a column.
    precision : int
        Digits after the point for floating-point cells.
    index : bool
        Show the row labels.
    rtol : float
        Entries within this relative distance of the best are marked too (ties).
    """

    def __init__(self, frame, *, caption: str | None = None, best: str | None = None,
                 key=None, subset=None, axis: int = 1, precision: int = 3,
                 index: bool = True, rtol: float = 1e-12):
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
        if best not in (None, "min", "max"):
            raise ValueError(f"best must be None, 'min' or 'max'; got {best!r}")
        if axis not in (0, 1):
            raise ValueError(f"axis must be 0 or 1; got {axis!r}")
        self.frame, self.caption, self.precision, self.index = frame, caption, precision, index
        self.mask = pd.DataFrame(False, index=frame.index, columns=frame.columns)
        if best is not None:
            cols = list(frame.columns if subset is None else subset)
            missing = [c for c in cols if c not in frame.columns]
            if missing:
                raise ValueError(f"subset names columns not in the frame: {missing}")
            values = (frame if key is None else key).loc[frame.index, cols]
            values = values.apply(pd.to_numeric, errors="coerce").to_numpy(float)
            with np.errstate(all="ignore"):
                ext = (np.nanmin if best == "min" else np.nanmax)(values, axis=axis,
                                                                   keepdims=True)
            near = np.abs(values - ext) <= rtol * np.maximum(np.abs(ext), 1e-300)
            self.mask.loc[:, cols] = np.where(np.isfinite(values), near, False)

    def _shown(self):
        """The frame as rendered: a named single-level index gives its name to the header
        corner, instead of a header row of its own with empty cells."""
        frame = self.frame
        if (self.index and frame.index.nlevels == 1 and frame.index.name is not None
                and frame.columns.nlevels == 1 and frame.columns.name is None):
            frame = frame.copy(deep=False)
            frame.columns = frame.columns.rename(frame.index.name)
            frame.index = frame.index.rename(None)
        return frame

    def _styler(self):
        mask = self.mask
        styler = self._shown().style.format(precision=self.precision, na_rep="–")
        styler = styler.apply(lambda _: np.where(mask.to_numpy(), _BEST_CSS, ""), axis=None)
        if self.caption:
            styler = styler.set_caption(self.caption)
        if not self.index:
            styler = styler.hide(axis="index")
        digest = hashlib.sha256(repr((self.caption, list(map(str, self.frame.columns)),
                                      self.frame.shape)).encode()).hexdigest()[:10]
        return styler.set_uuid(digest).set_table_attributes('class="dataframe table"')

    def _repr_html_(self) -> str:
        return self._styler().to_html()

    def __repr__(self) -> str:
        shown = self.frame.copy().astype(object)
        for (i, j) in zip(*np.nonzero(self.mask.to_numpy()), strict=True):
            v = shown.iat[i, j]
            shown.iat[i, j] = (f"{v:.{self.precision}f}" if isinstance(v, float) else str(v)
                               ) + BEST_MARK
        text = shown.to_string(index=self.index, float_format=lambda v:
                               f"{v:.{self.precision}f}")
        return (self.caption + "\n" + text) if self.caption else text


def show_table(frame, **kwargs) -> None:
    """Display ``frame`` as a :class:`Table` (keywords as there); returns nothing.

    In a notebook the table is rendered as HTML; elsewhere its plain text is printed.
    """
    from .display import display, in_kernel

    table = Table(frame, **kwargs)
    if in_kernel():
        display(table)
    else:
        print(repr(table))
