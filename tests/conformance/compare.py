"""Compare what the emulator did with what the real ttnn 0.81.1 did, case by case.

A case matches on **spec** when every output (and input) has the same logical and padded
shape, dtype, layout, memory layout, buffer type, shard spec, page size and page count, and
the call raises on both or on neither; it matches on **allocation** when, in both rounds,
the addresses of inputs and outputs, the allocate/deallocate nodes inside the call
(temporaries included), the buffers left alive and the buffers freed are the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "ttnn-0.81.1.json"

SPEC_FIELDS = ("storage", "shape", "padded", "dtype", "layout", "memory", "buffer", "shard", "page_size", "pages")


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _spec_diffs(where: str, real: list[dict], emu: list[dict]) -> list[str]:
    if len(real) != len(emu):
        return [f"{where}: {len(real)} tensors on ttnn, {len(emu)} on the emulator"]
    out = []
    for i, (r, e) in enumerate(zip(real, emu)):
        for field in SPEC_FIELDS:
            if r.get(field) != e.get(field):
                out.append(f"{where} {i} {field}: ttnn {r.get(field)}, emulator {e.get(field)}")
    return out


def _alloc_diffs(where: str, real: dict, emu: dict) -> list[str]:
    out = []
    for group in ("inputs", "outputs"):
        r_addr = [t.get("address") for t in real.get(group, [])]
        e_addr = [t.get("address") for t in emu.get(group, [])]
        if r_addr != e_addr:
            out.append(f"{where} {group} addresses: ttnn {r_addr}, emulator {e_addr}")
    for field in ("nodes", "live", "gone"):
        if real.get(field) != emu.get(field):
            out.append(f"{where} {field}: ttnn {real.get(field)}, emulator {emu.get(field)}")
    return out


def differences(real: Any, emu: Any) -> dict[str, list[str]]:
    """{'spec': [...], 'allocation': [...]} for one case (both lists empty: it matches)."""
    spec: list[str] = []
    alloc: list[str] = []
    if emu is None:
        return {"spec": ["not run on the emulator"], "allocation": []}
    if isinstance(real, dict) or isinstance(emu, dict):  # crashed
        return {"spec": [f"ttnn {real}, emulator {emu}"], "allocation": []}
    for n, (r, e) in enumerate(zip(real, emu)):
        where = f"round {n}"
        r_err, e_err = r.get("error"), e.get("error")
        if (r_err is None) != (e_err is None):
            spec.append(f"{where}: ttnn {'raises ' + r_err if r_err else 'runs'}, "
                        f"emulator {'raises ' + e_err if e_err else 'runs'}")
            continue
        spec += _spec_diffs(f"{where} input", r.get("inputs", []), e.get("inputs", []))
        spec += _spec_diffs(f"{where} output", r.get("outputs", []), e.get("outputs", []))
        alloc += _alloc_diffs(where, r, e)
    return {"spec": spec, "allocation": alloc}


def compare_all(reference: dict[str, Any], emulator: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return {key: differences(real, emulator.get(key)) for key, real in reference.items()}


def numbers_failures(emulator: dict[str, Any]) -> dict[str, str]:
    """Cases whose emulator outputs differ from the torch reference."""
    out = {}
    for key, rounds in emulator.items():
        if isinstance(rounds, list) and rounds and rounds[0].get("numbers") not in (None, "ok"):
            out[key] = rounds[0]["numbers"]
    return out


def main(argv: list[str]) -> int:
    """`python compare.py REAL.json EMULATOR.json [substring]`: every difference, per case."""
    real, emu = load(Path(argv[0]))["cases"], load(Path(argv[1]))["cases"]
    wanted = argv[2] if len(argv) > 2 else ""
    result = compare_all(real, emu)
    bad = 0
    for key, diff in sorted(result.items()):
        if wanted not in key:
            continue
        lines = diff["spec"] + diff["allocation"]
        if lines:
            bad += 1
            print(key)
            for line in lines:
                print("   ", line[:400])
    print(f"{len(result) - bad} of {len(result)} cases match")
    for key, why in numbers_failures(emu).items():
        print("numbers", key, why)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
