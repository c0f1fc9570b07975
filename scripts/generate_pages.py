"""Write the book's three generated pages from the build's JSON records.

    python scripts/generate_pages.py [--build-dir build] [--out book/generated]

- ``scoreboard.md``: every paper claim recorded by the notebooks of this build
  (``build/results/*.json``), grouped by paper, with our value and the verdict;
- ``performance.md``: the benchmark reports written by ``make bench``
  (``benchmarks/results/*.json``), as tables of ratios against the named peers;
- ``status.md``: for each notebook, mode, seed, run time, date and package versions of its
  last execution (``build/status/*.json``), and the recorded full-mode runs
  (``benchmarks/full_runs/*.json``, written by ``scripts/record_full_run.py``).

Pages are regenerated on every ``make book``; they are build outputs and never committed.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

from pathlib_core.experiments.results import claim_anchor  # noqa: E402

PAPERS = [
    ("primer", "Primer: the SVM path and the Lasso homotopy"),
    ("data", "Data"),
    ("s3vm", "S3VM path by infinitesimal annealing (Ogawa et al. 2013)"),
    ("pdgdp", "PDGDP: parametric dual sub-gradient descent"),
    ("selective", "Selective ridge regularization in the dual"),
    ("gaga", "GAGA: the age-path of self-paced learning (Qu et al. 2022)"),
    ("mcm", "Minimal Complexity Machine and conformal kernels"),
]
#: claims about the background the papers build on, not about one of the five papers
BACKGROUND = frozenset({"primer"})
# plain symbols that common text fonts carry (emoji need an emoji font, which not every reader has)
VERDICT_MARK = {"matches": "✓ matches", "differs": "⚠ differs",
                "contradicted": "✗ contradicted", "not run": "○ not run"}


def _mark(verdict: str) -> str:
    """A verdict with its symbol (an unknown verdict, from an old record, as it is)."""
    return VERDICT_MARK.get(verdict, verdict)


def _cell(value) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _load_all(folder: Path) -> list[dict]:
    return _load_all_files(sorted(folder.glob("*.json")))


def _load_results(folder: Path, notebooks: Path) -> list[dict]:
    """The claim records of the book's notebooks: ``<part>__<name>.json`` whose notebook
    ``notebooks/<part>/<name>.ipynb`` exists (a notebook run outside the book, e.g. in an
    interactive session, leaves a file that is not one of the chapters)."""
    out = []
    for p in sorted(folder.glob("*.json")):
        part, _, name = p.stem.partition("__")
        if name and (notebooks / part / f"{name}.ipynb").exists():
            out.extend(_load_all_files([p]))
    return out


def _load_all_files(paths) -> list[dict]:
    out = []
    for p in paths:
        try:
            out.append(json.loads(p.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"error: {p} is not valid JSON: {exc}") from exc
    return out


def _paper_scale(records: list[dict], root: Path | None = None) -> dict:
    """``{claim id: (claim, record, why stale)}`` from the paper-scale records."""
    out = {}
    for rec in records:
        why = provenance.staleness(rec, root or provenance.ROOT)
        for c in rec.get("results", {}).get("claims", []):
            out[c["id"]] = (c, rec, why)
    return out


def _chapter_link(notebook: str, paper: str = "", claim_id: str = "") -> str:
    """A link to the cell that checks a claim: its verdict box on the chapter's page."""
    if not notebook:
        return ""
    part, _, name = notebook.partition("/")
    # (the label may break after its slash: "selective_ridge/" is wider than the column)
    label = f"{part}/<wbr>{name.split('_', 1)[0]}" if name else part
    anchor = f"#{claim_anchor(paper, claim_id)}" if claim_id else ""
    return f'<a href="../executed/{notebook}.html{anchor}">{label}</a>'


#: front matter of a page of wide tables: no right-hand contents column (book.css gives its
#: width to the article); the pages' sections are few and named in their first paragraph
WIDE_PAGE = ["---", "html_theme.sidebar_secondary.remove: true", "---", ""]
#: a value longer than this is shown by its first words, the rest one click away
CLIP = 70


