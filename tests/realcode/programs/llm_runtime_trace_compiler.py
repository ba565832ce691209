"""tt-transformers' llm_runtime TraceCompiler: every trace's persistent inputs are allocated
before the first capture; decode traces are captured before prefill traces; each capture is
primed (its exact body run once eagerly, the prime output released, the device synchronized)
right before begin_trace_capture; a replay refreshes the persistent inputs through the
operation's refresh callback and enqueues a non-blocking execute_trace.

Upstream: tenstorrent/tt-transformers src/tt_transformers/llm_runtime/trace_compiler.py@02290fbb8dacb2173c8fa03a5493ecc3a60a09bc
(TraceKey, PersistentInputs, InputRefreshPolicy, RefreshDecision, TraceArtifact,
TraceCapturePlan, TraceRecord, TraceCompiler.register_capture_plan / capture_all / replay /
cleanup / _release_trace).
Changes:
  * trace aliases and per-program workspaces, rollback orphans, schema fingerprints, logging and
    malloc_trim dropped (no plan here uses them); the failure/rollback paths of capture_all
    shortened to re-raising (nothing here fails);
  * ProgramCompiler and tensor_resources -> minimal stand-ins (a registry of compiled program
    keys; deallocation of every tensor in a nested structure); TraceKey digests computed with
    hashlib over repr(signature);
  * the operations (the runtime's prefill and decode programs) -> stand-in plans over a small
    model: decode (tokens -> embedding, linear, gelu, linear) and prefill for padded lengths 32
    and 64 (the same ops over [1, 1, S, 64]), their persistent inputs made by prepare_inputs,
    primed and captured as the runtime does, refreshed with copy_host_to_device_tensor;
  * a driver in place of the runtime: ttnn.open_device; two prefill requests per length and four
    decode steps replayed in an interleaved order; every output read with a blocking to_torch
    before the next replay and compared with the same program run eagerly; exit 1 on mismatch.
"""

import hashlib
import sys
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import torch

import ttnn

HIDDEN, VOCAB, USERS = 64, 64, 32


# --- stand-ins for program_compiler / tensor_resources -------------------------------------
@dataclass(frozen=True)
class ProgramKey:
    digest: str


class ProgramCompiler:
    def __init__(self, mesh_device):
        self.mesh_device = mesh_device
        self.compile_orphan_count = 0
        self._compiled = set()
        self.trace_capture_in_progress = False
        self.trace_active = False

    def mark_compiled(self, key):
        self._compiled.add(key)

    def require_compiled(self, key):
        if key not in self._compiled:
            raise RuntimeError(f"program {key.digest} is not compiled")

    def set_trace_capture_in_progress(self, value):
        self.trace_capture_in_progress = value

    def set_trace_active(self, value):
        self.trace_active = value


def best_effort_deallocate_owned_tensors(values, deallocated_tensor_ids):
    failures = []
    stack = [values]
    while stack:
        value = stack.pop()
        if isinstance(value, ttnn.Tensor):
            if id(value) not in deallocated_tensor_ids and value.is_allocated():
                ttnn.deallocate(value)
                deallocated_tensor_ids.add(id(value))
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return failures


# --- trace_compiler.py --------------------------------------------------------------------------
@dataclass(frozen=True)
class TraceKey:
    """Full content digest for one operation-produced trace signature."""

    digest: str

    @classmethod
    def from_signature(cls, signature):
        return cls(hashlib.sha256(repr(("tttv2.llm-runtime.trace", 1, signature)).encode()).hexdigest())


@dataclass
class PersistentInputs:
    """Trace-owned persistent replay inputs opaque to public runtime APIs."""

    values: Any


@dataclass(frozen=True)
class InputRefreshPolicy:
    every_replay: tuple = ()
    full_on_batch_reset: bool = True
    full_on_graph_switch: bool = True
    full_without_device_feedback: bool = True
    refresh_page_table_on_change: bool = True


@dataclass(frozen=True)
class RefreshDecision:
    full: bool
    page_table: bool
    fields: tuple


@dataclass
class TraceArtifact:
    trace_id: Any
    persistent_inputs: PersistentInputs
    outputs: Any
    refresh_policy: InputRefreshPolicy
    trace_released: bool = False
    deallocated_tensor_ids: set = field(default_factory=set, repr=False)


@dataclass(frozen=True)
class TraceCapturePlan:
    """Operation-produced specification for one trace-capable compiled program."""

    program_key: ProgramKey
    trace_signature: Any
    operation: str
    prepare_inputs: Callable
    capture: Callable
    refresh_policy: InputRefreshPolicy = InputRefreshPolicy()
    prime: Any = None
    release_prime_output: Any = None

    def __post_init__(self):
        if self.operation not in ("prefill", "decode"):
            raise ValueError(f"Unsupported trace operation: {self.operation!r}")
        if (self.prime is None) is not (self.release_prime_output is None):
            raise ValueError("trace capture prime and output releaser must be configured together")


