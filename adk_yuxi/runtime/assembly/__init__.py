"""From values to an ADK `App`: `build_app`, the `Toolbox`, the capabilities
(`RunRecords`, `Offload`, `Compaction`), the checks made before anything runs, the
model-facing guards, and the run config a host passes to its Runner."""

from ._app import build_app
from ._capabilities import Capability, Compaction, Offload, RunRecords
from ._compaction import GuardedSummarizer, compaction_config
from ._offload import OFFLOAD_PLUGIN_NAME, ToolResultOffloadPlugin
from ._prompt_estimate import PromptEstimatePlugin
from ._run_config import host_run_config, telemetry_recorded
from ._toolbox import Toolbox

__all__ = [
    "OFFLOAD_PLUGIN_NAME",
    "Capability",
    "Compaction",
    "GuardedSummarizer",
    "Offload",
    "PromptEstimatePlugin",
    "RunRecords",
    "ToolResultOffloadPlugin",
    "Toolbox",
    "build_app",
    "compaction_config",
    "host_run_config",
    "telemetry_recorded",
]
