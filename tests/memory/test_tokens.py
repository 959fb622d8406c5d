"""The tokeniser both full-text backends index and query with."""

from adk_yuxi.memory._tokens import index_tokens, query_tokens, scope_token


def test_words_are_lowercased_and_normalised() -> None:
    assert index_tokens("Hello, ＷＯＲＬＤ! it's 2024") == "hello world it s 2024"


def test_cjk_runs_become_characters_and_bigrams() -> None:
    tokens = index_tokens("数据库").split()
    assert len(tokens) == 5  # three characters, two bigrams
    assert query_tokens("数据库") == [query_tokens("数据")[0], query_tokens("据库")[0]]
    assert all(token.isascii() and token.isalnum() for token in tokens)


def test_mixed_scripts_split_at_the_boundary() -> None:
    assert "python" in index_tokens("私はPythonを使う").split()
    assert query_tokens("用 Python") == [query_tokens("用")[0], "python"]


def test_scope_tokens_differ_per_scope() -> None:
    assert scope_token("a", "u1") != scope_token("a", "u2")
    assert scope_token("a", "u1").isalnum()
