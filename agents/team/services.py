"""Registers the yuxi+sqlite:// and yuxi+postgresql:// schemes for `adk run agents/team`.

`adk run` imports services.py from the agent folder itself, before building services.
"""

from adk_yuxi.models import warn_if_model_unusable
from adk_yuxi.storage import register_service_schemes

register_service_schemes()
warn_if_model_unusable()
