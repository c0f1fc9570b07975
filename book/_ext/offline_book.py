"""Sphinx extension: keep the book offline, and number its figures per chapter.

Jupyter Book 1 always loads ``sphinx_thebe``, which injects an inline script (declared twice
per page by this Sphinx/Jupyter Book combination, a console error) and a reference to a remote
Thebe bundle. The book has no live kernels, so this extension drops every Thebe script and any
script or stylesheet served from a remote URL from each page. ``make check-browser`` verifies
that no page logs a console error or requests anything outside the machine.

Sphinx numbers figures through the whole book (the third chapter's first figure is "Fig. 5"),
while the chapters number their equations from (1) each. ``_number_figures_per_chapter``
renumbers each page's figures (and tables and code blocks with captions) from 1 in page
order, so that figures and equations follow one convention. The book builds every page anew
(``jupyter-book build --all``), so no page keeps an old number.
"""

REMOTE = ("http://", "https://", "//")


def _is_unwanted(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", "") or "")
    return "thebe" in name.lower() or "THEBE_JS_URL" in body or name.startswith(REMOTE)


def _strip_assets(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if assets:
            context[key] = [a for a in assets if not _is_unwanted(a)]


def _number_figures_per_chapter(app, env):
    """Number each page's figures 1, 2, ... in the order Sphinx found them."""
    for numbers in env.toc_fignumbers.values():
        for figtype, by_id in numbers.items():
            ordered = sorted(by_id, key=lambda i: by_id[i])
            numbers[figtype] = {fid: (k,) for k, fid in enumerate(ordered, start=1)}
    return []


def setup(app):
    app.connect("html-page-context", _strip_assets, priority=900)
    # after Sphinx's own numbering (TocTreeCollector, priority 500)
    app.connect("env-get-updated", _number_figures_per_chapter, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
