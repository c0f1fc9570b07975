"""The package's layers, checked on the source text (nothing of it is imported or run).

The rules (CONTRIBUTING.md, "Architecture"):

- the engine, ``pathlib_core/core/``, imports nothing else from the package; in particular
  neither the dataset registry nor the book's helpers;
- a book part (``primer``, ``s3vm``, ``pdgdp``, ``selective_ridge``, ``gaga``, ``mcm``)
  imports no other part, the primer excepted;
- no module uses an underscore name of another subpackage (imported, or read as a module
  attribute);
- no import cycle between modules, counting imports inside functions;
- notebooks (code cells), benchmarks and scripts use no underscore name of the package;
- every book part's notebook folder has its package of the same name.

Each rule is one test; a failure lists every offender.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "pathlib_core"
PARTS = ("primer", "s3vm", "pdgdp", "selective_ridge", "gaga", "mcm")
SHARED_PART = "primer"  # the one part other parts may build on
BOOK_HELPERS = ("datasets", "experiments")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _layer(module: str) -> str:
    """``pathlib_core.<layer>`` of a module name (``pathlib_core`` for the package itself)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _short(layer: str) -> str:
    return layer.split(".", 1)[1] if "." in layer else layer


@dataclass
class Use:
    """One use of the package by a module or a file: an import or a module attribute read."""

    where: str  # module name or file path, with the line
    target: str  # the module used (resolved to a module of the package when possible)
    name: str  # the name taken from it ("" for a plain module import)
    in_function: bool = False


@dataclass
class Package:
    """The modules of the package and their uses of each other."""

    files: dict[str, Path] = field(default_factory=dict)
    uses: dict[str, list[Use]] = field(default_factory=dict)
    lazy: dict[str, dict[str, str]] = field(default_factory=dict)  # package -> name -> module


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names = names[:-1]
    return ".".join(names)


def _lazy_exports(tree: ast.Module, package: str) -> dict[str, str]:
    """``name -> module`` of a package's lazy (``lazy_loader.attach``) and explicit
    re-exports."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "submod_attrs":
                    try:
                        table = ast.literal_eval(kw.value)
                    except ValueError:
                        continue
                    for sub, names in table.items():
                        for n in names:
                            out[n] = f"{package}.{sub}"
                elif kw.arg == "submodules":
                    try:
                        subs = ast.literal_eval(kw.value)
                    except ValueError:
                        continue
                    for sub in subs:
                        out.setdefault(sub, f"{package}.{sub}")
    return out


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """Absolute module name of ``from <...> import``."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Collector(ast.NodeVisitor):
    """Imports of the package in one tree, and attribute reads on the modules it imported."""

    def __init__(self, where: str, module: str | None = None, is_package: bool = False):
        self.where, self.module, self.is_package = where, module, is_package
        self.uses: list[Use] = []
        self.depth = 0
        self.module_aliases: dict[str, str] = {}  # local name -> module of the package

    def _add(self, node, target, name=""):
        self.uses.append(Use(f"{self.where}:{node.lineno}", target, name, self.depth > 0))

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_Import(self, node):
        for a in node.names:
            if a.name == PKG or a.name.startswith(PKG + "."):
                self._add(node, a.name)
                local = a.asname or a.name.split(".")[0]
                self.module_aliases[local] = a.name if a.asname else PKG

    def visit_ImportFrom(self, node):
        src = (_resolve_from(self.module, self.is_package, node) if self.module
               else node.module or "")
        if not (src == PKG or src.startswith(PKG + ".")):
            return
        for a in node.names:
            self._add(node, src, a.name)
            self.module_aliases[a.asname or a.name] = f"{src}.{a.name}"

    def visit_Attribute(self, node):
        chain = []
        cur = node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and cur.id in self.module_aliases:
            chain.reverse()
            base = self.module_aliases[cur.id]
            # the longest prefix that names a module; the next attribute is the name read
            self._add(node, ".".join([base, *chain[:-1]]), chain[-1])
            return  # the inner attributes are part of the same chain
        self.generic_visit(node)


@cache
def package() -> Package:
    pkg = Package()
    for path in sorted((ROOT / PKG).rglob("*.py")):
        pkg.files[_module_name(path)] = path
    for mod, path in pkg.files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        if is_package:
            pkg.lazy[mod] = _lazy_exports(tree, mod)
        col = _Collector(mod, mod, is_package)
        col.visit(tree)
        pkg.uses[mod] = col.uses
    return pkg


def _target_module(pkg: Package, use: Use) -> str | None:
    """The module of the package that a use reaches: a submodule when the name is one (or
    is re-exported from one), else the nearest enclosing module."""
    full = f"{use.target}.{use.name}" if use.name else use.target
    if full in pkg.files:
        return full
    t = use.target
    while t and t not in pkg.files:
        t = t.rpartition(".")[0]
    if not t:
        return None
    if use.name and t in pkg.lazy and use.name in pkg.lazy[t]:
        sub = pkg.lazy[t][use.name]
        if sub in pkg.files:
            return sub
    return t


def _private_use(use: Use) -> bool:
    """The use names an underscore object or goes through an underscore module."""
    names = use.target.split(".")[1:] + ([use.name] if use.name else [])
    return any(_is_private(n) for n in names)


