"""The contents of a refused request, carried over to its retry after a compaction.

A retried request is rebuilt from the compacted session, and the rebuild knows only the
session: contents that plugins, callbacks or ADK's own processors put into the request
(a retrieved passage before the user's message, a dynamic instruction, a redacted copy
of a message) were lost, and the retry answered a request the app never built. Here the
request's contents are lined up with what the session gave before the compaction and
with what it gives after: contents from the session are taken as it now gives them (a
summary in place of the range it covers, a content left out by a plugin stays out), and
every other content keeps its place relative to the session contents around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from google.genai import types

__all__ = ["carried_over"]


def _keys(contents: Sequence[types.Content]) -> list[str]:
    return [c.model_dump_json(exclude_none=True) for c in contents]


def _match(before: list[str], after: list[str]) -> tuple[dict[int, int], dict[int, int]]:
    """`after`'s indices that equal one of `before` ({after: before}), and those taken for
    an edited copy of one: in a block of `after` in place of a block of `before`, the
    first items pair up in order; the rest of the longer block is inserted or left out."""
    matched: dict[int, int] = {}
    edited: dict[int, int] = {}
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    for tag, b1, b2, a1, a2 in matcher.get_opcodes():
        if tag == "equal":
            matched.update({a1 + k: b1 + k for k in range(a2 - a1)})
        elif tag == "replace":
            edited.update({a1 + k: b1 + k for k in range(min(a2 - a1, b2 - b1))})
    return matched, edited


def _anchors(size: int, matched: dict[int, int], length: int) -> list[int]:
    """For each of `size` items, the index (in the old session contents) of the first
    matched item at or after it: where it sits among the session's contents."""
    anchors = [length] * size
    following = length
    for index in range(size - 1, -1, -1):
        following = matched.get(index, following)
        anchors[index] = following
    return anchors


def carried_over(
    request: Sequence[types.Content],
    session_before: Sequence[types.Content],
    session_after: Sequence[types.Content],
) -> list[types.Content]:
    """The retry's contents: `session_after` (the session's contents once compacted) with
    what `request` held beyond or instead of `session_before` (the session's contents
    when it was built), each at its place."""
    before = _keys(session_before)
    sent, edited = _match(before, _keys(request))
    now, _ = _match(before, _keys(session_after))
    surviving = set(now.values())
    # (anchor, 0 for the session's new contents and 1 for the request's, order) sorts
    # a summary ahead of a request content anchored at the same session content.
    placed: list[tuple[int, int, int, types.Content]] = []
    for index, anchor in enumerate(_anchors(len(session_after), now, len(before))):
        if index not in now:
            placed.append((anchor, 0, index, session_after[index]))
    for index, anchor in enumerate(_anchors(len(request), {**sent, **edited}, len(before))):
        old = sent.get(index, edited.get(index))
        # A content of the request's own is kept; a session content (or an edited copy
        # of one) only while the compaction left it.
        if old is None or old in surviving:
            placed.append((anchor, 1, index, request[index]))
    placed.sort(key=lambda item: item[:3])
    return [content for *_, content in placed]
