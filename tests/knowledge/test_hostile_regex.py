"""The regex bound of the knowledge tools is read as the `regex` parser reads the
pattern: comments, verbose mode and POSIX classes cannot hide counted repeats, and the
compile itself runs inside the search budget."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_yuxi.knowledge._regex_bound import (
    MAX_COMPILED_SIZE,
    CompileProbeFailed,
    compiled_size,
    probe_compile,
)
from adk_yuxi.knowledge._windows import find_windows
from tests._profiles import examples

from .mcp_client import mcp_session
from .test_server import Server, _error, server  # noqa: F401  (the fixture)

BOMB = "(?:(?:a{200}){200}){100}"
DISGUISED = [
    f"(?#[){BOMB}(?#])",  # the reported one: `[` inside a comment read as a class
    rf"(?#\)[){BOMB}",
    "(?x)(?:(?:a{200}) {200}) {100}",  # verbose: blanks before the quantifier
    "(?:(?x:(?:a{200}) {200})#){100}",  # scoped verbose, `#` literal outside it
    "(?:(?:a{200}[[:alpha:])]){200}[[:alpha:])]){100}",  # `)` inside a POSIX class
    "(?:(?:a(?#c){200})(?#[){200}){100}",  # a comment between an item and its count
    "(?:(?:(?i)a{200}){200}){100}",
]


def _find(patterns: list[str]) -> None:
    find_windows(
        ["aaa"], patterns, use_regex=True, case_sensitive=False, max_windows=5, window_size=0
    )


@pytest.mark.parametrize("pattern", DISGUISED)
def test_disguised_bombs_are_refused_before_compiling(pattern: str) -> None:
    assert compiled_size(pattern) > MAX_COMPILED_SIZE
    started = time.process_time()
    with pytest.raises(Exception, match="repeats too much"):
        _find([pattern])
    assert time.process_time() - started < 0.5


def test_the_compile_probe_stops_a_pattern_the_bound_would_let_through() -> None:
    with pytest.raises(CompileProbeFailed):
        probe_compile(BOMB, regex.V0, timeout_s=1.0)
    probe_compile("(?:a{50}){50}b", regex.V0, timeout_s=5.0)  # 2,500 items: in-process
    # Above the probe threshold yet cheap: compiled in the child and accepted.
    probe_compile("(?:a{60}){100}b", regex.IGNORECASE | regex.V0, timeout_s=10.0)
    _find(["(?:a{60}){100}b"])


async def test_the_reported_bomb_through_the_real_server(server: Server) -> None:  # noqa: F811
    grown_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    base = {"kb_id": "eng", "file_id": server.files["long"], "use_regex": True}
    async with mcp_session(server.url, server.token()) as session:
        for pattern in DISGUISED:
            started = time.monotonic()
            found = await session.call_tool("find_kb_document", {**base, "patterns": [pattern]})
            assert "repeats too much" in _error(found)
            assert time.monotonic() - started < 5
        fine = await session.call_tool(
            "find_kb_document", {**base, "patterns": [r"(?x) ERROR - 1 \d{2} (?#ok)"]}
        )
        assert [w["match_lines"] for w in fine.structured_content["windows"]] == [[100], [150]]
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown_before
    assert grown < 300 * 1024, f"peak memory grew by {grown // 1024} MB"


# --- property: any spelling of a structure is bounded by its true expansion --------


@dataclass(frozen=True)
class Lit:
    char: str


@dataclass(frozen=True)
class Group:
    items: tuple[object, ...]
    count: int | None


def true_size(node: object) -> int:
    if isinstance(node, Lit):
        return 1
    assert isinstance(node, Group)
    inner = sum(true_size(i) for i in node.items)
    return inner * node.count if node.count is not None else inner


NODES = st.recursive(
    st.sampled_from("abz").map(Lit),
    lambda inner: st.builds(
        Group, st.lists(inner, min_size=1, max_size=3).map(tuple), st.none() | st.integers(1, 60)
    ),
    max_leaves=6,
)
NOISE = st.sampled_from(["", "(?#[)", r"(?#\)[)", "(?#(])"])


@st.composite
def spelled(draw: st.DrawFn, node: object, verbose: bool) -> str:
    blank = " " if verbose else ""
    if isinstance(node, Lit):
        return draw(st.sampled_from([node.char, f"[{node.char}]", f"[[:alpha:]{node.char})]"]))
    assert isinstance(node, Group)
    body = "".join(blank + draw(NOISE) + draw(spelled(i, verbose)) for i in node.items)
    count = "" if node.count is None else blank + draw(NOISE) + f"{{{blank}{node.count}{blank}}}"
    return f"(?:{body}){count}"


@given(st.data(), NODES, st.booleans())
@settings(max_examples=examples(300), deadline=None)
def test_no_spelling_undercounts(data: st.DataObject, node: object, verbose: bool) -> None:
    body = data.draw(spelled(node, verbose))
    pattern = ("(?x)" + body + " # [ (") if verbose else body
    regex.compile(pattern, regex.V0) if true_size(node) <= 5000 else None
    assert compiled_size(pattern) >= true_size(node), pattern


@given(st.text(max_size=40))
@settings(max_examples=examples(300), deadline=None)
def test_any_text_has_a_bound(pattern: str) -> None:
    assert compiled_size(pattern) >= 0
