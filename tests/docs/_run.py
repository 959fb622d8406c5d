"""Runs a page's marked blocks the way a reader would: in one fresh folder, with the
installed commands first on PATH, each command in its own shell, servers in the
background until the page is done."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.docs._blocks import SHELL, Block, Command, output_matches, page_blocks

__all__ = ["PageRun", "run_page"]

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class PageRun:
    """One page's run: its folder, the commands' environment, what went wrong."""

    work: Path
    bin_dir: Path
    timeout: float = 180
    problems: list[str] = field(default_factory=list)
    ran: int = 0
    ports: dict[str, str] = field(default_factory=dict)
    servers: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def environ(self) -> dict[str, str]:
        drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "OPENAI_API_KEY", "GOOGLE_API_KEY")
        env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("YUXI_")}
        env["PATH"] = os.pathsep.join([str(self.bin_dir), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.bin_dir.parent)
        env["PYTHONUNBUFFERED"] = "1"
        env["COLUMNS"] = "200"
        return env

    def _ports(self, text: str) -> str:
        for shown, real in self.ports.items():
            text = re.sub(rf"(?<!\d){shown}(?!\d)", real, text)
        return text

    def block(self, block: Block) -> None:
        if "port" in block.options and block.options["port"] not in self.ports:
            self.ports[block.options["port"]] = str(_free_port())
        body = self._ports(block.body)
        if "file" in block.options:
            target = self.work / block.options["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
        elif block.lang == "python":
            script = self.work / f".block-{block.line}.py"
            script.write_text(body, encoding="utf-8")
            self.command(block, Command(f"python {script.name}"))
        elif block.lang in SHELL:
            for command in Block(block.page, block.line, block.lang, body).commands():
                if "background" in block.options:
                    self.background(block, command)
                else:
                    self.command(block, command)
                if self.problems:
                    return  # what follows depends on it
            if "wait" in block.options:
                self.wait(block, self._ports(block.options["wait"]))
        else:
            self.problems.append(f"{block.where}: a {block.lang!r} block cannot be run")

    def command(self, block: Block, command: Command) -> None:
        self.ran += 1
        try:
            done = subprocess.run(
                ["bash", "-c", command.line],
                input=command.stdin.encode() if command.stdin is not None else b"",
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.work,
                env=self.environ(),
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            self.problems.append(f"{block.where}: `{command.line}` ran past {self.timeout} s")
            return
        out = done.stdout.decode(errors="replace")
        shown = command.shown
        fails = shown is not None and any(line.startswith("Error:") for line in shown)
        if (done.returncode != 0) != fails:
            self.problems.append(
                f"{block.where}: `{command.line}` exited {done.returncode}"
                f" ({'a failure' if fails else 'success'} expected):\n{out[-3000:]}"
            )
        elif shown is not None and not output_matches(tuple(map(self._ports, shown)), out):
            self.problems.append(
                f"{block.where}: `{command.line}` printed something else than the page shows."
                f"\n--- the page:\n{chr(10).join(shown)}\n--- the run:\n{out[-3000:]}"
            )

    def background(self, block: Block, command: Command) -> None:
        self.ran += 1
        log = self.work.parent / f"{self.work.name}-server-{len(self.servers)}.log"
        with log.open("wb") as sink:
            server = subprocess.Popen(
                ["bash", "-c", f"exec {command.line}"],
                cwd=self.work,
                env=self.environ(),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.servers.append((server, log))

    def wait(self, block: Block, url: str) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                httpx.get(url, timeout=2)
                return
            except httpx.TransportError:
                pass
            for server, log in self.servers:
                if server.poll() is not None:
                    text = log.read_text(errors="replace")[-3000:]
                    self.problems.append(f"{block.where}: a server stopped:\n{text}")
                    return
            time.sleep(0.2)
        self.problems.append(f"{block.where}: {url} did not answer within {self.timeout} s")

    def stop(self) -> None:
        for server, _ in self.servers:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        self.servers.clear()


def run_page(page: Path, work: Path, bin_dir: Path, *, name: str | None = None) -> PageRun:
    """Runs every marked block of `page` in `work`, stopping at the first problem."""
    work.mkdir(parents=True, exist_ok=True)
    run = PageRun(work=work, bin_dir=bin_dir)
    try:
        for block in page_blocks(page, name=name, base=REPO):
            run.block(block)
            if run.problems:
                break
    finally:
        run.stop()
    return run


if __name__ == "__main__":  # python -m tests.docs._run PAGE BIN_DIR: a page by hand
    done = run_page(Path(sys.argv[1]), Path.cwd() / "doc-run", Path(sys.argv[2]))
    print(f"{done.ran} commands", *done.problems, sep="\n")
