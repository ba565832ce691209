"""A session of many captures: the loader reads only what can matter, with the same findings.

In a decode loop with periodic captures nearly every eager allocation lands on memory a live
trace touches, but is freed before that trace's next replay. The session loader skips those
(only buffers still allocated at a replay, or at a trace input's address, are read), so these
cases check that the findings still equal the plain rules run over every event
(`analyze_both`).
"""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, captured_step, rules_at

_OPS = ("ttnn.matmul", "ttnn.add", "ttnn.silu")


def _decode_loop(captures: int = 6, eager_steps: int = 3, replays: int = 30) -> SessionBuilder:
    """Eager steps reusing the trace's addresses; each capture replayed `replays` times with a
    readback. After every capture a scratch buffer with no caller lands on the trace's first
    intermediate: kept across the replays in even cycles (TR004), freed before them in odd ones."""
    b = SessionBuilder()
    b.open_device(line=5)
    x, w = b.alloc(X), b.alloc(W, size=0x4000)

    def step():
        prev, temps = x, []
        for i, name in enumerate(_OPS):
            out = b.alloc(H + 0x800 * i)
            b.op(name, [prev, w] if "matmul" in name else [prev], [out], line=10 + i)
            temps.append(out)
            prev = out
        for buf in temps[:-1]:
            b.free(buf)
        return prev

    for cycle in range(captures):
        for _ in range(eager_steps):
            b.h2d(x, line=30)
            out = step()
            b.d2h(out, line=20)
            b.free(out)
        tid = b.begin_trace(line=40)
        out = step()
        b.end_trace(tid, line=42)
        scratch = b.alloc(H)
        if cycle % 2:
            b.free(scratch)
        for _ in range(replays):
            b.execute(tid, line=44)
            b.d2h(out, line=46)
        if not cycle % 2:
            b.free(scratch)
        b.release(tid, line=60)
        b.free(out)
    return b


def test_only_allocations_live_at_a_replay_are_reported_in_a_loop_of_captures(analyze_both):
    # GIVEN six captures, each followed by eager steps over the same addresses
    # the loop recaptures at one call path (TR018's performance note); TR004 is what is tested
    findings = [f for f in analyze_both(_decode_loop()) if f.rule != "TR018"]
    # THEN the scratch buffers kept across replays (cycles 0, 2, 4) are one mistake at one
    # place: one TR004 counting them, none for the eager traffic
    assert [(f.rule, f.trace) for f in findings] == [("TR004", 0)]
    occ = findings[0].evidence["occurrences"]
    assert (occ["count"], occ["first"]["trace"], occ["last"]["trace"]) == (3, 0, 4)
    # AND, allocated by no call, it is pinned to the calls around it, said plainly
    assert findings[0].evidence["between"]["after"] == "`end_trace_capture` at model.py:42"
    assert findings[0].line == 42 and "No ttnn call did this" in findings[0].message
    # AND the scratch buffer has no caller: the next step's matmul at that address, beyond the
    # 63 events after the allocation, is another buffer's and is not named as its maker
    assert all(f.message.startswith("This allocation") for f in findings)


def test_a_buffer_at_a_freed_inputs_address_is_read_even_if_freed_before_the_replay(
    analyze_both,
):
    # GIVEN a captured input freed, and a tensor put at its address and freed again before the
    # next replay (never live at a replay, so not a TR004 candidate)
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=31).seq)
    tmp = b.alloc(X, parent=b.h2d(None, line=32, name="from_torch").seq)
    b.free(tmp, parent=b.op("ttnn.deallocate", [tmp], [], line=33).seq)
    b.execute(tid, line=34)
    b.release(tid, line=35)
    # THEN both paths see the input's free (analyze_both compares them); the later tensor's
    # free at that address is not the input's
    rules = rules_at(analyze_both(b))
    assert ("TR005", 31) in rules and ("TR005", 33) not in rules
