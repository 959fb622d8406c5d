"""What a model's regular expression costs to compile, bounded before and while compiling.

The `regex` module expands counted repeats when it compiles, so `(?:(?:a{200}){200}){100}`
takes seconds and gigabytes before any match timeout applies. `compiled_size` reads the
pattern as the module's parser does where that changes the structure (escapes, classes
with POSIX names, `(?#...)` comments, inline and scoped verbose mode with its blanks
and `#` comments, transparent flag groups) and multiplies nested counts: an upper
bound, never fooled into reading structure as text. `probe_compile` then compiles a
pattern with counted repeats in a child process under the search's remaining time and a
memory cap, so even a pattern the bound misjudges cannot stall or swell the server.
"""

from __future__ import annotations

import subprocess
import sys

__all__ = [
    "MAX_COMPILED_SIZE",
    "PROBE_ABOVE",
    "CompileProbeFailed",
    "compiled_size",
    "probe_compile",
]

MAX_COMPILED_SIZE = 100_000  # (?:a{50}){50}){50} compiles in ~50 ms; 80x that, in seconds
_BRACED_ESCAPES = frozenset("pPNxuUgL")  # \p{L}, \N{name}, \x{263a}, \g<name>: one item
_FLAG_LETTERS = frozenset("aiLmsuxwfbeprV0123456789-^")
_PROBE_MEMORY = 1 << 30


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


def _after_escape(pattern: str, at: int) -> int:
    """Where an escape opening at ``at`` (the backslash) ends."""
    letter = pattern[at + 1 : at + 2]
    at += 2
    if letter in _BRACED_ESCAPES and pattern[at : at + 1] in ("{", "<"):
        end = pattern.find("}" if pattern[at] == "{" else ">", at)
        at = len(pattern) if end < 0 else end + 1
    return at


def _after_class(pattern: str, at: int) -> int:
    """Where a class opening at ``at`` ends: escapes and `[:name:]` inside it are skipped,
    so a `]` or `)` within them never ends it early."""
    at += 1
    if pattern[at : at + 1] == "^":
        at += 1
    if pattern[at : at + 1] == "]":
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        if pattern[at] == "\\":
            at = _after_escape(pattern, at)
        elif pattern.startswith("[:", at) and (end := pattern.find(":]", at + 2)) >= 0:
            at = end + 2
        else:
            at += 1
    return at + 1


def _after_comment(pattern: str, at: int) -> int:
    """Where a `(?#...)` comment opening at ``at`` ends (escapes inside it are skipped)."""
    at += 3
    while at < len(pattern) and pattern[at] != ")":
        at += 2 if pattern[at] == "\\" else 1
    return at + 1


def _flag_group(pattern: str, at: int) -> tuple[int, bool | None, bool] | None:
    """For `(?flags)` or `(?flags:` at ``at``: where it ends, the verbose mode it sets
    (None: unchanged) and whether it opens a scoped group; None for other groups."""
    if not pattern.startswith("(?", at):
        return None
    end = at + 2
    while end < len(pattern) and pattern[end] in _FLAG_LETTERS:
        end += 1
    if end == at + 2 or end >= len(pattern) or pattern[end] not in ":)":
        return None
    on, _, off = pattern[at + 2 : end].partition("-")
    verbose = True if "x" in on else False if "x" in off else None
    return end + 1, verbose, pattern[end] == ":"


def _size(pattern: str) -> int:
    # Per open group: [total so far, size of the last item, verbose mode].
    frames: list[list[int]] = [[0, 0, 0]]
    at = 0
    while at < len(pattern):
        char = pattern[at]
        frame = frames[-1]
        size = 1
        if frame[2] and char.isspace():
            at += 1
            continue
        if frame[2] and char == "#":
            break  # a verbose comment runs to the line end: patterns hold no line break
        if char == "\\":
            at = _after_escape(pattern, at)
        elif char == "[":
            at = _after_class(pattern, at)
        elif pattern.startswith("(?#", at):
            at = _after_comment(pattern, at)
            continue  # transparent: a quantifier after it applies to the item before
        elif char == "(" and (flags := _flag_group(pattern, at)) is not None:
            at, verbose, scoped = flags
            mode = frame[2] if verbose is None else int(verbose)
            if scoped:
                frames.append([0, 0, mode])
            else:
                frame[2] = mode  # from here to the end of the enclosing group
            continue
        elif char == "(":
            frames.append([0, 0, frame[2]])
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


def compiled_size(pattern: str) -> int:
    """An upper bound on how many pattern items ``regex`` compiles ``pattern`` into:
    the product of nested counts; loops (``*``, ``+``) are not expanded. Escapes and
    classes count as one item; alternatives add up, so this only overestimates."""
    return _size(pattern)


class CompileProbeFailed(Exception):
    """The pattern did not compile within the time and memory given to the probe."""


_PROBE = (
    "import resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))\n"
    "import regex\n"
    "try:\n"
    "    regex.compile(sys.stdin.read(), int(sys.argv[1]))\n"
    "except regex.error:\n"
    "    sys.exit(3)\n"
)
_SYNTAX_ERROR = 3
PROBE_ABOVE = 5_000
"""Patterns bounded at or below this many items compile in milliseconds in-process;
larger ones are compiled in a child first."""
_passed: dict[tuple[str, int], None] = {}


def probe_compile(pattern: str, flags: int, timeout_s: float) -> None:
    """Compiles ``pattern`` in a child process first when its bound exceeds
    `PROBE_ABOVE`; raises `CompileProbeFailed` when that takes longer than ``timeout_s``
    or more than 1 GiB. A syntax error is left to the caller's own compile, which says
    what is wrong; a pattern that passed is remembered."""
    if compiled_size(pattern) <= PROBE_ABOVE or (pattern, flags) in _passed:
        return
    if timeout_s <= 0:
        raise CompileProbeFailed("time")
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _PROBE.format(mem=_PROBE_MEMORY), str(int(flags))],
            input=pattern.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise CompileProbeFailed("time") from None
    if done.returncode not in (0, _SYNTAX_ERROR):
        raise CompileProbeFailed("memory")
    if len(_passed) >= 256:
        _passed.pop(next(iter(_passed)))
    _passed[(pattern, flags)] = None
