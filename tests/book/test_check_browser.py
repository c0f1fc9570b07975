"""The headless-browser check must be able to fail: raw TeX, broken images, console errors."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import check_browser  # noqa: E402

HAVE_BROWSER = bool(check_browser._find(check_browser.CHROMIUM_CANDIDATES, "chromium")
                    and check_browser._find(check_browser.DRIVER_CANDIDATES, "chromedriver"))


def test_raw_tex_pattern():
    assert check_browser.RAW_TEX.search(r"an untypeset \(x^2\) formula")
    assert check_browser.RAW_TEX.search(r"$$ a $$")
    assert check_browser.RAW_TEX.search(r"\begin{align} x \end{align}")
    assert not check_browser.RAW_TEX.search("a price of $5 and 10% off")
    # a formula that Markdown broke apart leaves its commands in the prose
    assert check_browser.TEX_COMMAND.findall(r"• \lvert X\rvert \lvert w\rvert)/n$") == [
        r"\lvert", r"\rvert", r"\lvert", r"\rvert"]
    assert not check_browser.TEX_COMMAND.search(r"a path C:\ or a single \n escape")


def test_pages_skip_assets(tmp_path):
    for rel in ["index.html", "a/b.html", "_static/x.html", "search.html", "genindex.html"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<html></html>")
    assert check_browser._pages(tmp_path) == ["a/b.html", "index.html"]


def test_redirect_stub_is_checked_by_its_target(tmp_path):
    stub = '<meta http-equiv="Refresh" content="0; url=intro.html" />'
    assert check_browser.redirect_target(stub) == "intro.html"
    assert check_browser.redirect_target("<html><body>x</body></html>") is None
    (tmp_path / "index.html").write_text(stub)
    # no browser is needed for a stub: a present target passes, a missing one fails
    assert check_browser.check_page(None, "", "index.html", tmp_path / "s", tmp_path) == [
        "redirect to missing page 'intro.html'"]
    (tmp_path / "intro.html").write_text("<html></html>")
    assert check_browser.check_page(None, "", "index.html", tmp_path / "s", tmp_path) == []


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BROWSER, reason="Debian chromium and chromium-driver not installed")
def test_bad_pages_fail_and_good_page_passes(tmp_path):
    site = tmp_path / "html"
    site.mkdir()
    (site / "index.html").write_text("<html><head><title>ok</title></head>"
                                     "<body><main><p>plain text</p></main></body></html>")
    (site / "rawtex.html").write_text("<html><body><main><p>see \\(x^2\\)</p></main>"
                                      "</body></html>")
    (site / "broken.html").write_text("<html><body><main><img src='missing.png'></main>"
                                      "</body></html>")
    (site / "jserror.html").write_text("<html><body><main>x</main>"
                                       "<script>undefinedFunction()</script></body></html>")
    # a valid image (1x1 SVG) whose alt text is its file name, as Sphinx writes without `alt`
    (site / "dot.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg' width='1' "
                                  "height='1'><rect width='1' height='1'/></svg>")
    (site / "noalt.html").write_text("<html><body><main><img src='dot.svg' "
                                     "alt='_images/dot.svg'></main></body></html>")
    (site / "alt.html").write_text("<html><body><main><img src='dot.svg' alt='A black dot.'>"
                                   "</main></body></html>")
    long_line = "x = " + "1 + " * 120 + "1"
    (site / "wide.html").write_text("<html><body><main style='width:600px'>"
                                    f"<pre style='overflow:auto'>{long_line}</pre>"
                                    "</main></body></html>")
    if not shutil.which("chromium") and not Path("/usr/bin/chromium").exists():
        pytest.skip("no chromium")
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_browser.py"), str(site),
                          "--screenshots", str(tmp_path / "shots")],
                         capture_output=True, text=True, timeout=240)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "ok   index.html" in out
    assert "FAIL rawtex.html" in out and "raw TeX" in out
    assert "FAIL broken.html" in out and "broken image" in out
    assert "FAIL jserror.html" in out and "console error" in out
    assert "FAIL noalt.html" in out and "without alt text" in out
    assert "ok   alt.html" in out
    # a block wider than the column is listed, and fails only with --fail-on-wide
    assert "ok   wide.html" in out and "wider than the text column" in out
    assert len(list((tmp_path / "shots").glob("*.png"))) == 7
    strict = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_browser.py"),
                             str(site), "--screenshots", str(tmp_path / "shots2"),
                             "--fail-on-wide"], capture_output=True, text=True, timeout=240)
    assert "FAIL wide.html" in strict.stdout, strict.stdout + strict.stderr
