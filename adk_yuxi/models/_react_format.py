"""The ReAct text protocol: how tools are described to a text-only model, how its reply is
parsed, and how past calls and results are written back as text.

Kept apart from the model wrapper so the dialect can change (another language, another
layout) without touching how requests are rewritten.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from google.genai import types

__all__ = [
    "ReactParseError",
    "ReactReply",
    "action_text",
    "observation_text",
    "parse_reply",
    "tools_prompt",
]

_ACTION = re.compile(r"^\s*Action\s*:\s*(?P<name>.*?)\s*$", re.M | re.I)
_INPUT = re.compile(r"^\s*Action\s+Input\s*:\s*", re.M | re.I)
_ANSWER = re.compile(r"^\s*(?:Final\s+)?Answer\s*:\s*", re.M | re.I)
_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")

PROTOCOL = """You can use tools. To call one, reply with exactly these three lines and stop:
Thought: why this tool helps
Action: the tool name, exactly as listed
Action Input: one JSON object with the arguments, on one line
The result comes back to you as a line starting with "Observation:".
When you can answer without another tool, reply:
Thought: why you can answer now
Answer: your answer to the user

Tools:"""


class ReactParseError(ValueError):
    """The reply follows neither form; the message tells the model what to fix."""


@dataclass(frozen=True)
class ReactReply:
    thought: str
    answer: str | None = None
    action: str | None = None
    arguments: dict[str, Any] | None = None


def tools_prompt(declarations: list[types.FunctionDeclaration]) -> str:
    lines = [PROTOCOL]
    for declaration in declarations:
        schema = declaration.parameters_json_schema
        if schema is None and declaration.parameters is not None:
            schema = declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
        properties = (schema or {}).get("properties") or {}
        required = (schema or {}).get("required") or []
        args = ", ".join(
            f"{name}{'' if name in required else '?'}: {(spec or {}).get('type', 'any')}"
            for name, spec in properties.items()
        )
        description = " ".join((declaration.description or "").split())
        lines.append(f"- {declaration.name}({args}): {description}")
    return "\n".join(lines)


def _json_object(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        raise ReactParseError("`Action Input` must be a JSON object, and none was found")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise ReactParseError(
            f"`Action Input` is not valid JSON ({exc.msg} at character {exc.pos});"
            ' write it as one JSON object with double-quoted keys, e.g. {"name": "value"}'
        ) from None
    if not isinstance(value, dict):
        raise ReactParseError("`Action Input` must be a JSON object of named arguments")
    return value


def parse_reply(text: str) -> ReactReply:
    """Reads an action or an answer; a reply with neither marker is taken as the answer."""
    action = _ACTION.search(text)
    answer = _ANSWER.search(text)
    if action is not None and (answer is None or action.start() < answer.start()):
        thought = _THOUGHT.sub("", text[: action.start()]).strip()
        raw_name = action.group("name").strip().strip("`'\"")
        name = _NAME.match(raw_name)
        if name is None or name.group(0) != raw_name.split("(")[0].strip():
            raise ReactParseError(f"`Action` must be just a tool name, got {raw_name!r}")
        rest = text[action.end() :]
        given = _INPUT.search(rest)
        if given is None:
            raise ReactParseError("an `Action` line must be followed by an `Action Input` line")
        return ReactReply(
            thought=thought, action=name.group(0), arguments=_json_object(rest[given.end() :])
        )
    if answer is not None:
        thought = _THOUGHT.sub("", text[: answer.start()]).strip()
        return ReactReply(thought=thought, answer=text[answer.end() :].strip())
    return ReactReply(thought="", answer=_THOUGHT.sub("", text).strip())


def action_text(call: types.FunctionCall, thought: str = "") -> str:
    head = f"Thought: {thought}\n" if thought else ""
    arguments = json.dumps(call.args or {}, ensure_ascii=False)
    return f"{head}Action: {call.name}\nAction Input: {arguments}"


def observation_text(response: types.FunctionResponse) -> str:
    result = json.dumps(response.response or {}, ensure_ascii=False, default=str)
    return f"Observation ({response.name}): {result}"
