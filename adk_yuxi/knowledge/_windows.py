"""Windows over a parsed document: paging by line, and pattern search with bounds.

Regular expressions come from the model, so each is bounded in length and in how far
its counted repeats expand when compiled, and run with the `regex` module's timeout;
the whole search shares one time budget.
"""

from __future__ import annotations

import bisect
import itertools
import time
from dataclasses import dataclass

import regex

from ._errors import InvalidKnowledgeRequestError

__all__ = ["FoundWindow", "LineWindow", "find_windows", "line_window"]

MAX_PATTERN_CHARS = 200
MAX_PATTERNS = 10
MAX_WINDOW_CHARS = 20_000
SEARCH_BUDGET_SECONDS = 1.0
MAX_COMPILED_SIZE = 100_000  # (?:a{50}){50}){50} compiles in ~50 ms; 80x that, in seconds


@dataclass(frozen=True)
class LineWindow:
    start_line: int
    end_line: int
    total_lines: int
    has_more_before: bool
    has_more_after: bool
    next_offset: int | None
    content: str


def line_window(lines: list[str], start_index: int, window_size: int) -> LineWindow:
    """Lines from ``start_index`` (0-based), at most ``window_size`` and about
    ``MAX_WINDOW_CHARS`` characters; ``next_offset`` continues after the last one."""
    total = len(lines)
    if start_index < 0 or (total and start_index >= total) or (not total and start_index):
        raise InvalidKnowledgeRequestError(
            f"the document has {total} lines; the window must start inside it"
        )
    taken: list[str] = []
    size = 0
    for line in lines[start_index : start_index + window_size]:
        if taken and size + len(line) > MAX_WINDOW_CHARS:
            break
        taken.append(line[:MAX_WINDOW_CHARS])
        size += len(line) + 1
    end_index = start_index + len(taken)
    return LineWindow(
        start_line=start_index + 1,
        end_line=end_index,
        total_lines=total,
        has_more_before=start_index > 0,
        has_more_after=end_index < total,
        next_offset=end_index if end_index < total else None,
        content="\n".join(taken),
    )


@dataclass(frozen=True)
class FoundWindow:
    start_line: int
    end_line: int
    match_lines: tuple[int, ...]
    content: str


_BRACED_ESCAPES = frozenset("pPNxuUg")  # \p{L}, \N{name}, \x{263a}, \g<name>: one item


def _counted(pattern: str, at: int) -> tuple[int, int] | None:
    """The repeat count of a ``{m}``, ``{m,}``, ``{,n}`` or ``{m,n}`` quantifier opening
    at ``at`` (its largest bound) and where it ends, or None if the brace is literal."""
    close = pattern.find("}", at)
    if close < 0:
        return None
    # Blanks count too: in verbose mode (?x) "{ 200 }" is a quantifier.
    low, comma, high = "".join(pattern[at + 1 : close].split()).partition(",")
    if not (low or high) or not (low.isdigit() or not low) or not (high.isdigit() or not high):
        return None
    if not comma and not low:
        return None
    return max(int(low or 0), int(high or 0)), close + 1


def compiled_size(pattern: str) -> int:
    """An upper bound on how many pattern items ``regex`` compiles ``pattern`` into.

    The module expands counted repeats when it compiles (``(?:(?:a{200}){200}){200}``
    takes gigabytes and seconds, before any timeout applies), so the product of nested
    counts is what a pattern costs; loops (``*``, ``+``) are not expanded. Escapes and
    classes count as one item; alternatives add up, so this only overestimates."""
    frames: list[list[int]] = [[0, 0]]  # per open group: [total so far, size of last item]
    at = 0
    while at < len(pattern):
        char = pattern[at]
        frame = frames[-1]
        size = 1
        if char == "\\":
            letter = pattern[at + 1 : at + 2]
            at += 2
            if letter in _BRACED_ESCAPES and pattern[at : at + 1] in ("{", "<"):
                end = pattern.find("}" if pattern[at] == "{" else ">", at)
                at = len(pattern) if end < 0 else end + 1
        elif char == "[":
            at += 1
            if pattern[at : at + 1] == "^":
                at += 1
            if pattern[at : at + 1] == "]":
                at += 1
            while at < len(pattern) and pattern[at] != "]":
                at += 2 if pattern[at] == "\\" else 1
            at += 1
        elif char == "(":
            frames.append([0, 0])
            at += 1
            continue
        elif char == ")" and len(frames) > 1:
            size = frames.pop()[0]
            frame = frames[-1]
            at += 1
        elif char == "{" and (counted := _counted(pattern, at)) is not None:
            count, at = counted
            frame[0] += frame[1] * (count - 1) if count else -frame[1]
            frame[1] *= count
            continue
        else:
            at += 1
        frame[0] += size
        frame[1] = size
    while len(frames) > 1:  # an unclosed group: compiling will refuse it anyway
        inner = frames.pop()[0]
        frames[-1][0] += inner
    return frames[0][0]


