"""Run the conformance corpus on one ttnn and write what every call did, as JSON.

    python tests/conformance/runner.py --backend real --out ttnn-0.81.1.json      # lane python
    python tests/conformance/runner.py --backend emulator --out emulator.json     # main venv

Each op gets a fresh device; each case runs twice in a row (round 0, then round 1 on the
allocator the first round's frees left behind, which is what shows reuse after a free).
Per round it records the inputs' and outputs' specs (logical and padded shape, dtype,
layout, memory layout, buffer type, shard spec, address, page size and count), the
buffer_allocate/buffer_deallocate nodes ttnn.graph saw inside the call (outputs and
temporaries, with address, bytes per bank and buffer type), the buffers alive after the call
that were not before (outputs, op-owned buffers) and those gone (inputs the op freed). On
the emulator it also compares the outputs' values with the case's torch reference.

The real mock device segfaults on some calls: the runner then starts again after the case
that crashed (recorded as crashed), so one crash costs one case.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import subprocess
import sys
import zlib
from pathlib import Path
from collections.abc import Iterator
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from cases import Case, Context, In  # noqa: E402


def load_ttnn(backend: str) -> Any:
    if backend == "real":
        import ttnn

        return ttnn
    from ttrecord import emulator

    return emulator


@contextlib.contextmanager
def like_the_mock(backend: str) -> Iterator[None]:
    """The emulator as the mock device behaves: it loads no kernel binaries into DRAM (a card
    does: docs/emulator.md), so they would be allocations the reference cannot have."""
    if backend != "emulator":
        yield
        return
    from ttrecord.emulator import program_cache

    saved = program_cache.LOAD_BINARIES
    program_cache.LOAD_BINARIES = False
    try:
        yield
    finally:
        program_cache.LOAD_BINARIES = saved


def _name(value: Any) -> str:
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return str(value).rsplit(".", 1)[-1]


def shard_of(memory_config: Any) -> Any:
    spec = memory_config.shard_spec
    if spec is None:
        return None
    grid = sorted([r.start.x, r.start.y, r.end.x, r.end.y] for r in spec.grid.ranges())
    return {"grid": grid, "shape": list(spec.shape), "orientation": _name(spec.orientation)}


def spec_of(ttnn: Any, t: Any) -> dict[str, Any]:
    mc = t.memory_config()
    on_device = t.storage_type() == ttnn.StorageType.DEVICE
    out: dict[str, Any] = {
        "shape": list(t.shape), "padded": list(t.padded_shape), "dtype": _name(t.dtype), "layout": _name(t.layout),
        "storage": "device" if on_device else "host",
    }
    if on_device:
        out.update({"memory": _name(mc.memory_layout), "buffer": _name(mc.buffer_type), "shard": shard_of(mc)})
        if t.is_allocated():
            out.update({"address": t.buffer_address(), "page_size": t.buffer_page_size(), "pages": t.buffer_num_pages()})
        else:
            out["address"] = None
    return out


def values_for(inp: In, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if inp.values.startswith("index:"):
        return rng.integers(0, int(inp.values.split(":")[1]), size=inp.shape).astype(
            np.int32 if inp.dtype == "int32" else np.uint32)
    if inp.values == "zeros":
        return np.zeros(inp.shape, dtype=np.float32)
    if inp.values == "unit":  # inside (0, 1): logit, erfinv, tan
        return rng.uniform(0.05, 0.95, size=inp.shape).astype(np.float32)
    if inp.values == "positive":
        return rng.uniform(0.5, 2.0, size=inp.shape).astype(np.float32)
    if inp.dtype in ("int32", "uint32", "uint16"):
        return rng.integers(0, 100, size=inp.shape).astype(np.int32 if inp.dtype == "int32" else np.uint32)
    return rng.standard_normal(inp.shape).astype(np.float32)


def make_input(ctx: Context, inp: In, seed: int) -> Any:
    ttnn = ctx.ttnn
    layout = ttnn.TILE_LAYOUT if inp.layout == "TILE" else ttnn.ROW_MAJOR_LAYOUT
    data = values_for(inp, seed)
    if inp.mem is None:
        return ttnn.Tensor(data, ctx.dtype(inp.dtype), None, layout)
    if inp.mem.layout == "INTERLEAVED":
        return ttnn.Tensor(data, ctx.dtype(inp.dtype), ctx.device, layout, ctx.mem(inp.mem))
    # ttnn.Tensor(numpy, ...) cannot write a sharded buffer: stage in DRAM, as models do
    staged = ttnn.Tensor(data, ctx.dtype(inp.dtype), ctx.device, layout, ttnn.DRAM_MEMORY_CONFIG)
    sharded = ttnn.to_memory_config(staged, ctx.mem(inp.mem))
    ttnn.deallocate(staged, force=True)
    return sharded


def flatten(result: Any) -> list[Any]:
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in flatten(r)]
    return [result] if result is not None and hasattr(result, "storage_type") else []


def snapshot(ttnn: Any, device: Any) -> set[tuple[int, int, str]]:
    return {(b.address, b.max_size_per_bank, _name(b.buffer_type)) for b in ttnn._ttnn.reports.get_buffers([device])}


def _error(e: BaseException) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.startswith(("TT_FATAL", "info:"))]
    return f"{type(e).__name__}: {(lines[0] if lines else str(e))[:160]}"


def run_round(ctx: Context, case: Case, round_no: int, numbers: bool) -> dict[str, Any]:
    ttnn = ctx.ttnn
    seed = zlib.crc32(case.key.encode())
    out: dict[str, Any] = {}
    try:
        tensors = [make_input(ctx, inp, seed + i) for i, inp in enumerate(case.inputs)]
    except Exception as e:  # noqa: BLE001 - reported as the case's result
        return {"error": "input: " + _error(e)}
    out["inputs"] = [spec_of(ttnn, t) for t in tensors]
    ref_values = None
    if numbers and case.ref is not None:
        ref_values = [ttnn.to_torch(t) for t in tensors]
    before = snapshot(ttnn, ctx.device)
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    if hasattr(ttnn.graph, "disable_python_io_recording"):
        ttnn.graph.disable_python_io_recording()
    result, error = None, None
    try:
        result = case.call(ctx, *tensors)
    except Exception as e:  # noqa: BLE001 - reported as the case's result
        error = _error(e)
    finally:
        nodes = ttnn.graph.end_graph_capture()
    out["error"] = error
    out["nodes"] = [
        [n["node_type"].replace("buffer_", ""), n["params"].get("address"), n["params"].get("max_size_per_bank"),
         n["params"].get("type")]
        for n in nodes if n["node_type"] in ("buffer_allocate", "buffer_deallocate")
    ]
    outputs = flatten(result)
    out["outputs"] = [spec_of(ttnn, t) for t in outputs]
    after = snapshot(ttnn, ctx.device)
    out["live"] = sorted(list(b) for b in after - before)
    out["gone"] = sorted(list(b) for b in before - after)
    if ref_values is not None and error is None:
        out["numbers"] = compare_numbers(ttnn, case, ref_values, outputs)
    for t in outputs + tensors:
        if t.storage_type() == ttnn.StorageType.DEVICE and t.is_allocated():
            ttnn.deallocate(t, force=True)
    del result, outputs, tensors  # everything is deallocated: no gc.collect needed (and it is slow)
    return out


def compare_numbers(ttnn: Any, case: Case, values: list[Any], outputs: list[Any]) -> str:
    import torch

    assert case.ref is not None
    expected = case.ref(torch, *values)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    if len(expected) != len(outputs):
        return f"{len(outputs)} outputs, reference has {len(expected)}"
    worst = 0.0
    for i, (want, t) in enumerate(zip(expected, outputs)):
        got = ttnn.to_torch(t).float()
        want = want.float()
        if tuple(got.shape) != tuple(want.shape):
            return f"output {i}: shape {list(got.shape)}, reference {list(want.shape)}"
        scale = max(float(want.abs().max()) if want.numel() else 0.0, 1e-3)
        err = float((got - want).abs().max()) / scale if want.numel() else 0.0
        worst = max(worst, err)
    return "ok" if worst <= case.tol else f"max error {worst:.3g} of the reference's range (tolerance {case.tol})"


def run_cases(backend: str, cases: list[Case], sink: Any) -> None:
    """Run `cases` (grouped by op, in order), writing one JSON line per case to `sink`."""
    ttnn = load_ttnn(backend)
    with like_the_mock(backend):
        _run_groups(ttnn, backend, cases, sink)


def _run_groups(ttnn: Any, backend: str, cases: list[Case], sink: Any) -> None:
    from corpus import device_params

    numbers = backend == "emulator"
    for op, grouped in itertools.groupby(cases, key=lambda c: c.op):
        group = list(grouped)
        device = ttnn.open_device(device_id=0, **device_params(op))
        try:
            ctx = Context(ttnn, device)
            for case in group:
                sink.write(json.dumps({"key": case.key, "start": True}) + "\n")
                sink.flush()
                rounds = [run_round(ctx, case, r, numbers and r == 0) for r in range(2)]
                sink.write(json.dumps({"key": case.key, "rounds": rounds}) + "\n")
                sink.flush()
        finally:
            gc.collect()
            ttnn.close_device(device)


class _Collect:
    """A sink keeping the results in memory (in-process runs)."""

    def __init__(self) -> None:
        self.results: dict[str, Any] = {}

    def write(self, line: str) -> None:
        row = json.loads(line)
        if not row.get("start"):
            self.results[row["key"]] = row["rounds"]

    def flush(self) -> None:
        pass


def collect(backend: str, cases: list[Case]) -> dict[str, Any]:
    """Run `cases` in this process (the emulator never crashes the process) and return the
    results by case key, as written to a results file."""
    sink = _Collect()
    run_cases(backend, cases, sink)
    return json.loads(json.dumps(sink.results))


def dump(results: dict[str, Any], path: Path, backend: str, version: str) -> None:
    """One line per case, so a change shows as a one-line diff."""
    lines = [f'"backend": {json.dumps(backend)}', f'"version": {json.dumps(version)}']
    body = ",\n".join(f"{json.dumps(k)}: {json.dumps(results[k], sort_keys=True)}" for k in sorted(results))
    path.write_text("{" + ",\n".join(lines) + ',\n"cases": {\n' + body + "\n}}\n")


def version_of(backend: str) -> str:
    if backend == "real":
        from importlib.metadata import version

        return "ttnn " + version("ttnn")
    return "ttrecord.emulator"


def run_isolated(backend: str, keys: list[str]) -> dict[str, Any]:
    """Run the corpus in child processes, starting again after a case that crashed."""
    results: dict[str, Any] = {}
    remaining = list(keys)
    while remaining:
        proc = subprocess.Popen([sys.executable, __file__, "--backend", backend, "--child", *remaining],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        started = None
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if row.get("start"):
                started = row["key"]
            else:
                results[row["key"]] = row["rounds"]
                started = None
                if len(results) % 50 == 0:
                    print(f"runner: {len(results)} of {len(keys)} cases", file=sys.stderr, flush=True)
        returncode = proc.wait()
        if returncode == 0 and started is None:
            break
        if started is None:
            raise SystemExit(f"runner: the child failed before any case (rc {returncode})")
        print(f"runner: {started} crashed the process (rc {returncode})", file=sys.stderr, flush=True)
        results[started] = {"crashed": returncode}
        remaining = remaining[remaining.index(started) + 1:]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["real", "emulator"], required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default="", help="comma-separated op names or case keys")
    parser.add_argument("--update", action="store_true",
                        help="run only --only's cases (and any case --out lacks) and merge them into --out")
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    from corpus import CORPUS

    if args.child is not None:
        wanted = set(args.child)
        run_cases(args.backend, [c for c in CORPUS if c.key in wanted], sys.stdout)
        return 0
    only = {s for s in args.only.split(",") if s}
    keys = [c.key for c in CORPUS if not only or c.op in only or c.key in only]
    old: dict[str, Any] = {}
    if args.update:
        if args.out is None or not args.out.exists():
            raise SystemExit("runner: --update needs an existing --out file")
        old = json.loads(args.out.read_text())["cases"]
        keys = [c.key for c in CORPUS if c.key in keys and only or c.key not in old]
    results = run_isolated(args.backend, keys) if keys else {}
    if args.update:
        corpus_keys = {c.key for c in CORPUS}
        results = {**{k: v for k, v in old.items() if k in corpus_keys}, **results}
    if args.out is None:
        json.dump(results, sys.stdout, indent=1, sort_keys=True)
    else:
        dump(results, args.out, args.backend, version_of(args.backend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
