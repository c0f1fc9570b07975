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

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path as FsPath
from typing import Any

from ..core.io import atomic_write_text, to_jsonable

__all__ = [
    "VERDICTS",
    "PARTS",
    "Claim",
    "Results",
    "atomic_write_text",
    "build_dir",
    "notebook_id",
    "compare_values",
]

VERDICTS = ("matches", "differs", "not reproduced")
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
    verdict : {"matches", "differs", "not reproduced"}
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
