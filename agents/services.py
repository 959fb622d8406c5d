"""Service URI schemes for `adk web agents`.

`adk web` imports `services` from the agents directory before it builds its services,
so `--session_service_uri yuxi+sqlite:///…` (and the memory and artifact flags) resolve.
`adk run agents/NAME` imports `services` from the agent folder instead, so each agent
folder carries a one-line `services.py` of its own.
"""

from adk_yuxi.storage import register_service_schemes

register_service_schemes()
