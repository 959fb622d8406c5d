"""The ReAct text protocol: how tools are described to a text-only model, how its reply is
parsed, and how past calls and results are written back as text.

Kept apart from the model wrapper so the dialect can change (another language, another
layout) without touching how requests are rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
# A line that may hold a marker: anchored at a line start, blanks that cannot cross a
# newline, then a fixed word, so the scan is linear and runs in C over blank stretches.
_CANDIDATE = re.compile(r"^[^\S\n]*(?:action|answer|final)", re.M | re.I)
_VISIBLE = re.compile(r"\S")

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


def _word(text: str, at: int, word: str) -> int:
    """The index after `word` (any case) at `at`, or -1."""
    end = at + len(word)
    return end if text[at:end].lower() == word else -1


def _skip_space(text: str, at: int, end: int) -> int:
    while at < end and text[at].isspace():
        at += 1
    return at


def _marker(text: str, start: int, end: int, words: tuple[str, ...]) -> int:
    """Where the value begins if line `text[start:end]` opens with `words` then `:`, else -1.

    Words are separated by at least one blank and the colon may follow a blank; every
    step moves forward, so a line costs time linear in its length.
    """
    at = _skip_space(text, start, end)
    for index, word in enumerate(words):
        if index:
            spaced = _skip_space(text, at, end)
            if spaced == at:
                return -1
            at = spaced
        at = _word(text, at, word)
        if at < 0 or at > end:
            return -1
    at = _skip_space(text, at, end)
    return at + 1 if at < end and text[at] == ":" else -1


def _candidates(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """`(start, end)` of each line from `start` that may hold a marker."""
    for found in _CANDIDATE.finditer(text, start):
        end = text.find("\n", found.start())
        yield found.start(), len(text) if end < 0 else end


def _without_thought(text: str) -> str:
    """`text` stripped, without a leading `Thought:` label."""
    after = _marker(text, 0, len(text), ("thought",))
    return (text[after:] if after >= 0 else text).strip()


def _action_name(text: str, after: int, end: int) -> tuple[str, int]:
    """The name written after `Action:` and where its line ends; a blank rest of the
    line takes the next non-blank line, as a model that breaks the line expects."""
    name = text[after:end].strip()
    if name:
        return name, end
    visible = _VISIBLE.search(text, end)
    if visible is None:
        return "", len(text)
    line_end = text.find("\n", visible.start())
    line_end = len(text) if line_end < 0 else line_end
    return text[visible.start() : line_end].strip(), line_end


def parse_reply(text: str) -> ReactReply:
    """Reads an action or an answer; a reply with neither marker is taken as the answer.

    One pass over the lines with string operations: a reply shaped to be slow (long runs
    of blank lines, no marker at all) costs time linear in its length.
    """
    for start, end in _candidates(text):
        answer = _marker(text, start, end, ("answer",))
        if answer < 0:
            answer = _marker(text, start, end, ("final", "answer"))
        if answer >= 0:
            return ReactReply(thought=_without_thought(text[:start]), answer=text[answer:].strip())
        action = _marker(text, start, end, ("action",))
        if action < 0:
            continue
        raw_name, name_end = _action_name(text, action, end)
        raw_name = raw_name.strip("`'\"")
        name = _NAME.match(raw_name)
        if name is None or name.group(0) != raw_name.split("(")[0].strip():
            raise ReactParseError(f"`Action` must be just a tool name, got {raw_name!r}")
        for input_start, input_end in _candidates(text, name_end + 1):
            given = _marker(text, input_start, input_end, ("action", "input"))
            if given >= 0:
                return ReactReply(
                    thought=_without_thought(text[:start]),
                    action=name.group(0),
                    arguments=_json_object(text[given:]),
                )
        raise ReactParseError("an `Action` line must be followed by an `Action Input` line")
    return ReactReply(thought="", answer=_without_thought(text))


def action_text(call: types.FunctionCall, thought: str = "") -> str:
    head = f"Thought: {thought}\n" if thought else ""
    arguments = json.dumps(call.args or {}, ensure_ascii=False)
    return f"{head}Action: {call.name}\nAction Input: {arguments}"


def observation_text(response: types.FunctionResponse) -> str:
    result = json.dumps(response.response or {}, ensure_ascii=False, default=str)
    return f"Observation ({response.name}): {result}"
