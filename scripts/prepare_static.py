"""Copy MathJax 3 (shipped in the pip package ``django-static-mathjax``) into the book.

The book must read offline: no CDN. Jupyter Book's HTML points ``mathjax_path`` at
``mathjax/tex-chtml.js`` (served from ``_static``); this script puts MathJax's ``es5``
folder in ``book/_vendor/mathjax``, which ``html_static_path`` copies there. (Not ``book/_static``:
Jupyter Book 1 would add a script tag for every .js file found under ``_static``.) The copy
is a build output (gitignored) and is refreshed when the installed MathJax version changes.
"""

from __future__ import annotations

import importlib.metadata as md
import shutil
import sys
from pathlib import Path


def main() -> int:
    try:
        import mathjax
    except ImportError:
        print("error: the package django-static-mathjax is not installed; run 'make install'",
              file=sys.stderr)
        return 1
    src = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (src / "tex-chtml.js").exists():
        print(f"error: {src}/tex-chtml.js not found in django-static-mathjax", file=sys.stderr)
        return 1
    dest = Path("book/_vendor/mathjax")
    version = md.version("django-static-mathjax")
    stamp = dest / ".version"
    if stamp.exists() and stamp.read_text() == version:
        return 0
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    stamp.write_text(version)
    print(f"[static] MathJax {version} copied to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
