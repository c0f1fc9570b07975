"""Content keys of the paper-scale records: what a notebook's run depends on, and whether a
record is still current.

    python scripts/provenance.py status [--json]   # every record: current or stale, and why
    python scripts/provenance.py stale             # the notebooks whose record is stale

A notebook's *inputs* are the files whose content can change what its run computes:

- the notebook's code cells, in order (their source; prose, outputs and metadata cannot
  change what a run computes, so a reworded paragraph leaves the record current);
- every ``pathlib_core`` module in the static import closure of its code: the modules its
  code cells import, then, recursively, the modules those import (relative imports and
  imports inside functions included; a package's ``lazy_loader.attach`` list counts as
  imported, since any of its names can be reached through the package);
- the data registry (``pathlib_core/datasets/registry.json``) and the lock file
  (``requirements.lock``);
- the run's mode, seed and parameters (except ``N_JOBS`` and ``CHECKPOINT``, which change
  how the work is spread and where it is saved, not what it computes).

:func:`scripts.record_full_run.gather` stores the SHA-256 of each input in the record
(``inputs``) and of the parameters (``input_parameters``). A record is **current** when every
input still has the recorded hash, **stale** otherwise, with the changed inputs named. A
record made before content keys is stale ("no recorded inputs").
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pathlib_core"
#: files every run depends on besides its notebook and modules
SHARED_INPUTS = ("pathlib_core/datasets/registry.json", "requirements.lock")
#: parameters that change how the work is spread or saved, not what it computes
NON_SEMANTIC_PARAMETERS = frozenset({"N_JOBS", "CHECKPOINT"})
RECORDS = "benchmarks/full_runs"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def notebook_key(path: Path) -> str:
    """SHA-256 of the notebook's code cells (their sources, in order): not of markdown
    cells, outputs or metadata."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [("code", "".join(c.get("source", []))
              if isinstance(c.get("source"), list) else c.get("source", ""))
             for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    return sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8"))


