"""Skills: SKILL.md packages whose tools stay hidden from the model until activated.

Parsing and validation live here; gating (what the model sees when) lives in
`adk_yuxi.runtime`, on top of ADK's `SkillToolset`, which stores activation in state.
"""

from ._catalog import SkillCatalog
from ._spec import KNOWLEDGE_TOOL_NAMES, SkillSpec, SkillValidationError, load_skill_spec

__all__ = [
    "KNOWLEDGE_TOOL_NAMES",
    "SkillCatalog",
    "SkillSpec",
    "SkillValidationError",
    "load_skill_spec",
]