@dataclass
class TraceRecord:
    signature: Any
    operation: str
    artifact: Any = None


class TraceCompiler:
    """Register, capture, replay, and release traces for compiled programs."""

    def __init__(self, program_compiler):
        self.program_compiler = program_compiler
        self.mesh_device = program_compiler.mesh_device
        self._traces = {}
        self._plans = {}
        self._program_to_trace = {}
        self._capture_in_progress = False
        self._activated = False
        self._released = False
        self._previous_replay_key = None
        self._replay_count = 0
        self._replay_counts = {"prefill": 0, "decode": 0}

    def register_capture_plan(self, plan):
        """Validate a compiled source and register one explicit trace association."""
        self._ensure_live()
        if self._capture_in_progress or self._activated:
            raise RuntimeError("Cannot register trace capture plans during capture or after trace activation")
        self.program_compiler.require_compiled(plan.program_key)

        trace_key = TraceKey.from_signature(plan.trace_signature)
        record = self._traces.get(trace_key)
        if record is None:
            record = TraceRecord(signature=plan.trace_signature, operation=plan.operation)
            self._traces[trace_key] = record
            self._plans[trace_key] = plan
        self._program_to_trace[plan.program_key] = trace_key
        return trace_key

    def capture_all(self):
        """Allocate every persistent input before beginning the first capture."""
        self._ensure_live()
        if self._activated:
            return
        if self._capture_in_progress:
            raise RuntimeError("Trace capture is already in progress")
        if not self._plans:
            return
        if self.program_compiler.compile_orphan_count:
            raise RuntimeError("Cannot capture while unreleased compile outputs remain")

        prepared = {}
        self._capture_in_progress = True
        for trace_key, plan in self._plans.items():
            self.program_compiler.require_compiled(plan.program_key)
            values = plan.prepare_inputs()
            persistent = values if isinstance(values, PersistentInputs) else PersistentInputs(values)
            prepared[trace_key] = (persistent, plan)

        capture_order = sorted(
            prepared,
            key=lambda trace_key: self._traces[trace_key].operation == "prefill",
        )
        for trace_key in capture_order:
            persistent, plan = prepared[trace_key]
            record = self._traces[trace_key]
            # Selected operation plans prime their exact persistent-input body immediately before
            # capturing that same body.
            if plan.prime is not None:
                prime_output = plan.prime(persistent)
                ttnn.synchronize_device(self.mesh_device)
                plan.release_prime_output(prime_output)
                ttnn.synchronize_device(self.mesh_device)

            self.program_compiler.set_trace_capture_in_progress(True)
            trace_id = ttnn.begin_trace_capture(self.mesh_device, cq_id=0)
            outputs = plan.capture(persistent)
            ttnn.end_trace_capture(self.mesh_device, trace_id, cq_id=0)
            ttnn.synchronize_device(self.mesh_device)
            record.artifact = TraceArtifact(
                trace_id=trace_id,
                persistent_inputs=persistent,
                outputs=outputs,
                refresh_policy=plan.refresh_policy,
            )
            self.program_compiler.set_trace_capture_in_progress(False)

        ttnn.synchronize_device(self.mesh_device)
        self._capture_in_progress = False
        self.program_compiler.set_trace_capture_in_progress(False)
        self._activated = True
        self.program_compiler.set_trace_active(True)

    def replay(self, program_key, refresh_inputs, *, reset_batch=False, device_feedback_enabled=False,
               feedback_compatible=False, page_table_changed=False):
        """Refresh persistent inputs and enqueue one non-blocking trace replay."""
        self._ensure_live()
        self.program_compiler.require_compiled(program_key)
        trace_key = self._program_to_trace.get(program_key)
        if trace_key is None:
            raise RuntimeError(f"Program key {program_key.digest} has no trace association")
        record = self._traces[trace_key]
        artifact = record.artifact
        if artifact is None:
            raise RuntimeError(f"Trace key {trace_key.digest} has not been captured")

        policy = artifact.refresh_policy
        switched = self._previous_replay_key != trace_key
        full = (
            (policy.full_on_batch_reset and reset_batch)
            or (policy.full_on_graph_switch and switched)
            or (policy.full_without_device_feedback and not (device_feedback_enabled and feedback_compatible))
        )
        decision = RefreshDecision(
            full=full,
            page_table=policy.refresh_page_table_on_change and page_table_changed,
            fields=policy.every_replay,
        )
        refresh_inputs(artifact, decision)
        ttnn.execute_trace(self.mesh_device, artifact.trace_id, cq_id=0, blocking=False)
        self._replay_count += 1
        self._replay_counts[record.operation] += 1
        self._previous_replay_key = trace_key
        return artifact.outputs

    def cleanup(self):
        """Release traces and persistent inputs, then reopen the program gate."""
        if self._released:
            return
        for record in self._traces.values():
            self._release_trace(record)
        self._capture_in_progress = False
        self._activated = False
        self._previous_replay_key = None
        self.program_compiler.set_trace_capture_in_progress(False)
        self.program_compiler.set_trace_active(False)
        self._released = True

    def _release_trace(self, record):
        artifact = record.artifact
        if artifact is None:
            return []
        if not artifact.trace_released:
            ttnn.release_trace(self.mesh_device, artifact.trace_id)
            artifact.trace_released = True

        failures = best_effort_deallocate_owned_tensors(
            (artifact.persistent_inputs.values, artifact.outputs),
            artifact.deallocated_tensor_ids,
        )
        if failures:
            return failures
        record.artifact = None
        return []

    def _ensure_live(self):
        if self._released:
            raise RuntimeError("TraceCompiler has been released")