def _code_of(path: Path) -> str:
    """The code cells of a notebook, IPython magics and shell lines commented out."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    for c in nb.get("cells", []):
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        for line in src.splitlines():
            stripped = line.lstrip()
            lines.append("# " + line if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


def _module_file(root: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` under ``root`` (a package's ``__init__.py``)."""
    base = root.joinpath(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _package_of(root: Path, path: Path) -> str:
    """The package a module's relative imports resolve against."""
    return ".".join(path.relative_to(root).with_suffix("").parts[:-1])


def _imported(tree: ast.AST, package: str, *, leaf: bool) -> set[str]:
    """Dotted names of the ``pathlib_core`` modules (or attributes of them) that ``tree``
    imports; ``package`` resolves relative imports. With ``leaf`` (the module was itself
    imported, so code can reach its attributes) a ``lazy_loader.attach`` list counts too."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level > 1:
                    parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != PACKAGE:
                continue
            # (the names imported from base: submodules or attributes; base itself is then
            # a leaf only where a name is an attribute of it)
            out.update(f"{base}.{a.name}" if a.name != "*" else base for a in node.names)
        elif leaf and isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "attach":
            # lazy_loader.attach(__name__, submodules=[...], submod_attrs={...})
            for kw in node.keywords:
                if kw.arg == "submodules" and isinstance(kw.value, ast.List | ast.Tuple):
                    out.update(f"{package}.{e.value}" for e in kw.value.elts
                               if isinstance(e, ast.Constant))
                if kw.arg == "submod_attrs" and isinstance(kw.value, ast.Dict):
                    out.update(f"{package}.{k.value}" for k in kw.value.keys
                               if isinstance(k, ast.Constant))
    return out


def module_closure(root: Path, code: str) -> set[Path]:
    """The ``pathlib_core`` files in the static import closure of ``code``.

    Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too (their own imports
    count), but only the module actually imported, ``a.b.c``, is reachable by attribute:
    only its lazy ``attach`` list counts (``from pathlib_core import gaga`` reaches every
    submodule of ``gaga``, not the other parts of the book)."""
    seen: dict[Path, bool] = {}          # file -> parsed as a leaf
    todo: list[tuple[str, str, bool]] = [(code, "", True)]
    while todo:
        src, package, leaf = todo.pop()
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for name in _imported(tree, package, leaf=leaf):
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                f = _module_file(root, ".".join(parts[:k]))
                if f is None:
                    continue
                # (a.b.c where c is an attribute of module a.b: a.b is the leaf)
                is_leaf = k == len(parts) or _module_file(
                    root, ".".join(parts[:k + 1])) is None
                if f not in seen or (is_leaf and not seen[f]):
                    seen[f] = seen.get(f, False) or is_leaf
                    todo.append((f.read_text(encoding="utf-8"), _package_of(root, f),
                                 is_leaf))
    return set(seen)


def semantic_parameters(record_or_status: dict) -> dict:
    """Mode, seed and the parameters that change what a run computes."""
    params = {k: v for k, v in (record_or_status.get("parameters") or {}).items()
              if k not in NON_SEMANTIC_PARAMETERS}
    return {"mode": record_or_status.get("mode"), "seed": record_or_status.get("seed"),
            "parameters": params}


def inputs(notebook: str, root: Path = ROOT) -> dict[str, str]:
    """``{path: sha256}`` of the inputs of ``notebook`` (``<part>/<name>``), paths relative
    to ``root``."""
    nb = root / "notebooks" / f"{notebook}.ipynb"
    out = {str(nb.relative_to(root)): notebook_key(nb)}
    for f in sorted(module_closure(root, _code_of(nb))):
        out[str(f.relative_to(root))] = sha256(f.read_bytes())
    for rel in SHARED_INPUTS:
        f = root / rel
        if f.is_file():
            out[rel] = sha256(f.read_bytes())
    return out


def staleness(record: dict, root: Path = ROOT) -> list[str]:
    """Why ``record`` is stale (an empty list: current)."""
    recorded = record.get("inputs")
    if not recorded:
        return ["no recorded inputs (recorded before content keys)"]
    nb = record.get("notebook", "")
    if not (root / "notebooks" / f"{nb}.ipynb").is_file():
        return [f"the notebook {nb} no longer exists"]
    now = inputs(nb, root)
    why = [f"changed: {p}" for p in sorted(now) if p in recorded and recorded[p] != now[p]]
    why += [f"new input: {p}" for p in sorted(set(now) - set(recorded))]
    why += [f"no longer an input: {p}" for p in sorted(set(recorded) - set(now))]
    if record.get("input_parameters") != sha256(json.dumps(
            semantic_parameters(record), sort_keys=True).encode()):
        why.append("parameters changed")
    return why


def records(root: Path = ROOT) -> list[dict]:
    """Every paper-scale record, sorted by notebook."""
    out = []
    for f in sorted((root / RECORDS).glob("*.json")):
        rec = json.loads(f.read_text(encoding="utf-8"))
        rec["_file"] = str(f.relative_to(root))
        out.append(rec)
    return out


def status(root: Path = ROOT) -> list[dict]:
    """``[{notebook, file, date, commit, current, why}]`` for every record."""
    rows = []
    for rec in records(root):
        why = staleness(rec, root)
        rows.append({"notebook": rec.get("notebook"), "file": rec["_file"],
                     "date": rec.get("date"), "commit": rec.get("commit"),
                     "seconds": rec.get("seconds"), "current": not why, "why": why})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("status", "stale"))
    ap.add_argument("--json", action="store_true", help="status as JSON")
    args = ap.parse_args(argv)
    rows = status()
    if args.command == "stale":
        for r in rows:
            if not r["current"]:
                print(r["notebook"])
        return 0
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    n_stale = sum(not r["current"] for r in rows)
    print(f"{len(rows)} paper-scale records, {len(rows) - n_stale} current, {n_stale} stale")
    for r in rows:
        state = "current" if r["current"] else "STALE"
        print(f"  {state:7s} {r['notebook']} ({r['date']}, commit {r['commit']})")
        for w in r["why"][:8]:
            print(f"          - {w}")
        if len(r["why"]) > 8:
            print(f"          - ... and {len(r['why']) - 8} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
