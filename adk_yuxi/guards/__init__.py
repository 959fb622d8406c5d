"""Model-facing guards: per-step tool retrieval, repair of malformed calls, structured
output with tools, charging of errors tools return (and a stop for the same failing call
repeated), a stop for the same call answered the same way again and again, and a
compaction and one retry for a request too long for the model. Each is an ADK plugin (or
a retriever a plugin uses); each only narrows what the model is shown or answers a call
that cannot run, so none can make a tool more visible or callable than the runtime's
gates allow. The ReAct wrapper for text-only models lives with the models
(`adk_yuxi.models.ReactLlm`).
"""

from ._bm25 import BM25Index, ToolDocument
from ._budget import (
    REPAIR_BUDGET_EXHAUSTED,
    Charge,
    RepairBudget,
    RepairBudgetExhausted,
    RepairLedger,
)
from ._embedding import Embedder, EmbeddingToolRetriever, offline_embed
from ._empty import EMPTY_REPLY_PLUGIN_NAME, EMPTY_REPLY_TEXT, EmptyReplyPlugin
from ._failures import (
    FAILURE_PLUGIN_NAME,
    REPEATED_TOOL_FAILURE,
    RepeatedToolFailure,
    ReturnedFailurePlugin,
    returned_error_code,
)
from ._overflow import OVERFLOW_PLUGIN_NAME, ContextOverflowPlugin, compaction_forced
from ._repair import REPAIR_PLUGIN_NAME, CallRepairPlugin
from ._repeats import REPEAT_PLUGIN_NAME, REPEATED_TOOL_CALL, RepeatedCallPlugin, RepeatedToolCall
from ._retrieval import BM25ToolRetriever, ToolRetriever
from ._retrieval_plugin import RETRIEVAL_PLUGIN_NAME, ToolRetrievalPlugin, latest_user_text
from ._schema_brief import schema_brief
from ._structured import (
    DRAFT_METADATA_KEY,
    STRUCTURED_PLUGIN_NAME,
    StructuredAnswerInvalid,
    StructuredOutputPlugin,
)

__all__ = [
    "DRAFT_METADATA_KEY",
    "EMPTY_REPLY_PLUGIN_NAME",
    "EMPTY_REPLY_TEXT",
    "FAILURE_PLUGIN_NAME",
    "OVERFLOW_PLUGIN_NAME",
    "REPAIR_BUDGET_EXHAUSTED",
    "REPAIR_PLUGIN_NAME",
    "REPEATED_TOOL_CALL",
    "REPEATED_TOOL_FAILURE",
    "REPEAT_PLUGIN_NAME",
    "RETRIEVAL_PLUGIN_NAME",
    "STRUCTURED_PLUGIN_NAME",
    "BM25Index",
    "BM25ToolRetriever",
    "CallRepairPlugin",
    "Charge",
    "ContextOverflowPlugin",
    "Embedder",
    "EmbeddingToolRetriever",
    "EmptyReplyPlugin",
    "RepairBudget",
    "RepairBudgetExhausted",
    "RepairLedger",
    "RepeatedCallPlugin",
    "RepeatedToolCall",
    "RepeatedToolFailure",
    "ReturnedFailurePlugin",
    "StructuredAnswerInvalid",
    "StructuredOutputPlugin",
    "ToolDocument",
    "ToolRetrievalPlugin",
    "ToolRetriever",
    "compaction_forced",
    "latest_user_text",
    "offline_embed",
    "returned_error_code",
    "schema_brief",
]
