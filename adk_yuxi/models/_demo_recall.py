"""The demo model's recall of the conversation: "what did I tell you about X?".

It answers from what the request holds: the user's earlier messages and the statements
a summary of earlier turns kept (`_demo_summary`). So after compaction an early fact is
still answered, from the summary. When nothing matches, the question goes on to the next
intent (`load_memory`, which searches past conversations).
"""

from __future__ import annotations

import re

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._demo_replies import text
from ._demo_summary import SUMMARY_HEADER, summary_statements
from ._request import RequestView

__all__ = ["recall_said", "said_before"]

_SAID_ABOUT = re.compile(
    r"^what did i (?:say|tell you|mention|write)\s+(?:about|regarding)\s+(?P<topic>.+?)[?.!\s]*$",
    re.I | re.S,
)
_STOPWORDS = frozenset(
    {"a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "i", "me", "we"}
    | {"you", "of", "to", "in", "on", "for", "about", "that", "this", "it", "is", "was"}
)
_INSERTED = "The following content is from your previous conversations with the user."


def _text(content: types.Content) -> str:
    parts = content.parts or []
    return "\n".join(p.text for p in parts if p.text and not p.thought).strip()


def said_before(view: RequestView) -> list[tuple[str, bool]]:
    """The user's earlier statements the request shows, oldest first, each with whether
    it comes from a summary. The last content (the question being asked) is left out."""
    found: list[tuple[str, bool]] = []
    for content in view.contents[:-1]:
        text = _text(content)
        if not text or text.startswith(_INSERTED):
            continue
        if content.role == "user":
            found.append((" ".join(text.split()), False))
        elif text.startswith(SUMMARY_HEADER):
            found.extend((s, True) for s in summary_statements(text))
    return found


def recall_said(message: str, view: RequestView) -> LlmResponse | None:
    """The newest earlier statement naming every word of the topic, quoted."""

    match = _SAID_ABOUT.match(message.strip())
    if not match:
        return None
    words = [w for w in re.findall(r"\w+", match.group("topic").lower()) if w not in _STOPWORDS]
    if not words:
        return None
    for statement, summarized in reversed(said_before(view)):
        lowered = statement.lower()
        if all(w in lowered for w in words):
            where = " (from the summary of earlier turns)" if summarized else ""
            return text(f"You told me: {statement!r}{where}.")
    return None
