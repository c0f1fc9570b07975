"""Files, JSON and pickles: an atomic text write, numpy values as JSON types, and pickling
of objects that hold local functions.

:func:`atomic_write_text` writes through a temporary file in the target's folder and an atomic
rename, so a reader never sees half a file. :func:`to_jsonable` turns what numerical code
produces (numpy scalars and arrays, tuples, sets, dataclass records, non-finite floats) into
plain JSON types. :meth:`~pathlib_core.core.solution_path.SolutionPath.to_json` and the
book's results records both go through these two functions.

Solution paths hold functions made inside the path functions (residual closures, the
evaluators of :class:`~pathlib_core.core.solution_path.FunctionSegment` pieces), which the
standard :mod:`pickle` cannot store. :class:`ByValue` wraps such a state so that
:mod:`pickle` stores it through cloudpickle (functions by value, one stream per object tree,
so data shared by many closures is stored once) and loads it back as the original object.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import tempfile
import threading
from pathlib import Path as FsPath
from typing import Any

import numpy as np

__all__ = ["atomic_write_text", "to_jsonable", "ByValue", "storing_by_value"]


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


_BY_VALUE = threading.local()


def storing_by_value() -> bool:
    """Whether the current thread is inside a :class:`ByValue` dump.

    An object whose ``__getstate__`` wraps its state in :class:`ByValue` returns the plain
    state instead when this is true: the enclosing cloudpickle stream already stores its
    functions by value, and one stream keeps shared data shared.
    """
    return getattr(_BY_VALUE, "depth", 0) > 0


class ByValue:
    """A stand-in that :mod:`pickle` stores through cloudpickle and loads as ``obj`` itself.

    ``pickle.loads(pickle.dumps(ByValue(obj)))`` returns a copy of ``obj``, not a
    :class:`ByValue`: the stand-in reduces to ``pickle.loads(cloudpickle.dumps(obj))``. Local
    functions and lambdas inside ``obj`` are stored by value, importable ones by reference.
    ``copy.deepcopy`` goes the same way.

    Parameters
    ----------
    obj : object
        What to store (typically an instance's ``__dict__``).
    """

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __reduce__(self):
        import cloudpickle

        depth = getattr(_BY_VALUE, "depth", 0)
        _BY_VALUE.depth = depth + 1
        try:
            blob = cloudpickle.dumps(self.obj, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            _BY_VALUE.depth = depth
        return (pickle.loads, (blob,))
