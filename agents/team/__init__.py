from . import agent

__all__ = ["agent"]
