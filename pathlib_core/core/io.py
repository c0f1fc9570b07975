"""Files and JSON: an atomic text write and the conversion of numpy values to JSON types.

:func:`atomic_write_text` writes through a temporary file in the target's folder and an atomic
rename, so a reader never sees half a file. :func:`to_jsonable` turns what numerical code
produces (numpy scalars and arrays, tuples, sets, dataclass records, non-finite floats) into
plain JSON types. :meth:`~pathlib_core.core.solution_path.SolutionPath.to_json` and the
book's results records both go through these two functions.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from pathlib import Path as FsPath
from typing import Any

import numpy as np

__all__ = ["atomic_write_text", "to_jsonable"]


def atomic_write_text(path, text: str) -> FsPath:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename.

    Parameters
    ----------
    path : path-like
        Target file; missing parent folders are created.
    text : str
        The content, written as UTF-8.

    Returns
    -------
    pathlib.Path
        The target's path.
    """
    path = FsPath(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def to_jsonable(value: Any) -> Any:
    """``value`` with every part converted to a JSON type.

    Dicts keep their structure (keys become strings); lists, tuples, sets and numpy arrays
    become lists; numpy scalars become Python scalars; non-finite floats become the strings
    ``"nan"``, ``"inf"`` and ``"-inf"`` (strict JSON has no such numbers); a dataclass
    instance becomes the dict of its fields. ``None``, strings, ints, floats and bools are
    kept, and anything else is replaced by its ``repr``.
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)
