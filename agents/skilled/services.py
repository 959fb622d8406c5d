"""ADK's start-up hook for `adk run agents/skilled` (and `adk web` pointed at this folder).

`adk run` imports services.py from the agent folder itself, before building services:
it registers the yuxi+sqlite:// and yuxi+postgresql:// schemes and reports an unusable
`YUXI_MODEL` in one line at start.
"""

from adk_yuxi.models import warn_if_model_unusable
from adk_yuxi.storage import register_service_schemes

register_service_schemes()
warn_if_model_unusable()
