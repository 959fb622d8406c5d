"""Service URI schemes for `adk run` and `adk web`.

ADK imports this module from the agents directory (adk web) or the agent folder's
parent (adk run) before it builds its services, so registering here is the one place
that works for both CLIs.
"""

from adk_yuxi.storage import register_service_schemes

register_service_schemes()
