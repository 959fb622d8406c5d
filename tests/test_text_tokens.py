"""The one segmentation rule: raw terms for in-memory rankers, encoded tokens for SQL."""

from adk_yuxi._text import document_terms, index_tokens, query_terms, query_tokens


def test_raw_terms_are_the_encoded_tokens_before_encoding() -> None:
    text = "查询 Sales 数据库"
    assert document_terms(text) == ["查", "询", "查询", "sales", "数", "据", "库", "数据", "据库"]
    assert query_terms(text) == ["查询", "sales", "数据", "据库"]
    assert len(index_tokens(text).split()) == len(document_terms(text))
    assert len(query_tokens(text)) == len(query_terms(text))
    assert query_tokens("sales") == query_terms("sales")


def test_query_of_one_cjk_character_keeps_it() -> None:
    assert query_terms("表") == ["表"]


def test_query_may_add_the_characters_of_its_cjk_runs() -> None:
    assert query_terms("年假 days", characters=True) == ["年假", "年", "假", "days"]
