"""What the offline demo model does with the knowledge tools.

A question it has no other rule for, asked where `list_kbs` is declared, becomes
`list_kbs`; its answer becomes one `query_kb` over every base with the user's own words
(ranked together, on comparable scores); the answer becomes a quote of the best passage,
with its file and lines.
"""

from __future__ import annotations

from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._text import query_terms

__all__ = ["knowledge_followup", "wants_knowledge"]

_MAX_BASES = 20  # query_kb's limit of bases per call


def wants_knowledge(text: str, tools: set[str]) -> bool:
    return bool(text.strip()) and {"list_kbs", "query_kb"} <= tools


def _question(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role != "user" or not content.parts:
            continue
        text = " ".join(p.text for p in content.parts if p.text and not p.thought).strip()
        if text:
            return text
    return ""


def _structured(response: dict[str, Any] | None) -> dict[str, Any]:
    if not isinstance(response, dict):
        return {}
    value = response.get("structuredContent") or response.get("structured_content") or {}
    return value if isinstance(value, dict) else {}


def _error_text(response: dict[str, Any] | None) -> str | None:
    if not isinstance(response, dict):
        return None
    if response.get("isError") or response.get("is_error"):
        parts = response.get("content") or []
        return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)) or "error"
    if "error" in response:
        return str(response["error"])
    return None


def _best_line(content: str, question: str) -> str:
    """The line of a passage that answers the question: the body line sharing the most
    terms with it, the terms its heading shares counting for it too (a heading names the
    topic; the sentence under it answers). A heading is quoted only when the passage has
    no other line. When no line shares a term (a question in other words, or in the
    other language, found by meaning), the passage's body is quoted whole."""
    wanted = set(query_terms(question))

    def shared(line: str) -> int:
        return len(wanted & set(query_terms(line)))

    lines = [line.strip() for line in content.split("\n") if line.strip()]
    if not lines:
        return content.strip()
    body: list[tuple[int, int, str]] = []
    heading = 0
    for line in lines:
        if line.startswith("#"):
            heading = shared(line)
        else:
            own = shared(line)
            body.append((own + heading, own, line))
    if not body:
        return max(lines, key=shared)
    best = max(body, key=lambda scored: scored[:2])
    return best[2] if best[0] else " ".join(line for _, _, line in body)


def knowledge_followup(
    request: LlmRequest, responses: list[types.FunctionResponse]
) -> list[types.Part] | str | None:
    """Function calls or a final text for knowledge responses; None for anything else."""
    named = {r.name: r for r in responses}
    question = _question(request)
    if "list_kbs" in named:
        response = named["list_kbs"].response
        problem = _error_text(response)
        if problem:
            return f"(demo model) I could not list the knowledge bases: {problem}"
        kbs = _structured(response).get("kbs") or []
        if not kbs:
            return "(demo model) No knowledge base is available to you here."
        bases = [kb["kb_id"] for kb in kbs[:_MAX_BASES]]
        args = {"kb_ids": bases, "query": question, "top_k": 5}
        return [types.Part(function_call=types.FunctionCall(name="query_kb", args=args))]
    queries = [r for r in responses if r.name == "query_kb"]
    if not queries:
        return None
    hits: list[dict[str, Any]] = []
    problems: list[str] = []
    for r in queries:
        problem = _error_text(r.response)
        if problem:
            problems.append(problem)
        hits.extend(_structured(r.response).get("hits") or [])
    if not hits:
        reason = f" ({'; '.join(problems)})" if problems else ""
        return f"(demo model) The knowledge bases have nothing on that{reason}."
    best = max(hits, key=lambda hit: float(hit.get("score", 0)))
    quote = _best_line(str(best.get("content", "")), question)
    where = f"{best.get('file_name')}, lines {best.get('start_line')}-{best.get('end_line')}"
    return f"(demo model) From the knowledge base: “{quote}” ({where})"
