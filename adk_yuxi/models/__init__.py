"""Model selection: `YUXI_MODEL`, ADK's model registry, and the offline demo model."""

from ._demo import DEMO_MODEL_NAME, DemoLlm
from ._openai_client import MALFORMED_ARGUMENTS_KEY, GuardedAsyncOpenAI
from ._react import REACT_PARSE_FAILED, REACT_PREFIX, ReactLlm
from ._request import declared_tool_names
from ._resolve import MODEL_ENV, ModelConfigError, register_models, resolve_model

__all__ = [
    "DEMO_MODEL_NAME",
    "MALFORMED_ARGUMENTS_KEY",
    "MODEL_ENV",
    "REACT_PARSE_FAILED",
    "REACT_PREFIX",
    "DemoLlm",
    "GuardedAsyncOpenAI",
    "ModelConfigError",
    "ReactLlm",
    "declared_tool_names",
    "register_models",
    "resolve_model",
]

# 'yuxi-demo' should resolve by name anywhere ADK resolves model strings (YAML agents,
# `LlmAgent(model="yuxi-demo")`), not only through `resolve_model`.
register_models()