# --- stand-in operations ------------------------------------------------------------------------
class Model:
    def __init__(self, device):
        torch.manual_seed(3)
        self.device = device
        self.embedding = ttnn.from_torch(torch.randn(VOCAB, HIDDEN), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
        self.w1 = ttnn.from_torch(torch.randn(HIDDEN, HIDDEN) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.w2 = ttnn.from_torch(torch.randn(HIDDEN, VOCAB) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def forward(self, tokens):
        x = ttnn.unsqueeze_to_4D(ttnn.embedding(tokens, self.embedding, layout=ttnn.TILE_LAYOUT))
        return ttnn.linear(ttnn.gelu(ttnn.linear(x, self.w1)), self.w2)


def host_tokens(values):
    return ttnn.from_torch(values.reshape(1, -1).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)


class Operation:
    """One compiled program (decode, or prefill at one padded length) and its trace plan."""

    def __init__(self, model, program_compiler, operation, length):
        self.model, self.operation, self.length = model, operation, length
        self.key = ProgramKey(f"{operation}-{length}")
        # eager compile of the program, as TracedExecutor.compile_* does before registering
        output = model.forward(ttnn.to_device(host_tokens(torch.zeros(length)), model.device))
        ttnn.deallocate(output)
        program_compiler.mark_compiled(self.key)
        self.pending = None

    def plan(self):
        return TraceCapturePlan(
            program_key=self.key,
            trace_signature=(self.operation, self.length),
            operation=self.operation,
            prepare_inputs=self.prepare_inputs,
            capture=self.capture,
            prime=self.capture,
            release_prime_output=self.release_prime_output,
        )

    def prepare_inputs(self):
        return PersistentInputs({"tokens": ttnn.to_device(host_tokens(torch.zeros(self.length)), self.model.device)})

    def capture(self, persistent):
        return self.model.forward(persistent.values["tokens"])

    def release_prime_output(self, prime_output):
        ttnn.deallocate(prime_output)
        return []

    def refresh_inputs(self, artifact, decision):
        if decision.full:
            ttnn.copy_host_to_device_tensor(host_tokens(self.pending), artifact.persistent_inputs.values["tokens"])


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=400000)
    model = Model(device)
    program_compiler = ProgramCompiler(device)
    operations = {("decode", USERS): Operation(model, program_compiler, "decode", USERS)}
    for length in (32, 64):
        operations[("prefill", length)] = Operation(model, program_compiler, "prefill", length)

    trace_compiler = TraceCompiler(program_compiler)
    for op in operations.values():
        trace_compiler.register_capture_plan(op.plan())
    trace_compiler.capture_all()

    torch.manual_seed(0)
    schedule = [("prefill", 32), ("prefill", 64), ("decode", USERS), ("decode", USERS), ("prefill", 32),
                ("decode", USERS), ("prefill", 64), ("decode", USERS)]
    requests = [(key, torch.randint(0, VOCAB, (key[1],))) for key in schedule]
    traced = []
    for key, tokens in requests:
        op = operations[key]
        op.pending = tokens
        outputs = trace_compiler.replay(op.key, op.refresh_inputs)
        traced.append(ttnn.to_torch(outputs))
    trace_compiler.cleanup()

    eager = [ttnn.to_torch(model.forward(ttnn.to_device(host_tokens(tokens), device))) for _, tokens in requests]
    ttnn.close_device(device)
    same = all(torch.equal(a, b) for a, b in zip(traced, eager))
    print(f"traced == eager for {len(requests)} replays of 3 traces: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
