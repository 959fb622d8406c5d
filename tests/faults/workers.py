"""`yuxi serve api` worker processes on one database: start, SIGKILL, restart.

Each worker keeps its port and its own loopback model server across restarts, so a
worker is one name in the history however often it dies. All share the database,
the blob directory and the workspaces, as machines behind one load balancer would.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.apikeys import ApiKeyStore
from adk_yuxi.storage import open_services
from tests.e2e._cli import BIN, REPO, cli_env, free_port

from .model import TaggedModel

__all__ = ["AGENT", "USER", "Worker", "WorkerPool", "seed_database"]

AGENT = "helper"
USER = "mei"
_START_S = 120.0


async def seed_database(url: str) -> str:
    """The user, the agent shared with everyone, and a key for the user (its token)."""
    services = open_services(url)
    try:
        await services.prepare()
        access = AccessRepository(services.store)
        await access.save_user(User(id=USER))
        await access.save_resource(
            ResourceRecord(
                kind=ResourceKind.AGENT, id=AGENT, creator_id=USER, share=ShareConfig.public()
            )
        )
        return (await ApiKeyStore(services.store).issue(USER, issued_by=USER)).token
    finally:
        await services.close()


@dataclass
class Worker:
    """One API process slot: its name, port and model server; `process` while it runs."""

    name: str
    port: int
    model_url: str
    process: subprocess.Popen[bytes] | None = None
    generation: int = 0
    ready: bool = False  # answered its health check since it was last spawned
    log: Path | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class WorkerPool:
    """`count` workers of one database; `lease_seconds` short, so a killed worker's run
    is closed within the test."""

    url: str
    folder: Path
    model: TaggedModel
    count: int
    lease_seconds: float = 3.0
    workers: list[Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.agents = self.folder / f"{AGENT}.yaml"
        self.agents.write_text(f"name: {AGENT}\ndescription: Helps.\ntools: []\n")
        for n in range(self.count):
            name = f"w{n}"
            server = self.model.server_for(name)
            self.workers.append(Worker(name, free_port(), server.base_url))

    def spawn(self, worker: Worker) -> None:
        worker.ready = False
        worker.generation += 1
        worker.log = self.folder / f"{worker.name}.{worker.generation}.log"
        command = [str(BIN / "yuxi"), "serve", "api", "--agents", str(self.agents)]
        command += ["--port", str(worker.port), "--model", "openai/scripted"]
        command += ["--workspaces", str(self.folder / "ws"), "--blobs", str(self.folder / "b")]
        command += ["--lease-seconds", str(self.lease_seconds), "--cancel-poll-seconds", "0.2"]
        env = cli_env(
            YUXI_DATABASE_URL=self.url, OPENAI_BASE_URL=worker.model_url, OPENAI_API_KEY="test-key"
        )
        with worker.log.open("wb") as log:
            worker.process = subprocess.Popen(
                command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )

    def wait_healthy(self, worker: Worker, timeout: float = _START_S) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not worker.alive:
                return False
            try:
                if httpx.get(f"{worker.base}/healthz", timeout=2).status_code == 200:
                    worker.ready = True
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        return False

    def start_all(self) -> None:
        for worker in self.workers:
            self.spawn(worker)
        for worker in self.workers:
            if not self.wait_healthy(worker):
                raise RuntimeError(f"worker {worker.name} did not start: {self.tail(worker)}")

    def kill(self, worker: Worker) -> None:
        """SIGKILL: no shutdown hook runs, the lease just stops being renewed."""
        if worker.process is not None and worker.alive:
            worker.process.send_signal(signal.SIGKILL)
            worker.process.wait()
        worker.ready = False

    def stop_all(self) -> None:
        for worker in self.workers:
            if worker.alive and worker.process is not None:
                worker.process.terminate()
        for worker in self.workers:
            if worker.process is None:
                continue
            try:
                worker.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()

    def tail(self, worker: Worker, lines: int = 30) -> str:
        if worker.log is None or not worker.log.exists():
            return ""
        return "\n".join(worker.log.read_text(errors="replace").splitlines()[-lines:])
