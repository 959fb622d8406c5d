"""The model-facing guards an agent config asks for, as plugins placed after the
authorization plugin (so every refusal is decided before a guard sees the call), and the
ledger that charges their repairs to the run's one failure budget."""

from __future__ import annotations

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from pydantic import BaseModel

from ...errors import RunStopped
from ...guards import (
    BM25ToolRetriever,
    CallRepairPlugin,
    Charge,
    ContextOverflowPlugin,
    EmbeddingToolRetriever,
    EmptyReplyPlugin,
    RepeatedCallPlugin,
    ReturnedFailurePlugin,
    StructuredAnswerInvalid,
    StructuredOutputPlugin,
    ToolRetrievalPlugin,
    ToolRetriever,
    offline_embed,
)
from ...tools import ToolRegistry
from ...tools.base import BASE_TOOLS
from ..authorization._errors import ToolFailureLimitReached
from ..authorization._plugin import AuthorizationPlugin
from ..config._config import AgentConfig, ToolRetrieval
from ..rights._visibility import SKILL_LOADER_TOOLS

__all__ = ["RunFailureLedger", "guard_plugins"]


class RunFailureLedger:
    """Charges a repair to `RunBudget.failures`, the budget tool failures spend too; past
    it the run gets its stop (`ToolFailureLimitReached`, or `StructuredAnswerInvalid` for
    the final answer), which the authorization plugin turns into the final error event at
    the next model call."""

    def __init__(self, plugin: AuthorizationPlugin, schema: str | None = None) -> None:
        self.plugin = plugin
        self.schema = schema
        """The name of the output schema of the root agent, if it has one."""

    def charge(self, ctx: ReadonlyContext, why: str, *, final_answer: bool = False) -> Charge:
        """Past the budget the run stops with `TOOL_FAILURES`; when the failure is the
        structured final answer's, with `INVALID_STRUCTURED_ANSWER` naming the schema,
        and at once if it came at the run's last model call (nothing is left to repair
        it with)."""
        run = self.plugin.run_of(ctx)
        if run is None or run.budget is None:  # not a bound run: nothing to charge
            return Charge(attempt=0, limit=0, within=True)
        failures = run.budget.failures
        within = failures.charge(why.split(" ", 1)[0])
        answer = final_answer and self.schema is not None
        last = answer and run.final_call
        if (last or not within) and run.stop is None:
            stop = StructuredAnswerInvalid if answer else ToolFailureLimitReached
            run.stop = stop
            if answer:
                run.stop_text = StructuredAnswerInvalid.public_text(str(self.schema))
            self.plugin.reporter.record(
                stop.CODE.lower(),
                user_id=run.user_id,
                invocation_id=run.invocation_id,
                tool=None,
                detail=f"{failures.total} failures, the last: {why}",
            )
        return Charge(
            attempt=failures.total, limit=failures.limit, within=within and not last, last=last
        )

    def halt(self, ctx: ReadonlyContext, stop: type[RunStopped], text: str) -> None:
        """Ends the run at its next model call with `stop` (its text `text`)."""
        run = self.plugin.run_of(ctx)
        if run is None or run.stop is not None:
            return
        run.stop = stop
        run.stop_text = text
        self.plugin.reporter.record(
            stop.CODE.lower(),
            user_id=run.user_id,
            invocation_id=run.invocation_id,
            tool=None,
            detail=text,
        )

    def stop_response(self, ctx: ReadonlyContext) -> LlmResponse | None:
        return None  # the authorization plugin ends the run

    def end(self, invocation_id: str) -> None:
        return None  # the budget is released with the run's binding


def guard_plugins(
    config: AgentConfig,
    plugin: AuthorizationPlugin,
    *,
    registry: ToolRegistry | None,
    retriever: ToolRetriever | None = None,
    output_schema: type[BaseModel] | None = None,
) -> list[BasePlugin]:
    """The retry of a call the model's context could not take and the text of an empty
    reply (always), retrieval (when configured), then call repair, the charging of
    returned tool errors and the stop of a call repeated with the same result (always),
    then structured output (when the root agent has an output schema)."""
    plugins: list[BasePlugin] = [ContextOverflowPlugin(), EmptyReplyPlugin()]
    retrieval = config.tool_retrieval
    if retrieval is not None:
        # Framework tools stay declared: the final answer and the handoff between agents.
        always = {*BASE_TOOLS, *SKILL_LOADER_TOOLS, SetModelResponseTool.NAME}
        always.add("transfer_to_agent")
        always.update(plugin.agent_tools)  # the agents of a tree called as tools
        always.update(retrieval.pinned)
        plugins.append(
            ToolRetrievalPlugin(
                retriever or _configured(retrieval, registry),
                top_k=retrieval.top_k,
                always=always,
            )
        )
    schema = None if output_schema is None else output_schema.__name__
    ledger = RunFailureLedger(plugin, schema)
    plugins.append(CallRepairPlugin(ledger))
    repeats = config.limits.stop_after_same_failure
    plugins.append(ReturnedFailurePlugin(ledger, repeat_limit=repeats))
    plugins.append(RepeatedCallPlugin(ledger, repeat_limit=config.limits.stop_after_same_call))
    if output_schema is not None:
        plugins.append(StructuredOutputPlugin())
    return plugins


def _configured(retrieval: ToolRetrieval, registry: ToolRegistry | None) -> ToolRetriever:
    if retrieval.retriever == "offline":
        return EmbeddingToolRetriever(offline_embed(), registry)
    return BM25ToolRetriever(registry)
