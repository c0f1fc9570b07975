"""Optional online path: the papers' original OpenML datasets, cached with checksums.

The default build never calls this module. Protocol (the same as OpenML's REST API v1):

1. ``GET {OPENML_BASE_URL}/api/v1/json/data/{data_id}`` -> the description; its
   ``file_id`` and ``md5_checksum`` give the file and its published MD5;
2. ``GET {OPENML_BASE_URL}/data/v1/download/{file_id}`` -> the ARFF file.

An explicit ``url`` skips step 1 (then only ``sha256``, if given, is checked). The download
streams to a temporary file *inside* the cache directory, is checked for completeness
against ``Content-Length``, against the published MD5 and against ``sha256`` (if given),
and only then renamed into place (atomic on POSIX), so a failed or truncated download never
leaves a file that a later call could mistake for a cache hit. A sidecar
``openml_<id>.json`` records the SHA-256 of the cached file; a cache hit re-verifies it.

Tests point :data:`OPENML_BASE_URL` (a module constant of
``pathlib_core.datasets._online``) at a local server.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import numbers
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from ._core import REPO_ROOT, registry, sha256_file

OPENML_BASE_URL = "https://api.openml.org"
#: downloads go to ``data/cache/`` of a repository checkout, else to the user's cache directory
_USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pathlib_core"
DEFAULT_CACHE_DIR = (REPO_ROOT / "data" / "cache" if (REPO_ROOT / "data").is_dir()
                     else _USER_CACHE)
_CHUNK = 1 << 16


def online_sources() -> dict:
    """The registry's ``online`` section: OpenML name -> id and offline stand-in."""
    return registry()["online"]


def _resolve_id(data_id) -> int:
    if isinstance(data_id, str):
        key = data_id.strip().lower()
        table = {k.lower(): v for k, v in online_sources().items()}
        if key not in table:
            raise ValueError(f"data_id must be an int or one of {sorted(table)}; "
                             f"got {data_id!r}")
        return int(table[key]["openml_id"])
    if isinstance(data_id, bool) or not isinstance(data_id, numbers.Integral) or data_id < 1:
        raise ValueError(f"data_id must be a positive int (an OpenML data id); got {data_id!r}")
    return int(data_id)


def _get(url: str, timeout: float):
    try:
        return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - http(s) only
    except (TimeoutError, urllib.error.URLError, OSError) as exc:
        raise ValueError(f"url {url!r} could not be fetched: {exc}") from exc


def _describe(data_id: int, timeout: float) -> dict:
    url = f"{OPENML_BASE_URL}/api/v1/json/data/{data_id}"
    with _get(url, timeout) as resp:
        try:
            desc = json.loads(resp.read().decode("utf-8"))["data_set_description"]
        except (ValueError, KeyError, http.client.HTTPException, OSError) as exc:
            raise ValueError(f"OpenML description at {url!r} is not valid: {exc}") from exc
    return desc


def _download(url: str, dest_dir: Path, timeout: float) -> tuple[Path, str, str]:
    """Stream ``url`` to a temp file in ``dest_dir``; return (path, sha256, md5)."""
    fd, tmp_name = tempfile.mkstemp(prefix=".part-", dir=dest_dir)
    tmp = Path(tmp_name)
    sha, md5 = hashlib.sha256(), hashlib.md5()  # noqa: S324 - OpenML publishes MD5
    received = 0
    try:
        with os.fdopen(fd, "wb") as out, _get(url, timeout) as resp:
            length = resp.headers.get("Content-Length")
            expected = int(length) if length is not None and length.isdigit() else None
            while True:
                try:
                    block = resp.read(_CHUNK)
                except http.client.IncompleteRead as exc:
                    out.write(exc.partial)
                    received += len(exc.partial)
                    raise ValueError(
                        f"truncated download from {url!r}: received {received} bytes, "
                        f"Content-Length {expected}"
                    ) from exc
                if not block:
                    break
                out.write(block)
                sha.update(block)
                md5.update(block)
                received += len(block)
        if expected is not None and received != expected:
            raise ValueError(f"truncated download from {url!r}: received {received} bytes, "
                             f"Content-Length {expected}")
        if received == 0:
            raise ValueError(f"empty download from {url!r}")
    except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"download from {url!r} failed after {received} bytes: {exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, sha.hexdigest(), md5.hexdigest()


def fetch_openml(data_id, *, cache_dir=None, sha256: str | None = None,
                 url: str | None = None, timeout: float = 60.0) -> Path:
    """Download an OpenML dataset file into a checksummed cache; return its path.

    Parameters
    ----------
    data_id : int or str
        OpenML data id, or a name from the registry's ``online`` section (``"hiva"``).
    cache_dir : path-like, optional
        Cache directory (created if needed); default ``<repo>/data/cache`` (git-ignored).
    sha256 : str, optional
        Expected SHA-256 of the file; checked on download and on every cache hit.
    url : str, optional
        Download this URL instead of asking OpenML for the file (no MD5 check then).
    timeout : float
        Socket timeout in seconds for each request.

    Raises ``ValueError`` on a checksum mismatch, a truncated or failed download, or bad
    arguments; no partial file is ever left in the cache.
    """
    did = _resolve_id(data_id)
    if sha256 is not None and (not isinstance(sha256, str) or len(sha256) != 64
                               or any(c not in "0123456789abcdef" for c in sha256.lower())):
        raise ValueError(f"sha256 must be a 64-character hex string; got {sha256!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
    cache = Path(DEFAULT_CACHE_DIR if cache_dir is None else cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"openml_{did}.arff"
    sidecar = cache / f"openml_{did}.json"
    if target.is_file():
        actual = sha256_file(target)
        recorded = None
        if sidecar.is_file():
            recorded = json.loads(sidecar.read_text(encoding="utf-8")).get("sha256")
        for label, want in (("sha256", sha256), (str(sidecar), recorded)):
            if want is not None and actual != want.lower():
                raise ValueError(f"checksum mismatch for cached file {target} ({label}): "
                                 f"expected sha256 {want.lower()}, got {actual}")
        return target
    md5_expected = None
    if url is None:
        desc = _describe(did, timeout)
        try:
            file_id = int(desc["file_id"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"OpenML description of data_id {did} has no file_id") from exc
        md5_expected = desc.get("md5_checksum")
        url = f"{OPENML_BASE_URL}/data/v1/download/{file_id}"
    tmp, sha_actual, md5_actual = _download(url, cache, timeout)
    try:
        if sha256 is not None and sha_actual != sha256.lower():
            raise ValueError(f"checksum mismatch for download of {url!r} (data_id {did}): "
                             f"expected sha256 {sha256.lower()}, got {sha_actual}")
        if md5_expected and md5_actual != str(md5_expected).lower():
            raise ValueError(f"checksum mismatch for download of {url!r} (data_id {did}): "
                             f"expected OpenML md5 {md5_expected}, got {md5_actual}")
        meta = {"data_id": did, "url": url, "sha256": sha_actual, "md5": md5_actual,
                "bytes": tmp.stat().st_size}
        fd, meta_tmp = tempfile.mkstemp(prefix=".part-", dir=cache)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=1)
        os.replace(meta_tmp, sidecar)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
