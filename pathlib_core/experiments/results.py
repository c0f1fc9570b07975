"""Per-notebook results: key numbers and reproduction-scoreboard rows, written atomically.

Every executable chapter records what it measured through one :class:`Results` object and
saves it once, at its end, as ``<build>/results/<notebook-id>.json``. The book's generated
*Reproduction scoreboard* page is assembled from these files, so a claim appears there only if
the notebook that checks it ran to completion in this build: a notebook that fails never
leaves a results file behind (the executor deletes the old one before running, and
:meth:`Results.save` writes through a temporary file and an atomic rename).

Where things go is decided by two environment variables that the executor sets:

``PATHLIB_BUILD_DIR``
    the build folder (default: ``build/`` in the repository that contains the working
    directory, else ``./build``);
``PATHLIB_NOTEBOOK``
    the notebook id, e.g. ``primer/01_svm_path`` (default: ``interactive``).
"""

from __future__ import annotations

import html
import json
import math
import os
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path as FsPath
from typing import Any

from ..core.io import atomic_write_text, to_jsonable
from .display import display as _display

__all__ = [
    "VERDICTS",
    "PARTS",
    "Claim",
    "Results",
    "atomic_write_text",
    "build_dir",
    "notebook_id",
    "compare_values",
    "VerdictBox",
    "PaperScaleRecord",
    "paper_scale_record",
    "claim_anchor",
]

#: The verdicts of a claim: the measurement meets the criterion fixed before the run; misses
#: it; goes against the claim itself (the opposite holds); or the experiment was not run.
VERDICTS = ("matches", "differs", "contradicted", "not run")
#: The part keys a claim may name (``paper=``): one scoreboard section each.
PARTS = ("primer", "s3vm", "pdgdp", "selective", "gaga", "mcm")


def _find_repo_root(start: FsPath) -> FsPath | None:
    for p in [start, *start.parents]:
        if (p / "pyproject.toml").exists() and (p / "pathlib_core").is_dir():
            return p
    return None


def build_dir() -> FsPath:
    """The build folder: ``$PATHLIB_BUILD_DIR``, else ``<repo>/build``, else ``./build``."""
    env = os.environ.get("PATHLIB_BUILD_DIR")
    if env:
        return FsPath(env).resolve()
    root = _find_repo_root(FsPath.cwd().resolve())
    return (root / "build") if root is not None else FsPath("build").resolve()


def notebook_id() -> str:
    """The running notebook's id (``$PATHLIB_NOTEBOOK``), or ``"interactive"``."""
    return os.environ.get("PATHLIB_NOTEBOOK", "interactive")


def compare_values(ours: float, paper: float, *, rel_tol: float = 0.1,
                   abs_tol: float = 0.0) -> str:
    """``"matches"`` if ``|ours - paper| <= max(rel_tol * |paper|, abs_tol)``, else ``"differs"``.

    A helper for numeric claims only; the tolerance is the chapter's documented choice and is
    stored with the claim.
    """
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return "differs"
    return "matches" if abs(ours - paper) <= max(rel_tol * abs(paper), abs_tol) else "differs"


@dataclass
class Claim:
    """One row of the reproduction scoreboard.

    Attributes
    ----------
    id : str
        Stable identifier, unique within the paper (e.g. ``"svm-path-breakpoints"``).
    paper : str
        Paper key (``"primer"``, ``"s3vm"``, ``"pdgdp"``, ``"selective"``, ``"gaga"``,
        ``"mcm"``).
    text : str
        The claim, in our words, with its location in the paper (e.g. "Table 2").
    paper_value : str
        What the paper reports (a number, a range, or a qualitative statement).
    ours : str
        What we measured in this build, with units and the setting.
    verdict : {"matches", "differs", "contradicted", "not run"}
        See :data:`VERDICTS`.
    reason : str
        Why it differs or could not be reproduced, or how "matches" was decided.
    """

    id: str
    paper: str
    text: str
    paper_value: str
    ours: str
    verdict: str
    reason: str = ""
    notebook: str = ""


