"""Write (or compare) the SHA-256 manifest of the figures a build produced.

    python scripts/figure_manifest.py write   [--build-dir build]   # build/figures/MANIFEST.sha256
    python scripts/figure_manifest.py compare A B                   # exit 1 if they differ
    python scripts/figure_manifest.py verify-html book/_build/html  # every SVG in the HTML is a
                                                                    # figure of this build

Figures are build outputs: every notebook saves its figures through
``pathlib_core.experiments.plotting.show`` into ``build/figures/<notebook>/`` and displays the
saved file.
Two builds from the same sources must give identical manifests (``make check-repro``).
A figure of measured wall-clock times (saved with ``timing=True`` as ``<name>.timing.svg``) is
listed by name only, as ``timing  <path>``: its presence is compared, its bytes are not.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

TIMING_SUFFIX = ".timing.svg"  # as experiments.plotting.TIMING_SUFFIX (scripts do not import it)


def manifest_lines(root: Path) -> list[str]:
    lines = []
    for p in sorted(root.rglob("*.svg")):
        rel = p.relative_to(root).as_posix()
        if rel.endswith(TIMING_SUFFIX):
            lines.append(f"timing  {rel}")
        else:
            lines.append(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {rel}")
    return lines


def cmd_write(build: Path) -> int:
    root = build / "figures"
    root.mkdir(parents=True, exist_ok=True)
    lines = manifest_lines(root)
    (build / "figures.sha256").write_text("\n".join(lines) + ("\n" if lines else ""))
    print(f"[manifest] {len(lines)} figure(s) -> {build / 'figures.sha256'}")
    return 0


def cmd_compare(a: Path, b: Path) -> int:
    la, lb = a.read_text().splitlines(), b.read_text().splitlines()
    if la == lb:
        print(f"[manifest] identical: {len(la)} figure(s)")
        return 0
    only_a, only_b = sorted(set(la) - set(lb)), sorted(set(lb) - set(la))
    print(f"[manifest] DIFFERENT: {len(only_a)} line(s) only in {a}, {len(only_b)} only in {b}",
          file=sys.stderr)
    for line in only_a[:20]:
        print(f"  - {line}", file=sys.stderr)
    for line in only_b[:20]:
        print(f"  + {line}", file=sys.stderr)
    return 1


def _svg_body(text: str) -> str:
    start = text.find("<svg")
    return text[start:].strip() if start >= 0 else text.strip()


def _referenced_images(html: Path) -> set[str]:
    """Names of the ``_images/*.svg`` files some HTML page of the book refers to."""
    names = set()
    for page in html.rglob("*.html"):
        names.update(re.findall(r"_images/([^\"'?#\s]+\.svg)", page.read_text(encoding="utf-8")))
    return names


def cmd_verify_html(html: Path, build: Path) -> int:
    """Every SVG a page shows is a figure of this build; unreferenced leftovers are removed.

    Sphinx never deletes files from ``_images``: an incremental build keeps the images of
    earlier builds that no page shows any more. Those are deleted (and counted) rather than
    reported, since no reader can see them.
    """
    figures = {_svg_body(p.read_text(encoding="utf-8"))
               for p in (build / "figures").rglob("*.svg")}
    images = sorted((html / "_images").glob("*.svg")) if (html / "_images").exists() else []
    shown = _referenced_images(html)
    stale = [p for p in images if p.name not in shown]
    for p in stale:
        p.unlink()
    images = [p for p in images if p.name in shown]
    stray = [p for p in images if _svg_body(p.read_text(encoding="utf-8")) not in figures]
    if stray:
        print(f"[manifest] {len(stray)} SVG image(s) in the HTML are not figures of this build:",
              file=sys.stderr)
        for p in stray[:20]:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"[manifest] all {len(images)} SVG image(s) shown in the HTML are figures of this "
          f"build ({len(stale)} unreferenced leftover(s) of earlier builds removed)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--build-dir", type=Path, default=Path("build"))
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    v = sub.add_parser("verify-html")
    v.add_argument("html", type=Path)
    v.add_argument("--build-dir", type=Path, default=Path("build"))
    args = ap.parse_args(argv)
    if args.cmd == "write":
        return cmd_write(args.build_dir)
    if args.cmd == "compare":
        return cmd_compare(args.a, args.b)
    return cmd_verify_html(args.html, args.build_dir)


if __name__ == "__main__":
    sys.exit(main())
