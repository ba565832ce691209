"""The device's program cache, keyed the way ttnn keys it.

Real ttnn compiles an op's program the first time it sees its key (the op and the attributes
that shape the program: input shapes, dtypes, layouts and memory configs, the output's dtype,
layout and memory config) and reuses it afterwards; `device.num_program_cache_entries()` counts
the keys (measured on 0.81.1: 1 after a first `relu`, still 1 after a second `relu` of the same
spec, 2 after a first `gelu`). The emulator keeps the same count, so a recorder sees a compile
as growth of that count. It does not model where kernel binaries go.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Optional
from collections.abc import Sequence

_caches: weakref.WeakKeyDictionary[Any, set] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def key(name: str, inputs: Sequence[Any], dtype: Any, layout: Any, memory_config: Any) -> tuple:
    """The program-cache key of one op call: op, each input's spec, the output's spec."""
    specs = tuple(
        (tuple(t.shape), str(t.dtype), str(t.layout), repr(t.memory_config())) for t in inputs
    )
    if memory_config is None and inputs:  # the output defaults to input 0's config
        memory_config = inputs[0].memory_config()
    return (name, specs, str(dtype), str(layout), repr(memory_config))


def lookup(device: Any, name: str, inputs: Sequence[Any], dtype: Any, layout: Any,
           memory_config: Optional[Any]) -> bool:  # fmt: skip
    """Whether the call's program is cached; a miss compiles it (adds the entry)."""
    k = key(name, inputs, dtype, layout, memory_config)
    with _lock:
        cache = _caches.setdefault(device, set())
        if k in cache:
            return True
        cache.add(k)
        return False


def entries(device: Any) -> int:
    with _lock:
        return len(_caches.get(device, ()))


def clear(device: Any) -> None:
    with _lock:
        _caches.pop(device, None)
