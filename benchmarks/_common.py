"""Shared helpers of the benchmark scripts: timing and the JSON report format.

Every ``benchmarks/bench_<suite>.py`` measures its targets as *ratios against a named peer
timed in the same run*, and writes one report with :func:`write_report`::

    {"suite": ..., "title": ..., "date": ..., "commit": ..., "machine": ...,
     "results": [{"name", "what", "ours_s", "peer", "peer_s", "ratio", "goal", "goal_met",
                  ...extra measured numbers...}],
     "notes": ...}

``scripts/generate_pages.py`` renders these reports on the book's performance page. Timings
never appear in tests; they live only here.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
from pathlib import Path

from pathlib_core.core.threads import blas_kernels
from pathlib_core.experiments.timing import best_time  # the chapters' timer too

__all__ = ["best_time", "parse_args", "ratio_row", "write_report"]


def ratio_row(name: str, what: str, ours_s: float, peer: str, peer_s: float, *,
              goal: str = "", goal_ratio: float | None = None, higher_is_better=False,
              **extra) -> dict:
    """One result row. ``ratio = ours_s / peer_s``; ``goal_met`` compares it to ``goal_ratio``.

    With ``higher_is_better`` the goal is read as a speed-up: ``peer_s / ours_s >=
    goal_ratio`` (i.e. ``ratio <= 1 / goal_ratio``).
    """
    ratio = ours_s / peer_s if peer_s > 0 else float("inf")
    met = None
    if goal_ratio is not None:
        met = bool(ratio <= 1.0 / goal_ratio) if higher_is_better else bool(ratio <= goal_ratio)
    row = {"name": name, "what": what, "ours_s": ours_s, "peer": peer, "peer_s": peer_s,
           "ratio": ratio, "goal": goal, "goal_met": met}
    row.update(extra)
    return row


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parent)
        # (results and records are what benchmarks and runs write: not code)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)benchmarks/results",
                                ":(exclude)benchmarks/full_runs"],
                               capture_output=True, text=True,
                               cwd=Path(__file__).resolve().parent.parent).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"BLAS {blas_kernels()}")


def parse_args(description: str, *, peer_gaga: bool = False) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", type=Path, required=True, help="where to write the JSON report")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    if peer_gaga:
        ap.add_argument("--peer-gaga", type=Path, default=None, metavar="PATH",
                        help="a checkout of the published GAGA code (github.com/diyang-lee/GAGA)"
                             ": adds the rows timed against it (skipped without it)")
    return ap.parse_args()


def write_report(out: Path, *, suite: str, title: str, results: list[dict],
                 notes: str = "", **extra) -> dict:
    """Write the report atomically (a failed benchmark never leaves a half-written file)."""
    report = {"suite": suite, "title": title,
              "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": _commit(), "machine": _machine(), "results": results, "notes": notes}
    report.update(extra)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    for r in results:
        met = {True: "met", False: "not met", None: "-"}[r.get("goal_met")]
        print(f"  {r['name']:<40s} ours {r['ours_s']:9.4f} s  {r['peer']:<28s} "
              f"{r['peer_s']:9.4f} s  ratio {r['ratio']:7.3g}  goal {r.get('goal', '')} {met}")
    return report
