"""ADK's start-up hook for `adk web agents`: service URI schemes and a model check.

`adk web` imports `services` from the agents directory before it builds its services,
so `--session_service_uri yuxi+sqlite:///…` (and the memory and artifact flags) resolve,
and an unusable `YUXI_MODEL` is reported in one line when the server starts rather than
at the first message. `adk run agents/NAME` imports `services` from the agent folder
instead, so each agent folder carries the same few lines.
"""

from adk_yuxi.models import warn_if_model_unusable
from adk_yuxi.storage import register_service_schemes

register_service_schemes()
warn_if_model_unusable()
