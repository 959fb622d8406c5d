"""The assistant agent of `yuxi demo`: the registry's tools, notes, memory and artifacts,
on the model that `YUXI_MODEL` names (the offline demo model when it is unset)."""

from .agent import app, root_agent

__all__ = ["app", "root_agent"]
