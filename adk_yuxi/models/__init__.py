"""Model selection: `YUXI_MODEL`, ADK's model registry, and the offline demo model."""

from ._context_window import MODEL_CONTEXT_ENV
from ._demo import DEMO_MODEL_NAME, DemoLlm
from ._demo_summary import DemoSummarizer
from ._errors import (
    MODEL_CONTEXT_EXCEEDED,
    MODEL_EMPTY_REPLY,
    MODEL_REJECTED,
    MODEL_UNREACHABLE,
    MODEL_UNUSABLE,
    model_error_text,
)
from ._openai import DEFAULT_OPENAI_BASE_URL, OpenAICompatibleLlm
from ._openai_client import MALFORMED_ARGUMENTS_KEY, GuardedAsyncOpenAI
from ._ping import PingResult, ping_model
from ._react import REACT_PARSE_FAILED, REACT_PREFIX, ReactLlm
from ._request import declared_tool_names
from ._resolve import MODEL_ENV, ModelConfigError, register_models, resolve_model
from ._unusable import UnusableModel, resolve_agent_model, warn_if_model_unusable

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "DEMO_MODEL_NAME",
    "MALFORMED_ARGUMENTS_KEY",
    "MODEL_CONTEXT_ENV",
    "MODEL_CONTEXT_EXCEEDED",
    "MODEL_EMPTY_REPLY",
    "MODEL_ENV",
    "MODEL_REJECTED",
    "MODEL_UNREACHABLE",
    "MODEL_UNUSABLE",
    "REACT_PARSE_FAILED",
    "REACT_PREFIX",
    "DemoLlm",
    "DemoSummarizer",
    "GuardedAsyncOpenAI",
    "ModelConfigError",
    "OpenAICompatibleLlm",
    "PingResult",
    "ReactLlm",
    "UnusableModel",
    "declared_tool_names",
    "model_error_text",
    "ping_model",
    "register_models",
    "resolve_agent_model",
    "resolve_model",
    "warn_if_model_unusable",
]

# 'yuxi-demo' should resolve by name anywhere ADK resolves model strings (YAML agents,
# `LlmAgent(model="yuxi-demo")`), not only through `resolve_model`.
register_models()
