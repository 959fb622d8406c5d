"""What the platform decided, for operators: metrics through the OpenTelemetry API.

Library code records through `instruments()` (no-ops until a provider is installed);
`enable_prometheus` installs the SDK with its Prometheus reader (the `observability`
extra), which `yuxi serve api` and `yuxi serve knowledge` do with `--metrics-port` or
`--metrics-path`.
"""

from ._metrics import (
    METER_NAME,
    YuxiMetrics,
    instruments,
    use_meter_provider,
    watch_pending_waitpoints,
)
from ._prometheus import PrometheusExposition, enable_prometheus

__all__ = [
    "METER_NAME",
    "PrometheusExposition",
    "YuxiMetrics",
    "enable_prometheus",
    "instruments",
    "use_meter_provider",
    "watch_pending_waitpoints",
]
