"""Sphinx extension: keep the book offline.

Jupyter Book 1 always loads ``sphinx_thebe``, which injects an inline script (declared twice
per page by this Sphinx/Jupyter Book combination, a console error) and a reference to a remote
Thebe bundle. The book has no live kernels, so this extension drops every Thebe script and any
script or stylesheet served from a remote URL from each page. ``make check-browser`` verifies
that no page logs a console error or requests anything outside the machine.
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


def setup(app):
    app.connect("html-page-context", _strip_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
