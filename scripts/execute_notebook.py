"""Execute one notebook with papermill in a fresh kernel, into the build folder.

    python scripts/execute_notebook.py notebooks/primer/01_x.ipynb book/executed/primer/01_x.ipynb \
        --mode quick --seed 0

- parameters ``MODE`` and ``SEED`` are injected into the cell tagged ``parameters``, plus any
  ``--param NAME=VALUE`` (VALUE read as a Python literal, else kept as a string; e.g.
  ``--param N_JOBS=2 --param CHECKPOINT='"/data/ckpt"'``), which the status record lists;
- the notebook runs with its own folder as working directory and with
  ``PATHLIB_BUILD_DIR`` / ``PATHLIB_NOTEBOOK`` set, so its results and figures land in
  ``build/results/<id>.json`` and ``build/figures/<id>/``;
- the previous results file and figures of the notebook are removed first, so a failed run
  never leaves stale numbers that look current;
- the executed copy is written to a temporary file and renamed only on success (Make never
  mistakes a failed run for an up-to-date target); on failure the partial notebook is kept in
  ``build/failed/`` and the failing cell is named;
- a status record (mode, seed, run time, date, package versions) goes to
  ``build/status/<id>.json``.
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import importlib.metadata as md
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

MODES = ("quick", "full")
KERNEL_NAME = "pathlib-core"
VERSIONED = ("numpy", "scipy", "scikit-learn", "cvxpy", "matplotlib", "papermill",
             "jupyter-book", "pathlib_core")


def _notebook_id(src: Path, root: Path) -> str:
    try:
        rel = src.resolve().relative_to((root / "notebooks").resolve())
    except ValueError:  # a notebook outside notebooks/ (e.g. in a test): its file stem
        return src.stem
    return rel.with_suffix("").as_posix()


def _has_parameters_cell(src: Path) -> bool:
    nb = json.loads(src.read_text(encoding="utf-8"))
    return any("parameters" in c.get("metadata", {}).get("tags", [])
               for c in nb.get("cells", []) if c.get("cell_type") == "code")


def _declared_parameters(src: Path) -> set[str]:
    """The names assigned in the notebook's ``parameters`` cell."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    names: set[str] = set()
    for c in nb.get("cells", []):
        if c.get("cell_type") == "code" and "parameters" in c.get("metadata", {}).get("tags", []):
            code = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def _kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    return KERNEL_NAME if KERNEL_NAME in specs else "python3"


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "not installed"
    return out


def parse_params(items: list[str]) -> dict:
    """``["N_JOBS=2", "TAG=abc"]`` -> ``{"N_JOBS": 2, "TAG": "abc"}`` (literal, else string)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"--param expects NAME=VALUE with NAME an identifier; got {item!r}")
        if name in ("MODE", "SEED"):
            raise ValueError(f"--param {name}: use --{name.lower()} instead")
        try:
            out[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[name] = value
    return out


def _ipc_kernel_manager():
    """A kernel manager that talks to the kernel over local IPC sockets instead of TCP: the
    kernel then has no reason to warn about unencrypted TCP, and its sockets are files that
    jupyter_client removes at shutdown."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)

    return IPCKernelManager


def _remove_injected_cell(path: Path) -> None:
    """Tag papermill's injected ``# Parameters`` cell ``remove-cell``: the book shows the
    notebook's own ``parameters`` cell (how a reader reruns it), not the values papermill
    wrote after it (they repeat the build's mode and seed)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    changed = False
    for cell in nb.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
            changed = True
    if changed:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--mode", default="quick")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--build-dir", type=Path, default=Path("build"))
    ap.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                    help="another parameter of the notebook's parameters cell (repeatable)")
    ap.add_argument("--param-if-declared", action="append", default=[], metavar="NAME=VALUE",
                    help="as --param, applied only if the parameters cell assigns NAME (for "
                         "runs over many notebooks, e.g. N_JOBS)")
    args = ap.parse_args(argv)

    if args.mode not in MODES:
        print(f"error: MODE={args.mode!r} is not valid; valid modes: {', '.join(MODES)}",
              file=sys.stderr)
        return 2
    try:
        seed = int(args.seed)
    except ValueError:
        print(f"error: SEED must be an integer; got {args.seed!r}", file=sys.stderr)
        return 2
    try:
        extra = parse_params(args.param)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    src = args.source
    if not src.exists():
        print(f"error: notebook {src} does not exist", file=sys.stderr)
        return 2
    if not _has_parameters_cell(src):
        print(f"error: {src} has no code cell tagged 'parameters'", file=sys.stderr)
        return 2
    try:
        optional = parse_params(args.param_if_declared)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    declared = _declared_parameters(src)
    extra.update({k: v for k, v in optional.items() if k in declared and k not in extra})

    import papermill as pm

    nb_id = _notebook_id(src, root)
    build = args.build_dir.resolve()
    results = build / "results" / (nb_id.replace("/", "__") + ".json")
    status = build / "status" / (nb_id.replace("/", "__") + ".json")
    figures = build / "figures" / nb_id
    failed = build / "failed" / (nb_id + ".ipynb")
    for stale in (results, status, failed):
        stale.unlink(missing_ok=True)
    shutil.rmtree(figures, ignore_errors=True)

    out = args.output.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.running.ipynb")

    env_updates = {"PATHLIB_BUILD_DIR": str(build), "PATHLIB_NOTEBOOK": nb_id,
                   "SOURCE_DATE_EPOCH": "0", "PYTHONHASHSEED": "0", "TQDM_DISABLE": "1"}
    saved_env = {k: os.environ.get(k) for k in env_updates}
    os.environ.update(env_updates)
    print(f"[execute] {nb_id}  MODE={args.mode} SEED={seed}", flush=True)
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(
            str(src), str(tmp), parameters={"MODE": args.mode, "SEED": seed, **extra},
            kernel_name=_kernel_name(), cwd=str(src.parent.resolve()), progress_bar=False,
            log_output=False, request_save_on_cell_execute=False,
            kernel_manager_class=_ipc_kernel_manager(),
        )
    except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
        elapsed = time.perf_counter() - t0
        failed.parent.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.move(str(tmp), failed)
        results.unlink(missing_ok=True)
        cell = getattr(exc, "exec_count", None)
        where = f"cell [{cell}]" if cell is not None else "setup"
        ename = getattr(exc, "ename", type(exc).__name__)
        evalue = getattr(exc, "evalue", str(exc))
        print(f"[execute] FAILED {nb_id} after {elapsed:.1f} s in {where}: {ename}: {evalue}",
              file=sys.stderr)
        print(f"[execute] papermill's output is kept in {failed}", file=sys.stderr)
        return 1
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    elapsed = time.perf_counter() - t0
    _remove_injected_cell(tmp)
    os.replace(tmp, out)
    record = {
        "notebook": nb_id, "mode": args.mode, "seed": seed,
        **({"parameters": extra} if extra else {}),
        "seconds": round(elapsed, 2),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "results_written": results.exists(),
        "versions": _versions(),
    }
    status.parent.mkdir(parents=True, exist_ok=True)
    status.write_text(json.dumps(record, indent=2, sort_keys=True), encoding="utf-8")
    print(f"[execute] ok {nb_id} in {elapsed:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
