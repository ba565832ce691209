"""open_device options that move the allocator, and the metadata a recorder reads, on either
backend. Prints one SEQ line of JSON. RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

out = {}
for label, kw in [("default", {}), ("trace_region_size=8MiB", {"trace_region_size": 8 << 20}),
                  ("l1_small_size=32KiB", {"l1_small_size": 32768})]:
    dev = ttnn.open_device(device_id=0, **kw)
    d = ttnn.Tensor(np.zeros((64, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                    ttnn.DRAM_MEMORY_CONFIG)
    l1 = ttnn.Tensor(np.zeros((64, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                     ttnn.L1_MEMORY_CONFIG)
    info = ttnn._ttnn.reports.get_device_info(dev)
    out[label] = {
        "dram": d.buffer_address(), "l1": l1.buffer_address(),
        "l1_num_banks": info.l1_num_banks, "l1_bank_size": info.l1_bank_size,
        "worker_l1_size": info.worker_l1_size, "num_compute_cores": info.num_compute_cores,
        "address_at_first_l1_cb_buffer": info.address_at_first_l1_cb_buffer,
    }
    if label == "default":
        out["tensor"] = {
            "num_pages": d.buffer_num_pages(), "page_size": d.buffer_page_size(),
            "aligned_page_size": d.buffer_aligned_page_size(), "element_size": d.element_size(),
            "volume": d.volume(), "logical_volume": d.logical_volume(),
            "storage_type": str(d.storage_type()), "is_allocated": d.is_allocated(),
            "buffer_type": str(d.memory_config().buffer_type),
            "memory_layout": str(d.memory_config().memory_layout),
            "dtype": str(d.dtype), "layout": str(d.layout), "shape": list(d.shape),
            "device_id": dev.id(),
            "unique_ids_distinct": d.buffer_unique_id() != l1.buffer_unique_id(),
        }
        ttnn.deallocate(d)
        out["tensor"]["is_allocated_after_deallocate"] = d.is_allocated()
        del d
    del l1
    ttnn.close_device(dev)
print("SEQ " + json.dumps(out))
