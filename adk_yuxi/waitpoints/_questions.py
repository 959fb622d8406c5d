"""The question set of `ask_user_question`: its exact argument contract and its answers.

The contract is checked strictly, as the JSON the model sent (through
`StrictFunctionTool`): a JSON string in place of the list, a wrapper object, an alias
field, options given as plain strings, booleans given as strings or numbers all fail
before anything is stored. What passes is normalised (text trimmed, defaults filled,
missing ids generated as ``q-1``, ``q-2`` … by position) and that normalised set is what
a waiting point stores. Answers are validated against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from ._errors import AnswerRejected

__all__ = [
    "QUESTIONS_SCHEMA",
    "Option",
    "Question",
    "QuestionList",
    "normalise_questions",
    "validate_answers",
]

QUESTIONS_SCHEMA = 1
"""Stored with every waiting point; a stored set of another version is never guessed at."""

MAX_QUESTIONS = 5
MAX_OPTIONS = 5
MAX_ANSWER_CHARS = 10_000


def _text(max_length: int) -> Any:
    return Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=max_length)
    ]


_CONFIG = ConfigDict(extra="forbid", strict=True, frozen=True)


class Option(BaseModel):
    """One choice: `value` is what an answer names, `label` what the user reads."""

    model_config = _CONFIG

    label: _text(200)  # type: ignore[valid-type]
    value: _text(200)  # type: ignore[valid-type]
    description: _text(1000) | None = None  # type: ignore[valid-type]


def _distinct_values(options: list[Option]) -> list[Option]:
    values = [o.value for o in options]
    if len(set(values)) != len(values):
        raise ValueError("option values must be distinct within a question")
    return options


class Question(BaseModel):
    """One question as the model sends it; no options means a free-text answer."""

    model_config = _CONFIG

    question: _text(1000)  # type: ignore[valid-type]
    question_id: _text(64) | None = None  # type: ignore[valid-type]
    options: Annotated[
        list[Option], Field(max_length=MAX_OPTIONS), AfterValidator(_distinct_values)
    ] = Field(default_factory=list)
    multi_select: bool = False
    allow_other: bool = True


def normalise_questions(questions: Sequence[Question]) -> list[Question]:
    """Fills missing ids by position; raises `ValueError` on duplicate ids, including
    an explicit id that collides with a generated one."""
    filled = [
        q if q.question_id is not None else q.model_copy(update={"question_id": f"q-{i}"})
        for i, q in enumerate(questions, start=1)
    ]
    seen: set[str] = set()
    for given, q in zip(questions, filled, strict=True):
        qid = q.question_id
        assert qid is not None
        if qid in seen:
            kind = "an explicit id" if given.question_id is not None else "a generated id"
            raise ValueError(f"question id {qid!r} is used twice ({kind} repeats it)")
        seen.add(qid)
    return filled


QuestionList = Annotated[
    list[Question],
    Field(min_length=1, max_length=MAX_QUESTIONS),
    AfterValidator(normalise_questions),
]
"""The `questions` parameter: validated strictly, then normalised."""


def _unicode(value: Any) -> bool:
    """Whether every string in `value` is Unicode text: a lone surrogate (what a JSON
    ``"\\ud800"`` escape decodes to) is not, and no session store can hold it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, Mapping):
        return all(_unicode(k) and _unicode(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_unicode(item) for item in value)
    return True


def _answer_one(q: Question, value: Any) -> Any:
    """The accepted form of one answer, or `ValueError` saying what is wrong."""
    if not _unicode(value):
        raise ValueError("the answer contains a lone surrogate, which is not valid text")
    if isinstance(value, Mapping):
        if set(value) != {"other"} or not isinstance(value["other"], str):
            raise ValueError('an object answer must be exactly {"other": "<text>"}')
        if not q.options:
            raise ValueError("this question takes free text: answer with a string")
        if not q.allow_other:
            raise ValueError("this question does not allow an answer outside its options")
        return {"other": _free_text(value["other"])}
    if not q.options:
        if not isinstance(value, str):
            raise ValueError("this question takes free text: answer with a string")
        return _free_text(value)
    values = [o.value for o in q.options]
    if q.multi_select:
        if not isinstance(value, list) or not value:
            raise ValueError("this question takes a non-empty list of option values")
        if not all(isinstance(v, str) for v in value):
            raise ValueError("every chosen value must be a string")
        if any(v not in values for v in value):
            raise ValueError(f"a chosen value is not among the options ({_listed(values)})")
        if len(set(value)) != len(value):
            raise ValueError("a value is chosen twice")
        return list(value)
    if isinstance(value, list):
        raise ValueError("this question takes a single choice, not a list")
    if not isinstance(value, str) or value not in values:
        raise ValueError(f"the answer is not among the options ({_listed(values)})")
    return value


def _listed(values: Sequence[str], most: int = 20) -> str:
    """The option values a problem names (ours, never the caller's input echoed)."""
    shown = ", ".join(values[:most])
    return shown + (f", … ({len(values) - most} more)" if len(values) > most else "")


def _free_text(value: str) -> str:
    cleaned = value.strip()
    if not cleaned:
        raise ValueError("the answer is empty")
    if len(cleaned) > MAX_ANSWER_CHARS:
        raise ValueError(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    return cleaned


_SHOWN_ID = 64
_SHOWN_UNKNOWN = 10


def _shown(question_id: str) -> str:
    cut = question_id[:_SHOWN_ID]
    return cut.encode("utf-8", "replace").decode("utf-8") if not _unicode(cut) else cut


def validate_answers(questions: Sequence[Question], answers: Any) -> dict[str, Any]:
    """The accepted answers, keyed by question id, in question order; raises
    `AnswerRejected` listing every problem (unknown ids, missing answers, bad values)."""
    if not isinstance(answers, Mapping):
        raise AnswerRejected([{"question_id": "", "problem": "answers must be an object"}])
    by_id = {q.question_id: q for q in questions}
    unknown = [qid for qid in answers if qid not in by_id]
    problems = [
        # Cut: the id is the caller's input, and a problem list is not an echo of it;
        # a lone surrogate in it is replaced, so the problem list is always valid text.
        {"question_id": _shown(str(qid)), "problem": "no such question"}
        for qid in unknown[:_SHOWN_UNKNOWN]
    ]
    if len(unknown) > _SHOWN_UNKNOWN:
        more = len(unknown) - _SHOWN_UNKNOWN
        problems.append({"question_id": "", "problem": f"{more} more unknown question ids"})
    accepted: dict[str, Any] = {}
    for qid, q in by_id.items():
        assert qid is not None
        if qid not in answers:
            problems.append({"question_id": qid, "problem": "no answer given"})
            continue
        try:
            accepted[qid] = _answer_one(q, answers[qid])
        except ValueError as exc:
            problems.append({"question_id": qid, "problem": str(exc)})
    if problems:
        raise AnswerRejected(problems)
    return accepted


def load_questions(stored: Any, schema: int) -> list[Question]:
    """The stored set, re-validated under the current contract; raises `ValueError`
    when it was stored under another schema or no longer validates."""
    if schema != QUESTIONS_SCHEMA:
        raise ValueError(
            f"stored under question schema {schema}, this build reads {QUESTIONS_SCHEMA}"
        )
    if not isinstance(stored, list):
        raise ValueError("the stored question set is not a list")
    questions = [Question.model_validate(q) for q in stored]
    if any(q.question_id is None for q in questions):
        raise ValueError("a stored question has no id")
    return normalise_questions(questions)
