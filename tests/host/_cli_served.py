"""`yuxi serve api` as an operator starts it: a real process on a loopback port, this
checkout importable, stopped (terminate, then kill) when the test is done."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import httpx

from tests.e2e._cli import BIN, REPO, cli_env, free_port

__all__ = ["read_stream", "serve_api"]


def _wait_healthy(server: subprocess.Popen[bytes], base: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            server.wait()
            log.seek(0)
            raise RuntimeError(f"yuxi serve api did not start: {log.read().decode()}")
        time.sleep(0.1)


@contextmanager
def serve_api(args: list[str], **env: str) -> Iterator[str]:
    """`yuxi serve api ARGS --port N` with `env` added; yields its base URL once healthy."""
    port = free_port()
    command = [str(BIN / "yuxi"), "serve", "api", *args, "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    # Its log goes to a file, not a pipe: a full pipe would stall the server.
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            command, cwd=REPO, env=cli_env(**env), stdout=subprocess.DEVNULL, stderr=log
        )
        try:
            _wait_healthy(server, base, log)
            yield base
        finally:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()


def read_stream(
    client: httpx.Client, method: str, path: str, into: list[str], **kwargs: object
) -> int:
    """Reads an event stream line by line into `into` (as lines arrive, so a test can
    watch it); returns the status code."""
    with client.stream(method, path, **kwargs) as response:  # type: ignore[arg-type]
        for line in response.iter_lines():
            into.append(line)
        return response.status_code
