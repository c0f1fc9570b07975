"""Check that ``book/_toc.yml`` lists every notebook exactly once, and that each was executed.

Every ``notebooks/<part>/<name>.ipynb`` must appear in the table of contents as
``executed/<part>/<name>`` (the executed copy that the book renders), and that copy must exist.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def toc_files(toc: dict) -> list[str]:
    out: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                out.append(str(node["file"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    out.append(str(toc.get("root", "")))
    walk({k: v for k, v in toc.items() if k != "root"})
    return out


def expected_entries(root: Path) -> list[str]:
    return sorted("executed/" + p.relative_to(root / "notebooks").with_suffix("").as_posix()
                  for p in (root / "notebooks").rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


def main(root: Path = Path(".")) -> int:
    toc = yaml.safe_load((root / "book" / "_toc.yml").read_text(encoding="utf-8"))
    listed = [f.removesuffix(".ipynb") for f in toc_files(toc)]
    problems = []
    for entry in expected_entries(root):
        n = listed.count(entry)
        if n != 1:
            problems.append(f"{entry} is listed {n} time(s) in book/_toc.yml (expected once)")
        if not (root / "book" / (entry + ".ipynb")).exists():
            problems.append(f"book/{entry}.ipynb was not executed (run 'make execute')")
    for entry in listed:
        if entry.startswith("executed/") and entry not in expected_entries(root):
            problems.append(f"book/_toc.yml lists {entry} but notebooks/ has no such notebook")
    if problems:
        print("error: the table of contents and the notebooks disagree:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    print(f"[toc] all {len(expected_entries(root))} notebook(s) listed and executed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