@dataclass
class Results:
    """Key numbers and scoreboard rows of one notebook run.

    Parameters
    ----------
    mode : {"quick", "full"}
        The protocol the notebook ran with.
    seed : int
        The notebook's seed.
    notebook : str, optional
        Notebook id; defaults to :func:`notebook_id`.
    """

    mode: str
    seed: int
    notebook: str = field(default_factory=notebook_id)
    numbers: dict[str, Any] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    _record_claims: dict | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.mode not in ("quick", "full"):
            raise ValueError(f"mode must be 'quick' or 'full'; got {self.mode!r}")

    def record(self, key: str, value: Any, description: str = "") -> None:
        """Store a key number under ``key`` (with an optional one-line description).

        Returns nothing, so a notebook cell that ends with a record shows no output.
        """
        self.numbers[key] = to_jsonable(value)
        if description:
            self.descriptions[key] = description

    def claim(self, id: str, *, paper: str, text: str, paper_value: Any, ours: Any,
              verdict: str, reason: str = "") -> None:
        """Add a scoreboard row. ``verdict`` must be one of :data:`VERDICTS`.

        Returns nothing (a notebook cell ending with a claim shows no output); the rows are
        in :attr:`claims`.
        """
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {verdict!r}")
        if paper not in PARTS:
            raise ValueError(f"paper must be one of the part keys {PARTS}; got {paper!r} "
                             "(cite the publication in the claim's text)")
        if verdict != "matches" and not reason:
            raise ValueError(f"claim {id!r}: a verdict of {verdict!r} needs a reason")
        if any(c.id == id and c.paper == paper for c in self.claims):
            raise ValueError(f"claim id {id!r} is already recorded for paper {paper!r}")
        row = Claim(id=id, paper=paper, text=text, paper_value=str(paper_value),
                    ours=str(ours), verdict=verdict, reason=reason, notebook=self.notebook)
        self.claims.append(row)
        _display(VerdictBox(row, self.mode, self._recorded(id)))

    def _recorded(self, id: str) -> dict | None:
        """The claim ``id`` in this notebook's paper-scale record, in quick mode (``None``
        in full mode, where this run is the paper-scale one, or without a record)."""
        if self.mode != "quick":
            return None
        if self._record_claims is None:
            rec = paper_scale_record(self.notebook)
            claims = rec.get("results", {}).get("claims", []) if rec is not None else []
            # (each claim carries whether its record still describes this notebook)
            self._record_claims = {c["id"]: dict(c, stale=not rec.current)
                                   for c in claims if "id" in c}
        return self._record_claims.get(id)

    def show_summary(self) -> None:
        """Display the chapter's claims as a table: claim, verdict in this run and, in a
        quick-mode run, the verdict of the paper-scale record (for a discussion section).

        Returns nothing; outside a notebook the table is printed.
        """
        import pandas as pd

        from .tables import show_table

        rows = []
        for c in self.claims:
            rec = self._recorded(c.id)
            row = {"claim": c.text, "this run": c.verdict}
            if self.mode == "quick":
                row["full mode"] = (("" if not rec else rec.get("verdict", "")
                                       + (" (stale record)" if rec.get("stale") else ""))
                                      or "no record")
            rows.append(row)
        if not rows:
            raise ValueError("show_summary: this notebook has recorded no claim yet")
        show_table(pd.DataFrame(rows, index=[c.id for c in self.claims]),
                   caption="The chapter's claims and their verdicts")

    def to_dict(self) -> dict:
        return {
            "notebook": self.notebook,
            "mode": self.mode,
            "seed": self.seed,
            "numbers": to_jsonable(self.numbers),
            "descriptions": dict(self.descriptions),
            "claims": [asdict(c) for c in self.claims],
        }

    def save(self, directory=None) -> FsPath:
        """Write ``<build>/results/<notebook>.json`` atomically and return its path."""
        base = FsPath(directory) if directory is not None else build_dir() / "results"
        target = base / (self.notebook.replace("/", "__") + ".json")
        return atomic_write_text(target, json.dumps(self.to_dict(), indent=2, sort_keys=True))


def claim_anchor(paper: str, claim_id: str) -> str:
    """The HTML id of a claim's verdict box (the scoreboard links to it)."""
    safe = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in f"{paper}-{claim_id}")
    return "claim-" + safe.lower()


#: the admonition class of each verdict (colours of the book's theme)
_BOX_CLASS = {"matches": "tip", "differs": "warning", "contradicted": "danger",
              "not run": "note"}


