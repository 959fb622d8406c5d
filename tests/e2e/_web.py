"""`adk web` as a subprocess on a free loopback port, with its log kept for assertions."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.e2e._cli import BIN, REPO, cli_env, free_port


@contextmanager
def adk_web(
    *args: str, log: Path, agents: str = "agents", cwd: Path = REPO, **env: str
) -> Iterator[str]:
    """Starts `adk web ARGS AGENTS`, yields its base URL once `/list-apps` answers, and
    stops it afterwards. Everything the server prints goes to `log`."""
    port = free_port()
    command = [str(BIN / "adk"), "web", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-reload", *args, agents]
    with log.open("a") as sink:
        process = subprocess.Popen(
            command, cwd=cwd, env=cli_env(**env), stdout=sink, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"adk web exited: {log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base}/list-apps", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("adk web did not answer within 60 s")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
