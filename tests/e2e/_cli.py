"""Helpers for driving the real `adk` and `yuxi` commands: in subprocesses, as a user
runs them, or in this process through click's runner (`yuxi_here`), which skips the
interpreter start and the ADK import (about two seconds of CPU each) for a test about
what a command does rather than how it starts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

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


_HERE = threading.Lock()
"""One in-process command at a time: click's runner swaps the process's stdio, env, cwd."""


def yuxi_here(
    args: list[str], *, stdin: str | None = None, cwd: Path = REPO, **env: str
) -> subprocess.CompletedProcess[str]:
    """`yuxi ARGS` run in this process, answered as `run_command` answers.

    The environment is the child's (`cli_env`), the exit code click's; an exception that
    would print a traceback in a real process puts that traceback in `stderr`.
    """
    from adk_yuxi.cli import main

    wanted = cli_env(**env)
    changes: dict[str, str | None] = {k: v for k, v in wanted.items() if os.environ.get(k) != v}
    changes.update({k: None for k in os.environ if k not in wanted})
    with _HERE, _inside(cwd):
        result = CliRunner().invoke(main, args, input=stdin, env=changes, prog_name="yuxi")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["yuxi", *args], result.exit_code, result.stdout, stderr)


async def yuxi_here_async(
    args: list[str], *, stdin: str | None = None, cwd: Path = REPO, **env: str
) -> subprocess.CompletedProcess[str]:
    """`yuxi_here` from a running event loop (the command runs its own, in a thread)."""
    return await asyncio.to_thread(lambda: yuxi_here(args, stdin=stdin, cwd=cwd, **env))


@contextlib.contextmanager
def _inside(cwd: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)
