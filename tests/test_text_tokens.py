"""The one segmentation rule: raw terms for in-memory rankers, encoded tokens for SQL."""

import random
import unicodedata

from adk_yuxi._text import document_terms, index_tokens, query_terms, query_tokens, text_runs
from adk_yuxi._text.tokens import nfkc


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


# -- the regex run splitter against the per-character loop it replaced -----------------

_OLD_CJK_RANGES = (
    (0x3040, 0x30FF), (0x3100, 0x312F), (0x3131, 0x318F), (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F),
)  # fmt: skip


def _old_runs(text: str) -> list[tuple[bool, str]]:
    """The implementation before the regex, kept as the reference."""

    def is_cjk(ch: str) -> bool:
        code = ord(ch)
        return code >= 0x3040 and any(low <= code <= high for low, high in _OLD_CJK_RANGES)

    runs: list[tuple[bool, str]] = []
    current: list[str] = []
    current_cjk = False
    for ch in unicodedata.normalize("NFKC", text).lower():
        cjk = is_cjk(ch)
        word = cjk or ch.isalnum()
        if current and (not word or cjk != current_cjk):
            runs.append((current_cjk, "".join(current)))
            current = []
        if word:
            current.append(ch)
            current_cjk = cjk
    if current:
        runs.append((current_cjk, "".join(current)))
    return runs


_POOLS = [
    "abcXYZ019 _-.,;:!?'\"\t\n",
    "ＡＢＣａｂｃ０１９　！，。",  # full-width forms and punctuation
    "한국어데이터베이스ㄱㅎㅏ",  # Hangul syllables and compatibility jamo
    "ひらがなカタカナ・ーゝゞ",  # kana, the middle dot and marks inside the kana block
    "数据库查询表年假〇々〆",
    "\u3040\u30ff\u3100\u312f\u3131\u318f\u3400\u4dbf\u4e00\u9fff\uac00\ud7af\uf900\ufaff",
    "\U00020000\U0002fa1f\U0002a6d6\U0001f600\U0001f44d\u200d\ufe0f",  # ext. B-F, emoji, ZWJ
    "\x00\ud800\udfff\ud83d",  # NUL and lone surrogates
    "İıßẞǅﬁﬀ²³½ⅫⅨ①㊿ℌΩµ",  # case and compatibility specials NFKC or lower() change
    "e\u0301a\u0308\u0345ĳŉǰ",  # combining marks, expansions
    "αβγДЖЯאבגابت١٢٣०१२",  # other scripts and digits
]


def _random_text(rng: random.Random) -> str:
    pools = rng.sample(_POOLS, rng.randint(1, 4))
    return "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(0, 60)))


def test_regex_runs_equal_the_per_character_loop_on_random_mixed_text() -> None:
    rng = random.Random(20261201)
    for _ in range(20_000):
        text = _random_text(rng)
        assert text_runs(text) == _old_runs(text), repr(text)


def test_regex_runs_equal_the_loop_over_every_code_point_block() -> None:
    # Every code point once, in strings of 64 consecutive ones (surrogates included).
    for start in range(0, 0x30000, 64):
        text = "".join(chr(code) for code in range(start, start + 64))
        assert text_runs(text) == _old_runs(text), hex(start)


def test_fast_nfkc_equals_unicodedata_on_random_mixed_text() -> None:
    # Full-width forms next to combining marks and other compatibility characters are
    # where replacing them first could differ from normalizing the whole text.
    rng = random.Random(20261202)
    pools = [*_POOLS, "\uff21\uff45\u0301\u0308\u3000\uff5e\uff01\uff0c\u3099\u309a\u304b"]
    for _ in range(20_000):
        chosen = rng.sample(pools, rng.randint(1, 4))
        text = "".join(rng.choice(rng.choice(chosen)) for _ in range(rng.randint(0, 60)))
        assert nfkc(text) == unicodedata.normalize("NFKC", text), repr(text)


def test_fast_nfkc_equals_unicodedata_after_every_full_width_form() -> None:
    for code in [*range(0xFF01, 0xFF5F), 0x3000]:
        for follower in ("", "\u0301", "\u0308", "\u3099", "a", "\uff21", "\ufb01"):
            text = f"数据{chr(code)}{follower}库，"
            assert nfkc(text) == unicodedata.normalize("NFKC", text), hex(code)
