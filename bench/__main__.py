"""Runs every benchmark in quick mode: `python -m bench`."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path


def main() -> None:
    here = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        print(f"\n=== {info.name}")
        module = importlib.import_module(f"bench.{info.name}")
        module.main(["--quick"])


if __name__ == "__main__":
    main()