def _compile(
    patterns: list[str], use_regex: bool, case_sensitive: bool
) -> list[regex.Pattern[str]]:
    if not 1 <= len(patterns) <= MAX_PATTERNS:
        raise InvalidKnowledgeRequestError(f"give 1-{MAX_PATTERNS} patterns")
    flags = regex.V0 if case_sensitive else regex.IGNORECASE | regex.V0
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise InvalidKnowledgeRequestError(
                f"each pattern must be 1-{MAX_PATTERN_CHARS} characters"
            )
        if "\n" in pattern or "\r" in pattern:
            raise InvalidKnowledgeRequestError("a pattern matches within one line: no line breaks")
        if use_regex and compiled_size(pattern) > MAX_COMPILED_SIZE:
            raise InvalidKnowledgeRequestError(
                "a regular expression repeats too much (nested counts multiply); "
                "use fewer or smaller {m,n} counts"
            )
        try:
            compiled.append(regex.compile(pattern if use_regex else regex.escape(pattern), flags))
        except regex.error as exc:
            raise InvalidKnowledgeRequestError(
                f"invalid regular expression {pattern[:60]!r}: {exc}"
            ) from None
    return compiled


def _too_long() -> InvalidKnowledgeRequestError:
    return InvalidKnowledgeRequestError(
        f"the search did not finish in {SEARCH_BUDGET_SECONDS:g} s; use simpler or fewer "
        "patterns, or query_kb to find the right part of the document first"
    )


def _matching_lines_by_line(
    lines: list[str], compiled: list[regex.Pattern[str]], deadline: float
) -> list[int]:
    """Regular expressions line by line: a match never spans a line break."""
    matches: list[int] = []
    for index, line in enumerate(lines):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _too_long()
        try:
            hit = any(p.search(line, timeout=remaining, concurrent=True) for p in compiled)
        except TimeoutError:
            raise _too_long() from None
        if hit:
            matches.append(index)
    return matches


def _matching_lines_in_text(
    lines: list[str], compiled: list[regex.Pattern[str]], deadline: float
) -> list[int]:
    """Literal patterns over the joined text, one scan per pattern (they hold no line
    break, so a match lies within one line): fast on a long document."""
    text = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found: set[int] = set()
    for pattern in compiled:
        at = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _too_long()
            try:
                match = pattern.search(text, at, timeout=remaining, concurrent=True)
            except TimeoutError:
                raise _too_long() from None
            if match is None:
                break
            index = bisect.bisect_right(starts, match.start()) - 1
            found.add(index)
            if index + 1 >= len(starts):
                break
            at = starts[index + 1]
    return sorted(found)


def find_windows(
    lines: list[str],
    patterns: list[str],
    *,
    use_regex: bool,
    case_sensitive: bool,
    max_windows: int,
    window_size: int,
) -> tuple[list[FoundWindow], bool]:
    """Windows of ``window_size`` lines of context around matching lines, merged where
    they touch; returns them and whether more matches were left out. CPU-bound and
    bounded by ``SEARCH_BUDGET_SECONDS``: callers on an event loop run it in a thread
    (matching releases the GIL)."""
    compiled = _compile(patterns, use_regex, case_sensitive)
    deadline = time.monotonic() + SEARCH_BUDGET_SECONDS
    scan = _matching_lines_by_line if use_regex else _matching_lines_in_text
    matches = scan(lines, compiled, deadline) if lines else []
    windows: list[tuple[int, int, list[int]]] = []
    for index in matches:
        start, end = max(index - window_size, 0), min(index + window_size, len(lines) - 1)
        if windows and start <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]), [*windows[-1][2], index])
        else:
            windows.append((start, end, [index]))
    truncated = len(windows) > max_windows
    return [
        FoundWindow(
            start_line=start + 1,
            end_line=end + 1,
            match_lines=tuple(i + 1 for i in hits),
            content="\n".join(lines[start : end + 1])[:MAX_WINDOW_CHARS],
        )
        for start, end, hits in windows[:max_windows]
    ], truncated
