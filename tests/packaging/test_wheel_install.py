"""What CI checks of the package as a user gets it: the wheel and the sdist build; the
wheel holds `adk_yuxi` alone; installed into a fresh virtual environment outside the
clone, without extras, every public package imports, a part that needs an extra says
which, and from a folder outside the clone `yuxi demo`, `yuxi create` + `adk run` and
`yuxi serve api` work; then two extras install on top and their parts load.

Nothing of the clone's virtual environment is used by the installed commands: they run
with a clean environment (no PYTHONPATH), from a folder outside the clone. pip's cache
makes repeated runs faster; each phase's time goes to the test's output (`-s`) and to
`phases.txt` in its temporary folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e._cli import REPO, free_port
from tests.packaging._wheel import built_dist
from tests.test_public_api import PUBLIC

pytestmark = pytest.mark.slow

PACKAGES = sorted({*PUBLIC, "adk_yuxi.host", "adk_yuxi.tools.builtin", "adk_yuxi.tools.base"})
# No byte-compiling at install: it was a third of the install time; imports compile
# what they use.
PIP = ("--quiet", "--no-compile", "--disable-pip-version-check")
EXTRA_ONLY = ("asyncpg", "markitdown", "rapidocr_onnxruntime", "numpy", "regex", "pypdfium2")


class Env:
    """A fresh virtual environment and a work folder, both outside the clone."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.work = root / "work"
        self.phases: list[tuple[str, float]] = []

    def environ(self) -> dict[str, str]:
        drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "YUXI_MODEL", "OPENAI_API_KEY")
        env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("YUXI_")}
        env["PATH"] = os.pathsep.join([str(self.venv / "bin"), env.get("PATH", "")])
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def run(self, *args: str, stdin: str | None = None, timeout: float = 300) -> str:
        done = subprocess.run(
            list(args),
            input=stdin,
            capture_output=True,
            text=True,
            cwd=self.work,
            env=self.environ(),
            timeout=timeout,
        )
        assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    def fails(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), capture_output=True, text=True, cwd=self.work, env=self.environ()
        )

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        yield
        self.phases.append((name, time.monotonic() - start))
        line = f"{name}: {self.phases[-1][1]:.1f} s"
        print(line)
        with (self.root / "phases.txt").open("a") as out:
            out.write(line + "\n")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    root = tmp_path_factory.mktemp("wheel-install")
    assert not root.resolve().is_relative_to(REPO.resolve())
    made = Env(root)
    made.work.mkdir()
    return made


def test_built_wheel_installs_and_runs_outside_the_clone(
    env: Env, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with env.phase("build sdist and wheel (once per run)"):
        dist = built_dist(tmp_path_factory)
    wheel, sdist = dist.wheel, dist.sdist
    check_archives(wheel, sdist)

    with env.phase("core install"):
        subprocess.run([sys.executable, "-m", "venv", str(env.venv)], check=True, timeout=120)
        env.run(env.bin("python"), "-m", "pip", "install", *PIP, str(wheel))

    with env.phase("core imports"):
        check_core(env)

    with env.phase("yuxi demo"):
        out = env.run(env.bin("yuxi"), "demo")
        assert "user:notes = ['the launch is on Friday']" in out
        assert (env.work / ".yuxi").is_dir()

    with env.phase("yuxi create + adk run"):
        env.run(env.bin("yuxi"), "create", "x")
        script = 'what is 6 * 7?\n/call x_count_words {"text": "a b c"}\nexit\n'
        out = env.run(env.bin("adk"), "run", "x", stdin=script)
        assert '"value": 42' in out
        assert 'x_count_words returned {"words": 3, "lines": 1, "characters": 5}' in out
        assert "Traceback" not in out

    with env.phase("yuxi serve api"):
        check_serve_api(env)

    # `[all]` resolves in every `make test` (the dev extra includes it); here two light
    # extras show that an installed extra turns on the part that named it.
    with env.phase("install [postgres,knowledge] on top"):
        env.run(env.bin("python"), "-m", "pip", "install", *PIP, f"{wheel}[postgres,knowledge]")
        env.run(
            env.bin("python"), "-c", "import asyncpg\nfrom adk_yuxi.knowledge import KnowledgeStore"
        )
        # Past the extra: whatever `kb list` says now (no database yet), not the pip line.
        after = env.fails(env.bin("yuxi"), "kb", "list")
        assert "adk-yuxi[" not in after.stdout + after.stderr, after.stderr
        assert "Traceback" not in after.stderr, after.stderr
    total = sum(seconds for _, seconds in env.phases)
    print(f"total: {total:.1f} s")


def check_archives(wheel: Path, sdist: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {
        name.split("/", 1)[0] for name in names if not name.split("/")[0].endswith(".dist-info")
    }
    assert tops == {"adk_yuxi"}, tops
    assert "adk_yuxi/cli/_agent_template/agent.py.tmpl" in names
    assert any(n.startswith("adk_yuxi/skills/builtin/") and n.endswith(".md") for n in names)
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "adk_yuxi/__init__.py", "adk_yuxi/demo/assistant/agent.py"} <= members
    assert "adk_yuxi/py.typed" in names and "adk_yuxi/py.typed" in members  # typed, PEP 561
    shipped = sorted(m for m in members if m.startswith((".ci/", "docs/_incoming/", ".venv")))
    assert not shipped, shipped


def check_core(env: Env) -> None:
    code = (
        "import importlib, importlib.util, json, adk_yuxi\n"
        f"for name in {PACKAGES!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps({'file': adk_yuxi.__file__,"
        f" 'extras': [m for m in {EXTRA_ONLY!r} if importlib.util.find_spec(m)]}}))"
    )
    seen = json.loads(env.run(env.bin("python"), "-c", code).strip().splitlines()[-1])
    assert Path(seen["file"]).is_relative_to(env.venv), seen["file"]
    assert seen["extras"] == [], "the core install pulled an extra's package"
    needs = env.fails(env.bin("yuxi"), "kb", "list")
    assert needs.returncode == 1
    assert needs.stderr.strip().endswith("pip install 'adk-yuxi[knowledge]'"), needs.stderr
    assert len(needs.stderr.strip().splitlines()) == 1, needs.stderr


def check_serve_api(env: Env) -> None:
    (env.work / "helper.yaml").write_text("description: Helps.\ntools: [calculate]\n")
    port = free_port()
    command = [env.bin("yuxi"), "serve", "api", "--agents", "helper.yaml", "--port", str(port)]
    command += ["--db", str(env.work / "api.db")]
    log = (env.root / "serve.log").open("w")
    server = subprocess.Popen(
        command, cwd=env.work, env=env.environ(), stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                health = httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.TransportError:
                pass
            assert server.poll() is None, (env.root / "serve.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "yuxi serve api did not answer within 90 s"
            time.sleep(0.2)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        assert httpx.get(f"{base}/v1/agents", timeout=10).status_code == 401
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
