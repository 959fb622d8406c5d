"""The wheel and sdist of this checkout, and the docs' environment, made once per run.

Building is the slow part of every test that installs the package (an isolated build
environment, the sdist, then the wheel from the sdist); the packaging test and the
executable docs share one build, and under pytest-xdist both workers share it too: the
first to ask builds it in the run's common temporary folder under a file lock, the other
waits for it. Each test makes its own virtual environment from it (they install different
extras), except the docs pages, which share one (`shared_venv`): they only run commands.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PIP = ("--quiet", "--no-compile", "--disable-pip-version-check")


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


def run_dir(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder common to the whole run: the parent of a worker's own."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(target: Path, make: Callable[[Path], object]) -> Path:
    """`target`, made by `make` for the first process of the run that asks; the others
    wait on the lock and reuse it. A failed `make` leaves nothing, so the next asker
    tries again (and reports its own failure)."""
    with target.with_name(target.name + ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = target.with_name(target.name + ".done")
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            make(target)
            done.touch()
    return target


def _build(out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )


def built_dist(factory: pytest.TempPathFactory) -> Dist:
    """The run's wheel and sdist, built at the first call."""
    out = made_once(run_dir(factory) / "dist", _build)
    (wheel,) = out.glob("adk_yuxi-*.whl")
    (sdist,) = out.glob("adk_yuxi-*.tar.gz")
    return Dist(wheel, sdist)


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


def shared_venv(factory: pytest.TempPathFactory, name: str, requirement: str) -> Path:
    """The bin dir of one environment per run holding `requirement`, outside the clone."""
    started = time.monotonic()
    root = made_once(run_dir(factory) / name, lambda target: make_venv(target, requirement))
    print(f"{name}: ready after {time.monotonic() - started:.1f} s")
    return root / "bin"
