"""The scripted model every worker talks to, and the log of every call it served.

Each worker gets its own loopback OpenAI server (so a call is known by the worker that
made it); all of them share one `TaggedModel`. A run's user message carries a tag
(`go <tag>`), and an answer carries its own token (`ans-<n>`), so each model call is
attributed to one invocation, and a resumed call to the answer it resumed, from the
request body alone. Calls take a while (an awaited delay, the server stays responsive)
so that kills and duplicates land mid-run.
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from adk_yuxi.testing import OpenAIScriptServer, ToolCall

__all__ = ["ModelCall", "TaggedModel", "answer_token", "message_text", "tag_of_text"]

_TAG = re.compile(r"\bgo (t[0-9a-z-]+)\b")
_ANSWER = re.compile(r"\bans-[0-9a-z-]+\b")
_SCRIPT_TURNS = 200_000
MAX_QUESTIONS = 2


def message_text(tag: str) -> str:
    """The user message that starts a run tagged `tag`."""
    return f"go {tag}"


def answer_token(n: int | str) -> str:
    return f"ans-{n}"


def tag_of_text(text: str) -> str | None:
    found = _TAG.search(text)
    return found.group(1) if found else None


@dataclass(frozen=True)
class ModelCall:
    """One completion served: by which worker's server, for which invocation tag, as
    the resume of which answer (None: not right after an answer), and when."""

    worker: str
    tag: str | None
    answer: str | None
    reply: str
    started: float
    ended: float


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class TaggedModel:
    """Decides each reply from the conversation and the seed; records every call."""

    def __init__(self, seed: int, *, delay: tuple[float, float] = (0.15, 0.9)) -> None:
        self.seed = seed
        self.delay = delay
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()
        self._servers: dict[str, OpenAIScriptServer] = {}
        self._count = 0

    def server_for(self, worker: str) -> OpenAIScriptServer:
        """A started loopback server whose calls are logged as `worker`'s."""

        async def respond(body: dict[str, Any]) -> Any:
            return await self._respond(worker, body)

        server = OpenAIScriptServer([respond] * _SCRIPT_TURNS, api_key="test-key")
        server.start()
        self._servers[worker] = server
        return server

    def stop(self) -> None:
        for server in self._servers.values():
            server.stop()

    def _plan(self, tag: str | None, asked: int) -> str:
        """ask | done, fixed by (seed, tag, questions asked so far)."""
        if tag is None or asked >= MAX_QUESTIONS:
            return "done"
        chance = 0.8 if asked == 0 else 0.3
        return "ask" if random.Random(f"{self.seed}:{tag}:{asked}").random() < chance else "done"

    async def _respond(self, worker: str, body: dict[str, Any]) -> Any:
        started = time.time()
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        tag = tag_of_text(_content(messages[users[-1]])) if users else None
        since = messages[users[-1] + 1 :] if users else messages
        asked = sum(len(m.get("tool_calls") or []) for m in since if m.get("role") == "assistant")
        last = messages[-1] if messages else {}
        answer = None
        if last.get("role") == "tool":
            found = _ANSWER.search(_content(last))
            answer = found.group(0) if found else "dismissed"
        with self._lock:
            self._count += 1
            pause = random.Random(f"{self.seed}:pause:{self._count}").uniform(*self.delay)
        await asyncio.sleep(pause)
        plan = self._plan(tag, asked)
        reply: Any
        if plan == "ask":
            question = {"question_id": "q-1", "question": f"Which day for {tag}?"}
            reply = ToolCall("ask_user_question", {"questions": [question]})
        else:
            reply = f"done {tag}"
        with self._lock:
            self.calls.append(ModelCall(worker, tag, answer, plan, started, time.time()))
        return reply