class VerdictBox:
    """The verdict of one claim, shown where the notebook checks it.

    A box with the claim, the paper's value, the value measured in this run and, in a
    quick-mode run, the value and verdict of the paper-scale record (whose currency the
    scoreboard states), and the reason. Rendered as HTML in the book; plain text elsewhere.
    """

    def __init__(self, claim: Claim, mode: str, recorded: dict | None = None):
        self.claim, self.mode, self.recorded = claim, mode, recorded

    def _rows(self) -> list[tuple[str, str, str]]:
        c = self.claim
        scale = "this run (quick mode)" if self.mode == "quick" else "this run (full mode)"
        rows = [("paper", c.paper_value, ""), (scale, c.ours, c.verdict)]
        if self.recorded is not None:
            stale = " (stale: the code changed since)" if self.recorded.get("stale") else ""
            rows.append((f"full-mode run (recorded){stale}",
                         str(self.recorded.get("ours", "")),
                         str(self.recorded.get("verdict", ""))))
        elif self.mode == "quick":
            rows.append(("full-mode run (recorded)", "no record of this claim", ""))
        return rows

    def __repr__(self) -> str:
        c = self.claim
        lines = [f"[{c.verdict}] {c.text}"]
        lines += [f"  {who}: {what}" + (f"  ({v})" if v else "") for who, what, v in
                  self._rows()]
        if c.reason:
            lines.append(f"  reason: {c.reason}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        c = self.claim
        e = html.escape
        cls = _BOX_CLASS.get(c.verdict, "note")
        body = "".join(
            f"<tr><th>{e(who)}</th><td>{e(what)}</td><td>{e(v)}</td></tr>"
            for who, what, v in self._rows())
        reason = (f"<details><summary>How the verdict is reached</summary><p>{e(c.reason)}"
                  "</p></details>" if c.reason else "")
        part = e(c.paper)
        return (f'<div class="admonition {cls} verdict-box" '
                f'id="{claim_anchor(c.paper, c.id)}">'
                f'<p class="admonition-title">Claim: {e(c.text)}</p>'
                '<table class="table" style="width:100%;table-layout:fixed;'
                'overflow-wrap:anywhere"><colgroup><col style="width:24%"><col>'
                '<col style="width:17%"></colgroup><thead><tr><th></th><th>value</th>'
                f'<th>verdict</th></tr></thead><tbody>{body}</tbody></table>{reason}'
                f'<p><a href="../../generated/scoreboard.html#scoreboard-{part}">'
                f"Scoreboard row</a> (claim <code>{e(c.id)}</code>)</p></div>")


class PaperScaleRecord(dict):
    """A chapter's paper-scale record (``benchmarks/full_runs/<notebook>.json``), as a dict.

    :attr:`stale` lists why the record no longer describes this notebook (empty: current);
    :meth:`summary` is the sentence a chapter prints above the recorded numbers. Commit,
    date and machine are left to the book's *Build status* page.
    """

    def __init__(self, data: dict, stale: list[str]):
        super().__init__(data)
        self.stale = list(stale)

    @property
    def current(self) -> bool:
        return not self.stale

    def summary(self, width: int | None = 88) -> str:
        """One paragraph: seed, wall time, workers and whether the record is current,
        wrapped to ``width`` characters (``None``: one line)."""
        jobs = (self.get("parameters") or {}).get("N_JOBS") or 1
        state = ("current: the notebook, the package code it uses, the data and the "
                 "parameters are those of this build" if self.current else
                 "stale: " + _what_changed(self.stale) + " since it was recorded")
        text = (f"Full-mode run: seed {self.get('seed')}, "
                f"{self.get('seconds', 0) / 60:.1f} min wall time with {jobs} worker "
                f"process{'es' if jobs != 1 else ''}; {state}.")
        return text if width is None else textwrap.fill(text, width)


def _what_changed(why: list[str]) -> str:
    """The reasons a record is stale (``provenance.staleness``) in words, without paths:
    "the notebook's code and the package code changed"."""
    kinds: list[str] = []
    for w in why:
        path = w.split(": ", 1)[1] if ": " in w else ""
        kind = ("the notebook's code" if path.startswith("notebooks/") else
                "the package code" if path.startswith("pathlib_core/") and
                not path.endswith(".json") else
                "the data registry" if path.endswith("registry.json") else
                "the pinned dependencies" if path == "requirements.lock" else
                "the parameters" if w == "parameters changed" else
                "its inputs")
        if kind not in kinds:
            kinds.append(kind)
    if not kinds:
        return "its inputs changed"
    return (", ".join(kinds[:-1]) + " and " + kinds[-1] if len(kinds) > 1 else kinds[0]) \
        + " changed"


def paper_scale_record(notebook: str | None = None) -> PaperScaleRecord | None:
    """The paper-scale record of ``notebook`` (default: the running one), or ``None``.

    Parameters
    ----------
    notebook : str, optional
        Notebook id, e.g. ``"mcm/03_algorithm_and_reproduction"``.

    Returns
    -------
    PaperScaleRecord or None
        ``None`` when the repository has no record of the notebook.
    """
    nb = notebook or notebook_id()
    root = _find_repo_root(FsPath(__file__).resolve())
    if root is None:
        return None
    path = root / "benchmarks" / "full_runs" / (nb.replace("/", "__") + ".json")
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    stale: list[str] = []
    script = root / "scripts" / "provenance.py"
    if script.is_file():
        import importlib.util

        spec = importlib.util.spec_from_file_location("_pathlib_provenance", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        stale = module.staleness(data, root)
    return PaperScaleRecord(data, stale)
