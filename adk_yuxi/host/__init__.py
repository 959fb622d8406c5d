"""The host API: authenticated HTTP access to agent runs over the SDK's one runtime path.

`create_app(ApiConfig(...))` builds the ASGI app; `yuxi serve api` runs it with uvicorn.
The endpoints are listed in docs/host-api.md and in the OpenAPI document.
"""

from ._app import create_app
from ._config import ApiConfig

__all__ = ["ApiConfig", "create_app"]
