"""How two reads of a tensor differ, as evidence a reader can check by hand.

Equality is exact (NaN equals NaN): a replay runs the same kernels on the same data as the
eager run, so any difference in the values is a difference in what the replay read or wrote.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def difference(got: torch.Tensor, want: torch.Tensor) -> dict[str, Any] | None:
    """None when equal; else the first differing element, both values and the counts."""
    import torch  # only verified replays need it; real ttnn runs without torch otherwise

    if tuple(got.shape) != tuple(want.shape):
        return {"shape": list(got.shape), "expected_shape": list(want.shape)}
    a, b = got.double(), want.double()
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    if bool(same.all()):
        return None
    wrong = ~same
    flat = int(torch.nonzero(wrong.reshape(-1))[0])
    index = list(torch.unravel_index(torch.tensor(flat), tuple(a.shape))) if a.dim() else []
    delta = (a - b).abs()[wrong]
    return {
        "index": [int(i) for i in index],
        "value": _plain(a.reshape(-1)[flat].item()),
        "expected": _plain(b.reshape(-1)[flat].item()),
        "mismatched": int(wrong.sum()),
        "elements": int(a.numel()),
        "max_abs_diff": _plain(float(delta.max())),
    }


def _plain(x: float) -> float | str:
    """A value the session's JSON can hold (NaN and infinities as text)."""
    return x if math.isfinite(x) else str(x)
