"""Install the package as a library into a fresh virtual environment and use it.

``make check-install`` (called by CI) runs this script. It creates a clean venv outside the
checkout, runs ``pip install <checkout>`` there (a regular, non-editable install of the
declared dependencies, constrained to the versions of ``requirements.lock``), and then, from a
directory that does not contain the checkout, checks in that environment that

- every module of ``pathlib_core`` imports (the optional extras are *not* installed);
- the event loops are compiled (numba is a declared dependency);
- the dataset registry is shipped as package data, and reading a dataset without the
  ``data`` extra raises an ``ImportError`` that names it (``pip install 'pathlib_core[data]'``);
- a path is computed, pickled and read back from JSON;
- after ``pip install '<checkout>[data]'``, datasets load from the registry.

Exit status 0 when everything holds; the failing check is printed otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BASE_CHECKS = textwrap.dedent(
    r"""
    import importlib, pickle, pkgutil
    import numpy as np
    import pathlib_core
    assert "site-packages" in pathlib_core.__file__, pathlib_core.__file__

    # every module imports without the extras
    names = [m.name for m in pkgutil.walk_packages(pathlib_core.__path__, "pathlib_core.")
             if not m.name.endswith("__main__")]
    for name in names:
        importlib.import_module(name)
    print(f"imported {len(names)} modules")

    # compiled loops
    from pathlib_core.core import linalg
    assert type(linalg.border_add).__name__ == "CPUDispatcher", type(linalg.border_add)
    print("numba: compiled")

    # the registry is package data; reading a dataset without the data extra names the extra
    from pathlib_core import datasets
    assert datasets.REGISTRY_PATH.is_file(), datasets.REGISTRY_PATH
    try:
        datasets.load("breast_cancer")
    except ImportError as exc:
        assert "pathlib_core[data]" in str(exc), str(exc)
        print(f"without the extra: {exc}")
    else:
        raise AssertionError("a dataset loaded without the data extra (pandas)")

    # a path: computed, pickled, written to JSON and read back
    from sklearn.datasets import load_breast_cancer
    from pathlib_core import SolutionPath
    from pathlib_core.core.kernels import rbf_kernel
    from pathlib_core.primer import svm_path
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(y == 1, 1.0, -1.0)
    path = svm_path(rbf_kernel(X[:120], gamma=1.0 / X.shape[1]), y[:120], C_max=1e3)
    back = pickle.loads(pickle.dumps(path))
    c = float(np.sqrt(path.breakpoints[0] * path.breakpoints[-1]))
    assert np.array_equal(back.at(c).alpha, path.at(c).alpha)
    loaded = SolutionPath.from_json(path.to_json())
    assert np.array_equal(loaded.breakpoints, path.breakpoints)
    print(f"svm_path: {len(path)} breakpoints, max KKT residual "
          f"{path.kkt_residuals().max():.1e}; pickle and JSON round trips")
    """
)

DATA_CHECKS = textwrap.dedent(
    r"""
    from pathlib_core import datasets
    for name in ("breast_cancer", "pima"):
        X, y = datasets.load(name)
        print(f"{name}: {X.shape} from {datasets.info(name)['package']}")
    """
)


def run(cmd, **kw):
    shown = [str(c) if "\n" not in str(c) else "<checks>" for c in cmd]
    print("+", " ".join(shown), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter for the fresh venv")
    args = ap.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pathlib-core-install-") as tmp:
        env_dir = Path(tmp) / "venv"
        run([args.python, "-m", "venv", str(env_dir)])
        py = env_dir / "bin" / "python"
        run([py, "-m", "pip", "install", "--quiet", "--upgrade", "pip>=24"])
        lock = ["-c", str(ROOT / "requirements.lock")]
        run([py, "-m", "pip", "install", "--quiet", *lock, str(ROOT)])
        run([py, "-c", BASE_CHECKS], cwd=tmp)
        run([py, "-m", "pip", "install", "--quiet", *lock, f"{ROOT}[data]"])
        run([py, "-c", DATA_CHECKS], cwd=tmp)
    print(f"check-install: ok in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
