"""Helpers for driving the real `adk` and `yuxi` commands in subprocesses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
_RECORDS = Path(tempfile.mkdtemp(prefix="yuxi-cli-records-"))
"""Where agent folders keep their database and workspaces in tests, not the checkout."""


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: this checkout importable, no real model."""
    env = {k: v for k, v in os.environ.items() if k not in ("YUXI_MODEL", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("YUXI_DATABASE_URL", f"sqlite+aiosqlite:///{_RECORDS / 'yuxi.db'}")
    env.setdefault("YUXI_WORKSPACES", str(_RECORDS / "workspaces"))
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def run_command(
    args: list[str],
    *,
    stdin: str | None = None,
    cwd: Path = REPO,
    timeout: float = 120,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Runs a command of this checkout (`adk`, `yuxi`, a sample) the way a user would."""
    return subprocess.run(
        args,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=cli_env(**env),
        timeout=timeout,
    )