def _report(offenders: list[str], what: str) -> str:
    return f"{len(offenders)} {what}:\n  " + "\n  ".join(sorted(set(offenders)))


# -- rules on the package ------------------------------------------------------------------------

def test_core_imports_nothing_outside_core():
    pkg = package()
    bad = []
    for mod, uses in pkg.uses.items():
        if _layer(mod) != f"{PKG}.core":
            continue
        for u in uses:
            t = _target_module(pkg, u)
            if t is not None and _layer(t) != f"{PKG}.core":
                bad.append(f"{u.where} uses {t}" + (f".{u.name}" if u.name else ""))
    assert not bad, _report(bad, "uses of the rest of the package by the engine")


def test_core_does_not_import_datasets_or_the_book_helpers():
    pkg = package()
    bad = [f"{u.where} uses {_target_module(pkg, u)}"
           for mod, uses in pkg.uses.items() if _layer(mod) == f"{PKG}.core"
           for u in uses
           if _short(_layer(_target_module(pkg, u) or "")) in BOOK_HELPERS]
    assert not bad, _report(bad, "uses of datasets/experiments by the engine")


def test_parts_import_no_other_part_except_the_primer():
    pkg = package()
    bad = []
    for mod, uses in pkg.uses.items():
        own = _short(_layer(mod))
        if own not in PARTS:
            continue
        for u in uses:
            t = _target_module(pkg, u)
            other = _short(_layer(t)) if t else ""
            if other in PARTS and other not in (own, SHARED_PART):
                bad.append(f"{u.where} ({own}) uses {t}" + (f".{u.name}" if u.name else ""))
    assert not bad, _report(bad, "imports of one part by another")


def test_no_underscore_name_is_used_across_subpackages():
    pkg = package()
    bad = []
    for mod, uses in pkg.uses.items():
        for u in uses:
            t = _target_module(pkg, u)
            if t is None or _layer(t) == _layer(mod):
                continue
            if _private_use(u):
                bad.append(f"{u.where} uses {u.target}" + (f".{u.name}" if u.name else ""))
    assert not bad, _report(bad, "underscore names used across subpackages")


def _module_graph() -> dict[str, set[str]]:
    """Module -> modules it imports (also inside functions); package ``__init__`` files are
    left out (their re-exports are resolved to the defining module)."""
    pkg = package()
    inits = {m for m, p in pkg.files.items() if p.name == "__init__.py"}
    graph: dict[str, set[str]] = {m: set() for m in pkg.files if m not in inits}
    for mod in graph:
        for u in pkg.uses[mod]:
            t = _target_module(pkg, u)
            if t is not None and t != mod and t not in inits:
                graph[mod].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles_between_modules():
    cycles = _cycles(_module_graph())
    assert not cycles, _report([" <-> ".join(c) for c in cycles],
                               "import cycles (imports inside functions count)")


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# -- rules on notebooks, benchmarks and scripts -------------------------------------------------

_MAGIC = re.compile(r"^\s*[%!?]")


def _notebook_sources(path: Path) -> list[tuple[str, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for k, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell.get("source", []))
        src = "\n".join("" if _MAGIC.match(line) else line for line in src.splitlines())
        out.append((f"{path.relative_to(ROOT)}[cell {k}]", src))
    return out


def _user_sources() -> list[tuple[str, str]]:
    out = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            out += _notebook_sources(path)
    for folder in ("benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def test_notebooks_benchmarks_and_scripts_use_no_underscore_name():
    bad, unreadable = [], []
    for where, src in _user_sources():
        try:
            tree = ast.parse(src)
        except SyntaxError as exc:
            unreadable.append(f"{where}: {exc.msg} (line {exc.lineno})")
            continue
        col = _Collector(where)
        col.visit(tree)
        bad += [f"{u.where} uses {u.target}" + (f".{u.name}" if u.name else "")
                for u in col.uses if _private_use(u)]
    assert not unreadable, _report(unreadable, "code cells or files that do not parse")
    assert not bad, _report(bad, "underscore names of the package used outside it")


def test_every_notebook_part_has_its_package():
    folders = sorted(p.name for p in (ROOT / "notebooks").iterdir()
                     if p.is_dir() and p.name != "data" and not p.name.startswith((".", "_")))
    missing = [f"notebooks/{f}/ -> {PKG}/{f}/__init__.py" for f in folders
               if not (ROOT / PKG / f / "__init__.py").is_file()]
    assert folders, "no notebook folders found"
    assert not missing, _report(missing, "notebook folders without a package of that name")


def test_test_modules_have_unique_basenames():
    # tests live in one folder per layer (tests/<layer>/); pytest imports each test module by
    # its basename, so two folders may not hold a module of the same name
    seen: dict[str, list[str]] = {}
    for p in sorted((ROOT / "tests").rglob("*.py")):
        seen.setdefault(p.name, []).append(p.relative_to(ROOT).as_posix())
    clashes = {k: v for k, v in seen.items() if len(v) > 1 and k not in ("__init__.py",
                                                                          "conftest.py")}
    assert not clashes, f"test modules with the same basename: {clashes}"
