"""TR012 command-queue race: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import queue_races
from ttrecord.analysis.rules import Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR012",
    title="Command-queue race",
    severity=Severity.ERROR,
    levels="error / info",
    summary=(
        "command-queue race: two queues touch the same memory with no event or sync ordering "
        "them, or a non-blocking read used before the host waited"
    ),
    reported_when=(
        "two commands on different command queues of a device touch overlapping memory, at least "
        "one writes, and no happens-before path orders them (see below); or the host uses a "
        "`blocking=False` read's host tensor before it waited for that read; or the host frees a"
        " buffer (`deallocate`, a dropped last reference) or releases a trace (`release_trace`)"
        " while a command using that memory, or a replay of that trace, may still run on another"
        " queue (frees and releases are writes that take effect at once; tt-xla #5828). The"
        " message names the line that allocated the raced buffer and the argument each call"
        " touched it by (one finding per pair "
        "of lines, with the count; races that one wait before the earliest second access orders"
        " are folded under it). Info (latent) when the racing read is an op whose results are"
        " never used (no host read, replay or op whose result is used reads them, e.g. a warm-up"
        " run), saying so"
    ),
    at=(
        "before the second access (where the wait goes); the `record_event` when the event the "
        "second queue waits for was recorded before the first access was enqueued and no event was"
        " recorded on that queue after it; the host's use"
        " of the read; the free or `release_trace`"
    ),
    why=(
        "Two commands on different command queues access overlapping memory (at least one writes)"
        " and no event, synchronize or blocking call orders them, or the host uses a "
        "blocking=False read's result before it waited for it: the queues run on their own, so "
        "the result depends on timing."
    ),
    fix=(
        "Order the two accesses: ttnn.record_event(device, cq) after the first and "
        "ttnn.wait_for_event(other_cq, event) before the second; before the host uses a "
        "blocking=False read, or frees or releases what another queue may still use, "
        "ttnn.event_synchronize(event) or ttnn.synchronize_device."
    ),
    detect=queue_races.detect,
    facts=("queue_accesses",),
    rank=120,
    evidence="`first`, `second` (each `call`, `at`, `cq` (`\"host\"` for the host and for a free or release), `access` (`read`/`write`/`free`/`release`), `event`, `argument` (the parameter that touched the memory: `input_tensor`, `device_tensor`, `output_tensor= (written in place)`, `trace_id=N`, `tensor` of `deallocate`, ...)), `range` (the overlap), `allocated_at` (the line that allocated the raced buffer), `missing_edge`, `stale_event` (`recorded_at`, `event`), `races` (count), `also` (other lines racing with the first access, or ordered by the same missing wait: `call`, `at`, `races`, `event`), `latent` (why no used value changed, for info)",
)
