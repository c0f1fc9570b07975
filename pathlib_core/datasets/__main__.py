"""``python -m pathlib_core.datasets --write-readme | --check-readme | --verify``."""

from __future__ import annotations

import argparse
import sys

from . import check_readme, verify_checksums, write_readme


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pathlib_core.datasets",
                                     description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-readme", action="store_true",
                       help="regenerate data/README.md from pathlib_core/datasets/registry.json")
    group.add_argument("--check-readme", action="store_true",
                       help="exit 1 if data/README.md is out of date")
    group.add_argument("--verify", action="store_true",
                       help="verify the SHA-256 of every raw file in the registry")
    args = parser.parse_args(argv)
    if args.write_readme:
        print(f"wrote {write_readme()}")
        return 0
    if args.check_readme:
        ok = check_readme()
        print("data/README.md is up to date" if ok else
              "data/README.md is stale: run python -m pathlib_core.datasets --write-readme")
        return 0 if ok else 1
    files = verify_checksums()
    print(f"{len(files)} raw files match the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
