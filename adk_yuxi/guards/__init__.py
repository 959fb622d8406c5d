"""Model-facing guards: per-step tool retrieval, repair of malformed calls, structured
output with tools. Each is an ADK plugin (or a retriever a plugin uses); each only
narrows what the model is shown or answers a call that cannot run, so none can make a
tool more visible or callable than the runtime's gates allow. The ReAct wrapper for
text-only models lives with the models (`adk_yuxi.models.ReactLlm`).
"""

from ._bm25 import BM25Index, ToolDocument
from ._budget import (
    REPAIR_BUDGET_EXHAUSTED,
    Charge,
    RepairBudget,
    RepairBudgetExhausted,
    RepairLedger,
)
from ._embedding import Embedder, EmbeddingToolRetriever
from ._repair import REPAIR_PLUGIN_NAME, CallRepairPlugin
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
    "REPAIR_BUDGET_EXHAUSTED",
    "REPAIR_PLUGIN_NAME",
    "RETRIEVAL_PLUGIN_NAME",
    "STRUCTURED_PLUGIN_NAME",
    "BM25Index",
    "BM25ToolRetriever",
    "CallRepairPlugin",
    "Charge",
    "Embedder",
    "EmbeddingToolRetriever",
    "RepairBudget",
    "RepairBudgetExhausted",
    "RepairLedger",
    "StructuredAnswerInvalid",
    "StructuredOutputPlugin",
    "ToolDocument",
    "ToolRetrievalPlugin",
    "ToolRetriever",
    "latest_user_text",
    "schema_brief",
]
