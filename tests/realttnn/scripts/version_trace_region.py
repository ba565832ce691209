"""A capture that does not fit its trace region, on any tested release: 512 bytes is too small
for even an empty capture's trace buffer (1024 B per bank) whether trace_region_size counts per
bank (0.66.0) or in total (0.75.0 on). end_trace_capture raises ttnn's trace-region message."""
import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=512)  # MARK:open
tid = ttnn.begin_trace_capture(dev, cq_id=0)
try:
    ttnn.end_trace_capture(dev, tid, cq_id=0)  # MARK:end
except RuntimeError as exc:
    print("CAUGHT", [ln for ln in str(exc).splitlines() if "trace buffers" in ln][:1], flush=True)
ttnn.close_device(dev)
