"""Host services; importing the package also registers adk_yuxi's service URI schemes.

`adk web` started from the repository root (with no folder, or `.`) imports `services`
from there before it builds its services: this package is what it finds, so
`--session_service_uri yuxi+sqlite:///…` and the memory and artifact flags work from
the root too. The agents themselves live in `agents/` (`adk web agents`).
"""

from adk_yuxi.storage import register_service_schemes

register_service_schemes()
