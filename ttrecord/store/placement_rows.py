"""Where the sharded buffers of a session live, for the memory map (`ttrecord.placement`).

A buffer's placement is in the memory-config text of the tensors that held it; the map asks
only about the few buffers a highlight names, by the `tensors.buffer` index.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ttrecord.placement import Cores, cores_of

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


def buffer_cores(session: Session, ids: Iterable[int]) -> dict[int, Cores]:
    """buffer id -> the cores of its shards, for those of `ids` that are sharded."""
    rows = session.query(
        "SELECT buffer, memory_config FROM tensors WHERE buffer IN (SELECT value FROM json_each(?))"
        " AND memory_config LIKE '% on (%' GROUP BY buffer",
        (json.dumps(sorted(ids)),),
    )
    out: dict[int, Cores] = {}
    for buffer_id, config in rows:
        cores = cores_of(config)
        if cores is not None:
            out[buffer_id] = cores
    return out
