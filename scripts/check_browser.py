"""Open every page of the built book in headless Chromium and check that it reads.

    python scripts/check_browser.py book/_build/html --screenshots build/screenshots

For each HTML page listed in the book's navigation (every chapter and generated page), the
page is served from a local HTTP server on 127.0.0.1 and loaded in headless Chromium
(Debian's ``chromium`` and ``chromium-driver`` packages, driven by Selenium with an explicit
driver path so that nothing is downloaded). A page fails when

- it does not load (HTTP error, timeout);
- the browser console reports an error (``SEVERE`` log entries), e.g. a missing script or
  font, or a request that left the machine;
- MathJax did not typeset it: raw TeX delimiters (``$$``, ``\\[``, ``\\(``, ``\\begin{``)
  remain in the visible text, a TeX command (``\\lvert``, ``\\frac``, ...) stands in the
  prose outside code (a formula Markdown broke apart, e.g. by a line starting with "+ "),
  or MathJax failed to start;
- an image is broken (``naturalWidth == 0``);
- an image in the page's text has no meaningful alt text (none, empty, or a file name, which
  is what Sphinx writes when a figure has no ``alt`` option);
- with ``--fail-on-wide``, a code cell or output is wider than the text column (its lines
  overflow the block and are cut off at the right edge). Without the flag such blocks are
  only listed.

A screenshot of each page is saved (with ``--full-page``, the whole page as numbered tiles of
the 1400 x 1600 window, for reading every page as a reader sees it; ``--pages`` checks only
the pages named). Exit status 0 only if every page passes; where Chromium or its driver is
missing the script says what to install and exits 2.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import sys
import threading
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER_CANDIDATES = ("/usr/bin/chromedriver",)
RAW_TEX = re.compile(r"(\$\$|\\\[|\\\(|\\begin\{)")
#: a TeX command left in prose (code and typeset math excluded)
TEX_COMMAND = re.compile(r"\\[A-Za-z]{2,}")


def _find(cands, name):
    for c in cands:
        if Path(c).exists():
            return c
    return shutil.which(name)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # silence the per-request log
        pass


def _serve(root: Path):
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return httpd


def _pages(root: Path) -> list[str]:
    pages = []
    for p in sorted(root.rglob("*.html")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(("_static/", "_sources/", "_images/")) or rel in {"search.html",
                                                                         "genindex.html"}:
            continue
        pages.append(rel)
    return pages


def _make_driver(chromium: str, driver_path: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--window-size=1400,1600"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)


_WAIT_MATHJAX = """
const done = arguments[arguments.length - 1];
const t0 = Date.now();
function poll() {
  if (document.readyState !== 'complete') { return setTimeout(poll, 50); }
  const mj = window.MathJax;
  const hasMath = document.querySelector('.math, .MathJax, mjx-container, div.math') !== null;
  if (!hasMath) { return done({mathjax: 'no math'}); }
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done({mathjax: 'ok'}))
                      .catch(e => done({mathjax: 'error: ' + e}));
    return;
  }
  if (Date.now() - t0 > 15000) { return done({mathjax: 'MathJax did not load'}); }
  setTimeout(poll, 100);
}
poll();
"""


# images of the page's text whose alt text is missing, empty or a file name
_NO_ALT = """
const m = document.querySelector('main') || document.body;
return Array.from(m.querySelectorAll('img')).filter(i => {
  const a = (i.getAttribute('alt') || '').trim();
  return a === '' || /\\.(svg|png|jpe?g|gif)$/i.test(a) || a.includes('_images/');
}).map(i => i.getAttribute('src'));
"""

# the page's prose: text outside code, typeset math, scripts and styles
_PROSE = """
const m = document.querySelector('main') || document.body;
const skip = 'pre, code, mjx-container, script, style, .highlight, .MathJax';
const walker = document.createTreeWalker(m, NodeFilter.SHOW_TEXT);
const out = [];
while (walker.nextNode()) {
  const n = walker.currentNode;
  if (n.parentElement && !n.parentElement.closest(skip)) out.push(n.textContent);
}
return out.join(' ');
"""

# code and output blocks whose content is wider than the block (cut off at the right edge)
_WIDE_BLOCKS = """
const m = document.querySelector('main') || document.body;
return Array.from(m.querySelectorAll('pre')).filter(p => p.scrollWidth > p.clientWidth + 2)
  .map(p => p.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, ''));
