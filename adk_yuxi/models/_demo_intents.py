"""What the demo model understands: one small function per intent, tried in order.

Each intent reads the user's text and a `RequestView` and returns a response, or None
to let the next intent try. A tool an intent needs but cannot see gets an answer that
says how to make it visible (which skill opens it) instead of the generic help. New
intents (agent tools, knowledge bases) are added by extending `DEFAULT_INTENTS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._demo_knowledge import wants_knowledge
from ._demo_recall import recall_said
from ._demo_replies import call, response_of, text
from ._request import RequestView

__all__ = [
    "DEFAULT_INTENTS",
    "Intent",
    "call",
    "help_text",
    "missing_tool",
    "response_of",
    "summarise_responses",
    "text",
]

Intent = Callable[[str, RequestView], LlmResponse | None]

_EXPLICIT_CALL = re.compile(r"^/call\s+(?P<name>[A-Za-z_]\w*)\s*(?P<args>\{.*\})?\s*$", re.S)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note)(?:\s+that)?[:,]?\s+(?P<text>.+)$", re.I | re.S
)
_RECALL = re.compile(r"\b(?:my notes|what do you remember|list (?:my )?notes|recall)\b", re.I)
_SEARCH_MEMORY = re.compile(
    r"^(?:search (?:my |your )?memory for|what did (?:i|we) (?:say|talk) about)\s+"
    r"(?P<query>.+?)\??$",
    re.I | re.S,
)
_WRITE_FILE = re.compile(
    r"^(?:please\s+)?(?:write|save|make|create)\s+(?:a\s+)?file\s+(?P<name>[^\s:]+)"
    r"\s*(?:with|containing|:)\s*(?P<text>.+)$",
    re.I | re.S,
)
_READ_ON = re.compile(
    r"^(?:please\s+)?(?:read|show(?: me)?|tell me)\s+more\b|^(?:continue|go on)\b", re.I
)
_UPLOADED = re.compile(r'\[Uploaded Artifact: "(?P<name>[^"]+)"\]')
_ARITHMETIC = re.compile(r"[-+*/().\d\s]*\d[-+*/().\d\s]*[-+*/][-+*/().\d\s]*\d[-+*/().\d\s]*")

FILE_TOOL = "save_text_file"


def _load_hint(skill: str) -> str:
    return f'/call load_skill {{"skill_name": "{skill}"}}'


def _visible(view: RequestView) -> str:
    return ", ".join(view.tools) if view.tools else "none"


def missing_tool(tool: str, view: RequestView) -> LlmResponse:
    """Why `tool` cannot be called now, and what would make it callable."""
    skill = view.skill_opening(tool)
    if skill is not None:
        return text(
            f"I cannot call {tool} yet: it opens when the skill {skill!r} is loaded."
            f" Load it with {_load_hint(skill)} and ask again."
        )
    return text(f"I cannot see a tool named {tool!r} here. Tools I can see: {_visible(view)}.")


def help_text(view: RequestView) -> str:
    lines = [
        "I am the offline demo model, not an LLM. Try: 'remember the launch is on Friday',"
        " 'what are my notes?', 'what is 12 * (3 + 4)?', or '/call TOOL {\"arg\": 1}'"
        " for any tool I can see.",
        f"Tools I can see: {_visible(view)}.",
    ]
    if view.skills:
        example = next(iter(view.skill_tools), view.skills[0])
        lines.append(f"Skills you can load: {', '.join(view.skills)} (e.g. {_load_hint(example)}).")
    if view.sees("load_memory"):
        lines.append("'search my memory for launch' looks through past conversations.")
    if view.sees(FILE_TOOL):
        lines.append("'write file notes.txt with some text' saves a file as an artifact.")
    return " ".join(lines)


def _needs(tool: str, view: RequestView, args: dict[str, Any]) -> LlmResponse:
    return call(tool, args) if view.sees(tool) else missing_tool(tool, view)


def explicit_call(message: str, view: RequestView) -> LlmResponse | None:
    match = _EXPLICIT_CALL.match(message)
    if not match:
        return None
    name = match.group("name")
    if not view.sees(name):
        return missing_tool(name, view)
    try:
        args = json.loads(match.group("args") or "{}")
    except json.JSONDecodeError as exc:
        return text(f"Those arguments are not JSON: {exc}.")
    return call(name, args)


def uploaded_files(message: str, view: RequestView) -> LlmResponse | None:
    names = _UPLOADED.findall(message)
    if not names:
        return None
    listed = ", ".join(repr(n) for n in names)
    return text(
        f"I received {listed}. It is saved as an artifact of this session (the Artifacts"
        " tab of adk web lists it); tools can load it by that name."
    )


def search_memory(message: str, view: RequestView) -> LlmResponse | None:
    match = _SEARCH_MEMORY.match(message)
    return _needs("load_memory", view, {"query": match.group("query")}) if match else None


def write_file(message: str, view: RequestView) -> LlmResponse | None:
    match = _WRITE_FILE.match(message)
    if not match:
        return None
    return _needs(FILE_TOOL, view, {"filename": match.group("name"), "text": match.group("text")})


def remember(message: str, view: RequestView) -> LlmResponse | None:
    match = _REMEMBER.match(message)
    return _needs("save_note", view, {"text": match.group("text").strip()}) if match else None


def recall(message: str, view: RequestView) -> LlmResponse | None:
    return _needs("list_notes", view, {}) if _RECALL.search(message) else None


def read_on(message: str, view: RequestView) -> LlmResponse | None:
    """ "read more": the next window of the stored tool result being read."""
    if not _READ_ON.match(message.strip()):
        return None
    if view.reading is None:
        return text("There is nothing more to read: no stored result is being read.")
    artifact, offset = view.reading
    return _needs("read_tool_result", view, {"artifact": artifact, "offset": offset})


def arithmetic(message: str, view: RequestView) -> LlmResponse | None:
    match = _ARITHMETIC.search(message)
    return _needs("calculate", view, {"expression": match.group(0).strip()}) if match else None


def knowledge(message: str, view: RequestView) -> LlmResponse | None:
    """Any other question, where the knowledge tools are declared (see `_demo_knowledge`)."""
    return call("list_kbs", {}) if wants_knowledge(message, set(view.tools)) else None


DEFAULT_INTENTS: tuple[Intent, ...] = (
    explicit_call,
    uploaded_files,
    recall_said,
    search_memory,
    write_file,
    remember,
    recall,
    read_on,
    arithmetic,
    knowledge,
)


_REPR_TEXT = re.compile(r"text=(?P<q>['\"])(?P<text>.*?)(?P=q)", re.S)


def _memory_texts(response: dict[str, Any]) -> list[str]:
    """Texts of `load_memory`'s result: a dict of memories, or (as ADK's FunctionTool
    wraps the pydantic model it returns) that model's repr under "result"."""
    memories = response.get("memories")
    if isinstance(memories, list):
        texts: list[str] = []
        for memory in memories:
            content = memory.get("content") if isinstance(memory, dict) else None
            parts = content.get("parts") if isinstance(content, dict) else None
            texts.extend(
                str(p["text"]) for p in parts or [] if isinstance(p, dict) and p.get("text")
            )
        return texts
    return [m.group("text") for m in _REPR_TEXT.finditer(str(response.get("result", "")))]


def summarise_responses(responses: list[types.FunctionResponse], view: RequestView) -> str:
    """One line per function response, with what a reader needs to act on it."""
    lines: list[str] = []
    for r in responses:
        payload = r.response or {}
        if r.name == "load_memory" and ("memories" in payload or "result" in payload):
            found = _memory_texts(payload)
            lines.append(
                "From past conversations: " + "; ".join(repr(t) for t in found[:5])
                if found
                else "Nothing in memory matches that yet (memory holds finished turns)."
            )
            continue
        line = f"{r.name} returned {json.dumps(payload, ensure_ascii=False, default=str)}"
        if r.name == "load_skill" and "error" in payload and view.skills:
            line += f". Skills that exist here: {', '.join(view.skills)}"
        lines.append(line)
    return "; ".join(lines)
