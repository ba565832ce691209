"""`ttnn._ttnn.device`: where real ttnn's native device functions live."""

from ..device import (  # noqa: F401 - re-exported under the real module path
    Arch,
    close_device,
    get_device_ids,
    get_num_devices,
    open_device,
    synchronize_device,
)
from ..config import DEFAULT_L1_SMALL_SIZE, DEFAULT_TRACE_REGION_SIZE, DEFAULT_WORKER_L1_SIZE  # noqa: F401
