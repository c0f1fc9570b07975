"""Compare the verdicts of two builds run at different seeds; a verdict that flips fails.

    python scripts/check_seed_flips.py build/results build/seed2/results [--seeds 0 1]

Each folder holds the claim records the notebooks write (``<part>__<name>.json``, from
:class:`pathlib_core.experiments.results.Results`). Every claim of either build is listed with
its verdict at both seeds. The exit status is 1 when a verdict differs between the seeds or a
claim is recorded at one seed only, 0 otherwise. ``make check-seeds`` runs every notebook at a
second seed and calls this script.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_pages  # noqa: E402


def load_verdicts(folder: Path, notebooks: Path = Path("notebooks")) -> dict[str, dict]:
    """``{claim id: claim}`` from the claim records in ``folder`` of the book's notebooks
    (read as the scoreboard reads them, :func:`generate_pages._load_results`: a file left by
    a notebook run outside the book is not one of them)."""
    if not folder.is_dir():
        raise SystemExit(f"error: {folder} is not a folder of claim records")
    return {c["id"]: c for r in generate_pages._load_results(folder, notebooks)
            for c in r.get("claims", [])}


def compare(a: dict[str, dict], b: dict[str, dict]) -> tuple[list[str], list[str]]:
    """``(flipped ids, ids recorded at one seed only)``, each sorted."""
    flips = sorted(k for k in a.keys() & b.keys() if a[k]["verdict"] != b[k]["verdict"])
    lone = sorted(a.keys() ^ b.keys())
    return flips, lone


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--seeds", nargs=2, default=["first", "second"], metavar=("A", "B"))
    ap.add_argument("--notebooks-dir", type=Path, default=Path("notebooks"))
    args = ap.parse_args(argv)
    a = load_verdicts(args.first, args.notebooks_dir)
    b = load_verdicts(args.second, args.notebooks_dir)
    if not a and not b:
        print("error: no claims recorded in either build")
        return 1
    flips, lone = compare(a, b)
    sa, sb = args.seeds
    for k in sorted(a.keys() | b.keys()):
        va = a[k]["verdict"] if k in a else "-"
        vb = b[k]["verdict"] if k in b else "-"
        mark = "FLIP " if k in flips else ("MISSING " if k in lone else "")
        print(f"  {mark}{k}: seed {sa} {va}, seed {sb} {vb}")
    for k in flips:
        print(f"\n{k} flips between the seeds:\n  seed {sa}: {a[k]['ours']}\n"
              f"  seed {sb}: {b[k]['ours']}")
    n = len(a.keys() & b.keys())
    print(f"\n{len(flips)} of {n} verdicts flip between seeds {sa} and {sb}"
          + (f"; {len(lone)} claims recorded at one seed only" if lone else ""))
    return 1 if flips or lone else 0


if __name__ == "__main__":
    sys.exit(main())
