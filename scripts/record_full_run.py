"""Keep the record of a full-mode notebook run: results, tables, status, provenance.

    python scripts/record_full_run.py --build-dir DIR --notebook s3vm/03_reproduction \
        [--out benchmarks/full_runs] [--commit HASH] [--attempt-seconds S1 S2 ...]

A ``MODE=full`` run of a chapter can take hours, so the default (quick) build cannot redo it.
This script gathers what the run wrote into its build folder (``DIR/results``,
``DIR/tables`` and ``DIR/status`` of that notebook) into one JSON file,
``<out>/<part>__<name>.json``, with the commit the run was made from. The file is committed;
the chapter shows it in every build (labelled as a recorded run, with date and commit), and
the book's status page lists every recorded full run with its wall-clock time.

A run resumed from a checkpoint (``--param CHECKPOINT=...``) took several attempts; its status
record knows only the last. ``--attempt-seconds`` gives the wall time of every attempt (the
last included): the record's ``seconds`` is then their sum, and ``attempt_seconds`` keeps them.

The record also keeps the content keys of the run (``inputs``: the SHA-256 of the notebook's
cells, of every ``pathlib_core`` module it imports, of the data registry and of the lock
file; ``input_parameters``: of its mode, seed and parameters), from which
``scripts/provenance.py`` tells whether the record is still current. Record a run from the
tree it ran on: a file edited meanwhile would be keyed with its new content.

Refuses a run that was not in full mode, or whose results were not saved (a failed run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

from pathlib_core.core.threads import blas_kernels  # noqa: E402


def gather(build_dir: Path, notebook: str, commit: str | None,
           attempt_seconds: list[float] | None = None, root: Path = provenance.ROOT) -> dict:
    if not (root / "notebooks" / f"{notebook}.ipynb").is_file():
        raise ValueError(f"no notebook notebooks/{notebook}.ipynb under {root}")
    nb_id = notebook.replace("/", "__")
    status_file = build_dir / "status" / f"{nb_id}.json"
    results_file = build_dir / "results" / f"{nb_id}.json"
    if not status_file.exists():
        raise ValueError(f"no status record {status_file}: was {notebook} executed into "
                         f"{build_dir}?")
    status = json.loads(status_file.read_text(encoding="utf-8"))
    if status.get("mode") != "full":
        raise ValueError(f"{notebook} was run in mode {status.get('mode')!r}, not 'full'")
    if not status.get("results_written") or not results_file.exists():
        raise ValueError(f"{notebook}: the run did not save its results (failed run?)")
    tables = {}
    tdir = build_dir / "tables" / notebook
    if tdir.is_dir():
        for f in sorted(tdir.glob("*.json")):
            tables[f.stem] = json.loads(f.read_text(encoding="utf-8"))
    seconds = status.get("seconds")
    extra = {}
    if attempt_seconds:
        if any(not (t >= 0) for t in attempt_seconds):
            raise ValueError(f"attempt seconds must be >= 0; got {attempt_seconds}")
        if seconds is not None and attempt_seconds[-1] + 1.0 < seconds:
            raise ValueError(f"the last attempt ({attempt_seconds[-1]} s) is shorter than the "
                             f"run's status record ({seconds} s)")
        extra = {"attempt_seconds": list(attempt_seconds), "seconds_last_attempt": seconds}
        seconds = round(float(sum(attempt_seconds)), 2)
    record = {
        "notebook": notebook,
        "mode": status["mode"],
        "seed": status.get("seed"),
        "parameters": status.get("parameters", {}),
        **extra,
        "seconds": seconds,
        "date": status.get("date"),
        "versions": status.get("versions", {}),
        "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}"
                   f", BLAS {blas_kernels()}"
                   + (", runs on a Dask cluster" if os.environ.get("DASK_SCHEDULER") else ""),
        "results": json.loads(results_file.read_text(encoding="utf-8")),
        "tables": tables,
    }
    # the content keys: what the run depended on (scripts/provenance.py)
    record["inputs"] = provenance.inputs(notebook, root)
    record["input_parameters"] = hashlib.sha256(json.dumps(
        provenance.semantic_parameters(record), sort_keys=True).encode()).hexdigest()
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", type=Path, required=True)
    ap.add_argument("--notebook", required=True, help="<part>/<name>, e.g. s3vm/03_reproduction")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/full_runs"))
    ap.add_argument("--commit", default=None,
                    help="commit the run was made from (default: HEAD of this checkout)")
    ap.add_argument("--attempt-seconds", type=float, nargs="+", default=None,
                    help="wall time of every attempt of a resumed run, the last included")
    args = ap.parse_args(argv)
    commit = args.commit
    if commit is None:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or None
    try:
        record = gather(args.build_dir, args.notebook, commit, args.attempt_seconds)
    except ValueError as err:
        print(f"[record] {err}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{args.notebook.replace('/', '__')}.json"
    with tempfile.NamedTemporaryFile("w", dir=args.out, delete=False, suffix=".tmp",
                                     encoding="utf-8") as tmp:
        json.dump(record, tmp, indent=1, sort_keys=True)
        tmp.write("\n")
    os.replace(tmp.name, target)
    print(f"[record] {args.notebook}: {record['seconds']} s, commit {commit} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
