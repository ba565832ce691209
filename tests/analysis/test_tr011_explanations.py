"""TR011's explanation of a diverged replay names the write that changed the value, asked of the
value-flow model (`Context.flow`), and for a tensor the replay overwrote, the program's use of it."""

from ttrecord.events import Kind
from ttrecord.testing import SessionBuilder

from analysis_helpers import X, Z, captured_step


def _verify(b: SessionBuilder, execute, **args):
    return b._add(Kind.VERIFY, "verify", None, parent=execute.seq, trace=execute.trace,
                  args={"result": "diverged", "replay": 1, **args})  # fmt: skip


def _entry(buf, **more):
    return {"device": buf.device, "buffer_type": buf.buffer_type, "address": buf.address,
            "size": buf.size, "index": [0, 0], "value": -90.0, "expected": 11.0,
            "mismatched": 4, "elements": 4, **more}  # fmt: skip


def _tr011_messages(findings) -> list[str]:
    """TR011's messages, on their own or folded under the error on the same trace."""
    return [f.message for f in findings if f.rule == "TR011"] + \
           [sub["message"] for f in findings for sub in f.folded if sub["rule"] == "TR011"]  # fmt: skip


def test_a_freed_input_names_the_op_that_last_wrote_its_range(analyze_both):
    # GIVEN x (the trace's input, read by the captured matmul) freed after capture, a scratch
    # allocated on its range and written by an eager op at line 41, then the replay (42)
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    reader = next(e for e in b.events if e.name == "ttnn.matmul" and e.trace == tid)
    b.free(x, parent=b.op("ttnn.deallocate", [x], [], line=39).seq)
    maker = b.h2d(None, line=40, name="from_torch")
    scratch = b.alloc(X, parent=maker.seq)
    b.op("ttnn.fill", [], [scratch], line=41)
    execute = b.execute(tid, line=42)
    _verify(b, execute, freed_inputs=[_entry(x, reader_seq=reader.seq)])
    b.release(tid, line=43)
    (text,) = _tr011_messages(analyze_both(b))  # (folded under the freed input's TR005 error)
    assert "a buffer allocated at model.py:40 now sits there" in text
    assert "(`ttnn.fill` at model.py:41 last wrote that range before it)" in text


def test_a_tensor_the_replay_overwrote_names_the_replay_and_the_use(analyze_both):
    # GIVEN a tensor at Z the replay changed (the verification says so) that the host reads after
    b = SessionBuilder()
    tid, x, w, y = captured_step(b)
    writer = next(e for e in b.events if e.name == "ttnn.relu" and e.trace == tid)
    maker = b.h2d(None, line=40, name="from_torch")
    victim = b.alloc(Z, parent=maker.seq)
    execute = b.execute(tid, line=42)
    _verify(b, execute, corrupted=[_entry(victim, writer_seq=writer.seq)])
    b.d2h(victim, line=44)
    b.release(tid, line=45)
    tr011 = [f for f in analyze_both(b) if f.rule == "TR011"]
    (f,) = tr011
    assert "(allocated at model.py:40)" in f.message
    assert "the trace's `ttnn.relu` at model.py:11 writes that range" in f.message
    assert "The program then used the changed value: host read by `to_torch` at model.py:44." in f.message
    assert f.evidence["changed_by"] == ["the replay's `ttnn.relu` at model.py:11"]
