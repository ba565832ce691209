"""Replay verification (`ttrecord run --verify-replay`): a replay must compute what its ops
compute eagerly on the same inputs, and write nothing else.

The reference is a shadow run, not the program's own prep run: keeping the prep run's outputs
alive until the first replay would move the very addresses the check is about. At a verified
replay the verifier copies the data of the trace's captured inputs into fresh buffers, runs the
captured ops eagerly on the copies, reads their results and frees everything it made (the
allocator is back where it was); then the replay runs and the verifier compares
- every trace output the program still holds with the shadow output of the op that wrote it;
- every captured input an op changes in place (a KV cache) with its shadow copy;
- every other live tensor whose bank-local range overlaps a range the trace writes, before and
  after the replay: a replay must not touch it.
A captured input the program freed is copied from its data at end_trace_capture, which is what
the trace was captured to read. Device memory is read only outside capture: right after
end_trace_capture and around execute_trace.

Verified replays: the first of each trace, and a later one whenever the set of live buffers
changed since that trace's last verified replay, since only an allocation or free can make a
trace that was right go wrong.

Verifying moves no address: see `holds.py` for how held tensors are let go.
"""

from ttrecord.recorder.verify.verifier import Verifier

__all__ = ["Verifier"]