def _clip(text, limit: int = CLIP, prefix: str = "") -> str:
    """A table cell's HTML: ``prefix`` (HTML) and ``text``, or the prefix and the text's
    first words with the whole text in a ``<details>`` (the row stays a few lines tall;
    nothing is cut)."""
    text = " ".join(str(text if text is not None else "").split())
    if len(text) <= limit:
        return prefix + html.escape(text)
    cut = text.rfind(" ", 0, limit)
    head = text[:cut if cut > limit // 2 else limit].rstrip(" ,;:(")
    return ('<details class="sb-more"><summary><span class="sb-head">'
            f"{prefix}{html.escape(head)} …</span></summary>{prefix}{html.escape(text)}"
            "</details>")


def _claims_table(rows: list[dict], full: dict, headline) -> str:
    """One part's claims as a compact HTML table: claim (with the reason behind its verdict
    collapsed under it), the paper's value, ours in this build and at paper scale (each with
    its verdict mark), the verdict, and a link to the cell that checks the claim."""
    body = []
    for c in rows:
        f = full.get(c["id"])
        quick = _clip(c["ours"], prefix=f"{_mark(c['verdict']).split()[0]} ")
        if f is None:
            scale = '<span class="sb-none">no record</span>'
        else:
            fc, _, why = f
            scale = _clip(fc["ours"], prefix=(
                f"{_mark(fc['verdict']).split()[0]} "
                f'<span class="sb-state">({"current" if not why else "stale"})</span> '))
        reason = (f'<details class="sb-why"><summary>why {html.escape(headline(c))}'
                  f"</summary>{html.escape(' '.join(c['reason'].split()))}</details>"
                  if c.get("reason") else "")
        body.append(
            f'<tr><td class="sb-claim">{html.escape(" ".join(c["text"].split()))}{reason}</td>'
            f"<td>{_clip(c['paper_value'], CLIP // 2)}</td><td>{quick}</td><td>{scale}</td>"
            f'<td class="sb-verdict">{html.escape(_mark(headline(c)))}</td>'
            '<td class="sb-where">'
            f"{_chapter_link(c.get('notebook', ''), c['paper'], c['id'])}</td></tr>")
    return ('<table class="table sb-claims"><colgroup><col class="sb-c-claim">'
            '<col class="sb-c-paper"><col class="sb-c-ours"><col class="sb-c-ours">'
            '<col class="sb-c-verdict"><col class="sb-c-where"></colgroup><thead><tr>'
            "<th>claim</th><th>paper</th><th>this build (quick)</th><th>full mode</th>"
            "<th>verdict</th><th>checked in</th></tr></thead><tbody>"
            + "".join(body) + "</tbody></table>")


def scoreboard(results: list[dict], records: list[dict] | None = None,
               root: Path | None = None) -> str:
    """Every claim at both scales: the value and verdict of this build (quick mode) and those
    of the chapter's paper-scale record (current or stale; its date and commit are on the
    status page). The verdict column, and the counts on top, take the paper-scale verdict
    where a current record has the claim, else this build's.

    Layout: counts per part (verdict x part) first; then one compact table per part (claim,
    paper, each scale's value and verdict, the verdict, a link to the cell that checks it).
    A long value shows its first words with the rest one click away, and the reason behind a
    verdict is collapsed under its claim."""
    claims = [c for r in results for c in r.get("claims", [])]
    full = _paper_scale(records or [], root)
    # (no right-hand contents column on this page: the summary links to every part, and the
    # claim tables get its width)
    parts = [*WIDE_PAGE, "(scoreboard)=", "# Reproduction scoreboard", "",
             "Each claim that a chapter checks, with the paper's value, our value in this "
             "build (quick mode: small problems) and in the chapter's recorded full-mode run "
             "(the papers' scale wherever the paper reports an experiment; *current* while its "
             "notebook, code, data, dependencies and parameters are unchanged, see "
             "{ref}`status`), and a verdict. The rows are written by the notebooks when they "
             "run; nothing here is typed in by hand. The verdicts: *matches* (the measurement "
             "meets the criterion the chapter states), *differs* (it misses the criterion), "
             "*contradicted* (the measurement goes against the claim itself) and *not run* "
             "(the experiment is not part of the book). Long values show their first words "
             "(click to read on); the rule behind each verdict is folded under its claim "
             "(\"why\"), and the last column links to the cell that checks the claim.", ""]
    if not claims:
        parts.append("No claims were recorded in this build yet.")
        return "\n".join(parts) + "\n"

    def headline(c):
        f = full.get(c["id"])
        return f[0]["verdict"] if f is not None and not f[2] else c["verdict"]

    known = {k for k, _ in PAPERS}
    order = PAPERS + [(k, k) for k in sorted({c["paper"] for c in claims} - known)]
    titles = {k: (t if k in known else f"Paper {k}") for k, t in order}
    present = [k for k, _ in order if any(c["paper"] == k for c in claims)]
    # the counts: the five papers' claims per part, with the primer's (classic results the
    # papers build on) in a row of their own below the total
    papers = [c for c in claims if c["paper"] not in BACKGROUND]
    background = [c for c in claims if c["paper"] in BACKGROUND]

    def count_row(label, rows):
        return ([label, len(rows)] + [sum(headline(c) == v for c in rows) for v in VERDICT_MARK])

    table = [count_row(f"{{ref}}`{titles[k]} <scoreboard-{k}>`",
                       [c for c in claims if c["paper"] == k])
             for k in present if k not in BACKGROUND]
    table.append(count_row("**the five papers**", papers))
    table += [count_row(f"{{ref}}`{titles[k]} <scoreboard-{k}>` (background)",
                        [c for c in claims if c["paper"] == k])
              for k in present if k in BACKGROUND]
    n_current = sum(1 for c in papers if c["id"] in full and not full[c["id"]][2])
    counts = {v: sum(c["verdict"] == v for c in papers) for v in VERDICT_MARK}
    parts += ["## Summary", "",
              _table(["part", "claims"] + [VERDICT_MARK[v] for v in VERDICT_MARK], table), "",
              f"The counts use the full-mode verdict for the {n_current} of {len(papers)} "
              "claims of the papers whose chapter has a current full-mode record, and this "
              "build's verdict for the others. This build alone gives "
              + ", ".join(f"{counts[v]} {v}" for v in VERDICT_MARK) + "."]
    if background:
        bg = {v: sum(headline(c) == v for c in background) for v in VERDICT_MARK}
        parts += ["", f"The primer's {len(background)} claims (the classic results the "
                  "papers build on) are counted apart: "
                  + ", ".join(f"{n} {v}" for v, n in bg.items() if n) + "."]
    for key in present:
        rows = [c for c in claims if c["paper"] == key]
        parts += ["", f"(scoreboard-{key})=", f"## {titles[key]}", "",
                  _claims_table(rows, full, headline)]
    return "\n".join(parts) + "\n"


def _fmt_seconds(x) -> str:
    if x is None:
        return ""
    x = float(x)
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def _fmt_number(x) -> str:
    return "" if x is None else f"{float(x):.3g}"


def _fmt_duration(x) -> str:
    if x is None:
        return ""
    x = float(x)
    if x < 120:
        return f"{x:.0f} s"
    if x < 7200:
        return f"{x / 60:.1f} min"
    return f"{x / 3600:.2f} h"


def performance(reports: list[dict]) -> str:
    parts = [*WIDE_PAGE, "(performance)=", "# Performance", "",
             "Each speed target is measured as the ratio of our time to that of a named peer "
             "(another program, or a target) timed in the same run on the same machine, the "
             "best of several runs unless a note says otherwise: a ratio below 1 means ours is "
             "faster. Each goal is a bound on that ratio. Where and when each report was "
             "measured is on the {ref}`status` page.", ""]
    if not reports:
        parts.append("No benchmark report has been recorded yet.")
        return "\n".join(parts) + "\n"
    for rep in reports:
        parts += ["", f"## {rep.get('title', rep.get('suite', 'benchmark'))}", ""]
        if rep.get("mode"):
            parts += [f"*{_cell(rep['mode'])} mode*", ""]
        rows = []
        for r in rep.get("results", []):
            met = r.get("goal_met")
            # a scaling row compares a fitted log-log slope with a goal slope: no time unit
            fmt = _fmt_number if "slope" in r else _fmt_seconds
            ours = r.get("slope", r.get("ours_s"))
            what = _cell(r.get("what", ""))
            peer_time = fmt(r.get("peer_s"))
            rows.append([_cell(r.get("name", "")) + (f'<br><span class="perf-what">{what}'
                                                      "</span>" if what else ""),
                         fmt(ours),
                         _cell(r.get("peer", "")) + (f"<br>{peer_time}" if peer_time else ""),
                         "" if r.get("ratio") is None else f"{float(r['ratio']):.3g}",
                         r.get("goal", ""),
                         {True: "✓ met", False: "✗ missed", None: ""}.get(met, str(met))])
        parts.append(_table(["benchmark", "ours", "peer", "ratio (ours / peer)", "goal",
                             "goal met"], rows))
        notes = rep.get("notes")
        if notes:
            parts += ["", _cell(notes)]
    return "\n".join(parts) + "\n"


def full_runs(records: list[dict]) -> list[str]:
    """The status page's section on recorded ``MODE=full`` runs."""
    parts = ["", "## Recorded full-mode runs", "",
             "A full-mode run reproduces a chapter at the papers' scale and can take hours, so "
             "the default build does not redo it: the runs were made separately and recorded, "
             "and the chapters show their numbers in the *full mode* rows of the verdict "
             "boxes. Date and code version of each record are listed here. A record is "
             "*current* when the notebook's code, every `pathlib_core` module it imports, the "
             "data registry, the pinned dependencies and the parameters are those it was made "
             "from (their hashes are in the record), *stale* otherwise; `make full` in the "
             "repository re-runs the stale ones.", ""]
    if not records:
        parts.append("None recorded yet.")
        return parts
    total = sum(float(r.get("seconds") or 0) for r in records)
    n_current = sum(not provenance.staleness(r) for r in records)
    parts += [f"{len(records)} records, {n_current} current; their run times add up to "
              f"{_fmt_duration(total)}.", ""]
    rows = []
    for r in sorted(records, key=lambda r: r["notebook"]):
        why = provenance.staleness(r)
        # (file names without their folders: the table stays within the column)
        short = [w.split(": ", 1)[0] + ": " + w.split(": ", 1)[1].rsplit("/", 1)[-1]
                 if ": " in w else w for w in why]
        state = "current" if not why else "stale: " + (
            short[0] if len(short) == 1 else f"{short[0]} (+{len(short) - 1} more)")
        claims = r.get("results", {}).get("claims", [])
        counts = {}
        for c in claims:
            counts[c.get("verdict")] = counts.get(c.get("verdict"), 0) + 1
        # counts by verdict, in the scoreboard's order and symbols ("✓ 2 · ⚠ 1")
        verdicts = " · ".join(f"{VERDICT_MARK.get(v, v).split()[0]} {counts[v]}"
                              for v in [*VERDICT_MARK, *sorted(set(counts) - set(VERDICT_MARK))]
                              if v in counts) or "none"
        time = _fmt_duration(r.get("seconds"))
        params = r.get("parameters") or {}
        extra = []
        if len(r.get("attempt_seconds") or []) > 1:
            extra.append(f"{len(r['attempt_seconds'])} attempts, resumed")
        if params.get("N_JOBS"):
            extra.append(f"{params['N_JOBS']} workers")
        # the checkpoint folder is a path on the machine that ran it: where, not how
        shown = {k: v for k, v in params.items() if k not in ("CHECKPOINT", "N_JOBS")}
        extra += [f"{k}={v}" for k, v in sorted(shown.items())]
        if extra:
            time += f" ({', '.join(extra)})"
        rows.append([_chapter_link(r["notebook"]), r.get("seed"), time,
                     r.get("date"), f"`{r.get('commit')}`", state, verdicts])
    parts.append(_table(["notebook", "seed", "time", "date", "commit", "state",
                         "claims (verdicts)"], rows))
    return parts


def bench_reports(reports: list[dict]) -> list[str]:
    """The status page's section on the benchmark reports of the performance page."""
    parts = ["", "## Benchmark reports", "",
             "Where and when each report of the {ref}`performance` page was measured.", ""]
    if not reports:
        parts.append("None recorded yet.")
        return parts
    with_mode = any(rep.get("mode") for rep in reports)  # (a column only where one is set)
    rows = [[rep.get("title", rep.get("suite", ""))]
            + ([rep.get("mode", "")] if with_mode else [])
            + [rep.get("date", ""), f"`{rep['commit']}`" if rep.get("commit") else "",
               rep.get("machine", "")] for rep in reports]
    parts.append(_table(["benchmark"] + (["mode"] if with_mode else [])
                        + ["date", "commit", "machine"], rows))
    return parts


def status(records: list[dict], recorded: list[dict] | None = None,
           reports: list[dict] | None = None) -> str:
    parts = [*WIDE_PAGE, "(status)=", "# Build status", "",
             "How each executed chapter in this book was last run: its mode (`quick` or "
             "`full`), seed, wall-clock time, date, and the versions of the key packages.", ""]
    if not records:
        parts.append("No notebook has been executed in this build.")
        parts += full_runs(recorded or []) + bench_reports(reports or [])
        return "\n".join(parts) + "\n"
    total = sum(float(r.get("seconds", 0)) for r in records)
    packages = ["python", "numpy", "scipy", "scikit-learn", "cvxpy", "matplotlib"]
    # versions shared by every notebook are stated once; only those that differ get a column
    shared = {p: records[0].get("versions", {}).get(p) for p in packages
              if len({r.get("versions", {}).get(p) for r in records}) == 1}
    varying = [p for p in packages if p not in shared]
    rows = []
    for r in sorted(records, key=lambda r: r["notebook"]):
        v = r.get("versions", {})
        rows.append([_chapter_link(r["notebook"]), r.get("mode"), r.get("seed"),
                     f"{float(r.get('seconds', 0)):.1f} s", r.get("date"),
                     "yes" if r.get("results_written") else "no"]
                    + [v.get(p) for p in varying])
    if shared:
        parts += ["Every notebook ran with " + ", ".join(
            f"{p} {shared[p]}" for p in packages if p in shared) + ".", ""]
    parts.append(_table(["notebook", "mode", "seed", "time", "date", "results saved"]
                        + varying, rows))
    parts += ["", f"{len(records)} notebook{'s' if len(records) != 1 else ''}, "
              f"{_fmt_duration(total)} of execution in all."]
    parts += full_runs(recorded or []) + bench_reports(reports or [])
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", type=Path, default=Path("build"))
    ap.add_argument("--bench-dir", type=Path, default=Path("benchmarks/results"))
    ap.add_argument("--full-dir", type=Path, default=Path("benchmarks/full_runs"))
    ap.add_argument("--out", type=Path, default=Path("book/generated"))
    ap.add_argument("--notebooks-dir", type=Path, default=Path("notebooks"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    pages = {
        "scoreboard.md": scoreboard(_load_results(args.build_dir / "results",
                                                  args.notebooks_dir),
                                    _load_all(args.full_dir)),
        "performance.md": performance(_load_all(args.bench_dir)),
        "status.md": status(_load_all(args.build_dir / "status"), _load_all(args.full_dir),
                            _load_all(args.bench_dir)),
    }
    for name, text in pages.items():
        target = args.out / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    print(f"[pages] wrote {', '.join(pages)} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
