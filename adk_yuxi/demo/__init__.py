"""Agents the library ships, so `yuxi demo` runs from any directory after a plain install.

`adk_yuxi.demo.assistant` is the agent of the tour; the repository's `agents/assistant`
folder imports it for `adk run` and `adk web`, so both run the same code.
"""

__all__: list[str] = []