"""


_REFRESH = re.compile(r'<meta\s+http-equiv="Refresh"\s+content="\d+;\s*url=([^"]+)"', re.I)


def redirect_target(html: str) -> str | None:
    """The target of a ``<meta http-equiv="Refresh">`` stub page, or None.

    Sphinx writes ``index.html`` as such a stub when the root document is not ``index``.
    A stub navigates away while a script runs, so it is checked by its target instead.
    """
    m = _REFRESH.search(html)
    return m.group(1) if m else None


def save_tiles(driver, target: Path) -> int:
    """Screenshots of the whole page, one window height per tile (``<target>-NN.png``);
    returns the number of tiles."""
    height = int(driver.execute_script(
        "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);"))
    view = int(driver.execute_script("return window.innerHeight;"))
    n = 0
    for top in range(0, max(height, 1), max(view - 40, 1)):
        driver.execute_script(f"window.scrollTo(0, {top});")
        driver.save_screenshot(f"{target}-{n:02d}.png")
        n += 1
    driver.execute_script("window.scrollTo(0, 0);")
    return n


def check_page(driver, base: str, rel: str, shots: Path, root: Path | None = None,
               fail_on_wide: bool = False, notes: list[str] | None = None,
               full_page: bool = False) -> list[str]:
    """The problems of one page (empty: it passes); ``notes`` collects what is only listed."""
    problems = []
    notes = [] if notes is None else notes
    if root is not None:
        target = redirect_target((root / rel).read_text(encoding="utf-8", errors="replace"))
        if target is not None:
            dest = (root / rel).parent / target.split("#")[0]
            return [] if dest.is_file() else [f"redirect to missing page {target!r}"]
    driver.get(f"{base}/{rel}")
    state = driver.execute_async_script(_WAIT_MATHJAX)
    if state.get("mathjax", "").startswith(("error", "MathJax did not")):
        problems.append(f"MathJax: {state['mathjax']}")
    title = driver.title or ""
    if "404" in title or "Error" in title:
        problems.append(f"page title {title!r}")
    text = driver.execute_script(
        "const m = document.querySelector('main') || document.body; return m.innerText;")
    raw = RAW_TEX.findall(text or "")
    if raw:
        snippet = (text or "")[max(0, (text or "").find(raw[0]) - 40):][:120]
        problems.append(f"raw TeX not typeset ({len(raw)} delimiter(s)), e.g. {snippet!r}")
    prose = driver.execute_script(_PROSE) or ""
    commands = TEX_COMMAND.findall(prose)
    if commands:
        at = prose.find(commands[0])
        problems.append(f"TeX command(s) in the prose, not typeset: {sorted(set(commands))[:5]}"
                        f", e.g. {prose[max(0, at - 40):at + 40]!r}")
    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => i.complete && i.naturalWidth === 0)"
        ".map(i => i.src);")
    if broken:
        problems.append(f"{len(broken)} broken image(s): {broken[:3]}")
    no_alt = driver.execute_script(_NO_ALT)
    if no_alt:
        problems.append(f"{len(no_alt)} image(s) without alt text: {no_alt[:3]}")
    wide = driver.execute_script(_WIDE_BLOCKS)
    if wide:
        msg = (f"{len(wide)} code/output block(s) wider than the text column, e.g. "
               f"{wide[0][:100]!r}")
        (problems if fail_on_wide else notes).append(msg)
    for entry in driver.get_log("browser"):
        # the browser's own favicon probe is not a request of the page
        if entry.get("level") == "SEVERE" and "favicon.ico" not in entry.get("message", ""):
            problems.append(f"console error: {entry.get('message', '')[:200]}")
    shots.mkdir(parents=True, exist_ok=True)
    stem = shots / rel.replace("/", "__").removesuffix(".html")
    if full_page:
        save_tiles(driver, stem)
    else:
        driver.save_screenshot(f"{stem}.png")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--screenshots", type=Path, default=Path("build/screenshots"))
    ap.add_argument("--fail-on-wide", action="store_true",
                    help="fail on code/output blocks wider than the text column (default: "
                         "list them)")
    ap.add_argument("--full-page", action="store_true",
                    help="save each whole page as tiles of the window (for a read of the book)")
    ap.add_argument("--pages", nargs="*", default=None,
                    help="check only these pages (paths relative to the html folder)")
    args = ap.parse_args(argv)
    if not (args.html / "index.html").exists():
        print(f"error: {args.html}/index.html not found; run 'make book' first", file=sys.stderr)
        return 2
    chromium = _find(CHROMIUM_CANDIDATES, "chromium")
    driver_path = _find(DRIVER_CANDIDATES, "chromedriver")
    if not chromium or not driver_path:
        missing = [n for n, v in (("chromium", chromium), ("chromium-driver", driver_path))
                   if not v]
        print("error: headless browser check cannot run: missing " + ", ".join(missing)
              + ". Install Debian's packages: apt-get install -y chromium chromium-driver",
              file=sys.stderr)
        return 2
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("error: selenium is not installed; run 'make install'", file=sys.stderr)
        return 2

    httpd = _serve(args.html.resolve())
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    driver = _make_driver(chromium, driver_path)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    failures = n_wide = 0
    pages = _pages(args.html) if not args.pages else args.pages
    try:
        for rel in pages:
            try:
                notes: list[str] = []
                problems = check_page(driver, base, rel, args.screenshots, args.html,
                                      fail_on_wide=args.fail_on_wide, notes=notes,
                                      full_page=args.full_page)
            except Exception as exc:  # a page that does not load is a failure, not a crash
                problems = [f"did not load: {type(exc).__name__}: {exc}"[:300]]
            status = "ok" if not problems else "FAIL"
            print(f"[browser] {status:4s} {rel}")
            for p in problems:
                print(f"         - {p}")
            for n in notes:
                print(f"         . {n}")
            n_wide += any("wider than the text column" in n for n in notes)
            failures += bool(problems)
    finally:
        driver.quit()
        httpd.shutdown()
    print(f"[browser] {len(pages) - failures}/{len(pages)} page(s) passed; screenshots in "
          f"{args.screenshots}"
          + (f"; {n_wide} page(s) with blocks wider than the text column (listed, not failed)"
             if n_wide else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
