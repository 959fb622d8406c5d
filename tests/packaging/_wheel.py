"""The wheel and sdist of this checkout, built once per test session.

Building is the slow part of every test that installs the package (an isolated build
environment, the sdist, then the wheel from the sdist); the packaging test and the
executable docs share one build. Each makes its own virtual environment from it, since
they install different extras.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PIP = ("--quiet", "--no-compile", "--disable-pip-version-check")

_BUILT: dict[Path, Dist] = {}


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path
    seconds: float


def built_dist(factory: pytest.TempPathFactory) -> Dist:
    """The session's wheel and sdist, built at the first call."""
    import time

    base = factory.getbasetemp()
    if base not in _BUILT:
        out = factory.mktemp("dist")
        start = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
            check=True,
            capture_output=True,
            timeout=600,
        )
        (wheel,) = out.glob("adk_yuxi-*.whl")
        (sdist,) = out.glob("adk_yuxi-*.tar.gz")
        _BUILT[base] = Dist(wheel, sdist, time.monotonic() - start)
    return _BUILT[base]


def make_venv(root: Path, requirement: str) -> Path:
    """A fresh virtual environment at `root` with `requirement` installed; its bin dir."""
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", *PIP, requirement],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "bin"
