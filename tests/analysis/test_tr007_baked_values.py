"""TR007: a scalar argument of a captured op that differed between eager calls at that line."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, X, rules_at


def _schedule(values: list[float], captured: float) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for v in values:  # eager steps
        out = b.alloc(H)
        b.op("ttnn.multiply", [x], [out], line=21, args={"1": v})
        b.d2h(out, line=30)
        b.free(out)
    tid = b.begin_trace(line=40)
    out = b.alloc(H)
    b.op("ttnn.multiply", [x], [out], line=21, args={"1": captured})
    b.end_trace(tid, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=43)
    return b


def test_value_that_changes_per_step_is_reported_with_all_values(analyze_both):
    findings = analyze_both(_schedule([1.0, 0.5], captured=0.25))
    assert rules_at(findings) == [("TR007", 21)]
    ev = findings[0].evidence
    assert ev["captured"] == {"1": 0.25}
    assert ev["values"]["1"] == [1.0, 0.5, 0.25]
    assert "positional argument 1 = 0.25" in findings[0].message


def test_constant_value_is_not_reported(analyze_both):
    assert analyze_both(_schedule([0.5, 0.5], captured=0.5)) == []


def test_recorded_values_differ_so_the_finding_is_an_error(analyze_both):
    """Severity follows proof: eager calls at the line passed another value than the replays use."""
    findings = analyze_both(_schedule([1.0, 0.5], captured=0.25))
    assert [str(f.severity) for f in findings] == ["error"]


def test_one_finding_per_call_site_however_many_captures(analyze_both):
    """GIVEN a loop that captures one trace per step with the step number baked in
    THEN one finding at the line, counting the captures, first and last trace."""
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for step in range(30):
        out = b.alloc(H)
        if step % 10 == 9:
            tid = b.begin_trace(line=40)
            b.op("ttnn.add", [x], [out], line=21, args={"step": step})
            b.end_trace(tid, line=41)
            b.execute(tid, line=42)
            b.release(tid, line=43)
        else:
            b.op("ttnn.add", [x], [out], line=21, args={"step": step})
            b.d2h(out, line=30)
        b.free(out)
    # the recaptures at one call path are TR018's performance note; TR007 is what is tested
    findings = [f for f in analyze_both(b) if f.rule != "TR018"]
    assert rules_at(findings) == [("TR007", 21)]
    occ = findings[0].evidence["occurrences"]
    assert occ["count"] == 3
    assert (occ["first"]["trace"], occ["last"]["trace"]) == (0, 2)
    assert "captured into 3 traces" in findings[0].message


def _wrapper_model(captured_channels: dict[int, int]) -> SessionBuilder:
    """A CNN whose layers all call `ttnn.conv2d` from one wrapper line (Conv.__call__, line
    109), each layer from its own line of the model (151, 152, 153) with its own constant;
    an eager run, then the capture of the same forward pass."""
    from ttrecord.events import CallSite

    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)

    def forward(channels: dict[int, int]) -> None:
        for caller, ch in channels.items():
            out = b.alloc(H)
            ev = b.op("ttnn.conv2d", [x], [out], line=109, args={"in_channels": ch})
            ev.callsite = CallSite("model.py", 109, "Conv.__call__", (("model.py", caller, "Model.__call__"),))
            b.free(out)

    layers = {151: 16, 152: 32, 153: 64}
    forward(layers)  # compile run
    tid = b.begin_trace(line=40)
    forward(captured_channels)
    b.end_trace(tid, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=43)
    return b


def test_one_wrapper_line_for_every_layer_is_not_a_baked_value(analyze_both):
    # GIVEN each layer passing its own constant through the wrapper line, eager and captured
    # THEN nothing: a call is its call path, and every path passed one value
    assert [f for f in analyze_both(_wrapper_model({151: 16, 152: 32, 153: 64})) if f.rule == "TR007"] == []


def test_a_value_that_differs_along_one_call_path_is_reported(analyze_both):
    # GIVEN the layer at line 152 captured with another value than its eager call
    findings = [f for f in analyze_both(_wrapper_model({151: 16, 152: 48, 153: 64})) if f.rule == "TR007"]
    # THEN one TR007 at the wrapper line, for that path only
    assert [(f.line, f.evidence["captured"]) for f in findings] == [(109, {"in_channels": 48})]
    assert findings[0].evidence["values"]["in_channels"] == [32, 48]


def _layers_in_a_loop(captured: list[int], forwards: int = 2) -> SessionBuilder:
    """The wrapper line called for three layers from one line of the model's loop (line 150):
    one call path, told apart by position (the j-th call at that path in a forward pass)."""
    from ttrecord.events import CallSite

    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)

    def forward(channels: list[int]) -> None:
        for ch in channels:
            out = b.alloc(H)
            ev = b.op("ttnn.conv2d", [x], [out], line=90, args={"in_channels": ch})
            ev.callsite = CallSite("model.py", 90, "Conv.__call__", (("model.py", 150, "Model.__call__"),))
            b.free(out)

    for _ in range(forwards):
        forward([16, 32, 64])
    tid = b.begin_trace(line=40)
    forward(captured)
    b.end_trace(tid, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=43)
    return b


def test_layers_called_in_a_loop_through_one_path_are_told_apart_by_position(analyze_both):
    assert [f for f in analyze_both(_layers_in_a_loop([16, 32, 64])) if f.rule == "TR007"] == []


def test_a_layer_whose_value_differs_at_its_position_is_reported(analyze_both):
    findings = [f for f in analyze_both(_layers_in_a_loop([16, 48, 64])) if f.rule == "TR007"]
    assert [(f.line, f.evidence["captured"]) for f in findings] == [(90, {"in_channels": 48})]


def test_the_longest_path_shared_with_the_eager_run_is_compared(analyze_both):
    # GIVEN the layers' loop reached from the eager executor (line 60) and from the capture
    # (line 199): the call paths share only their nearest caller (the model's loop, line 150)
    from ttrecord.events import CallSite

    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)

    def forward(channels: list[int], outer: int) -> None:
        for ch in channels:
            out = b.alloc(H)
            ev = b.op("ttnn.conv2d", [x], [out], line=90, args={"in_channels": ch})
            ev.callsite = CallSite("model.py", 90, "Conv.__call__",
                                   (("model.py", 150, "Model.__call__"), ("model.py", outer, "run")))
            b.free(out)

    for _ in range(4):
        forward([16, 32, 64], outer=60)
    tid = b.begin_trace(line=40)
    forward([16, 32, 64], outer=199)
    b.end_trace(tid, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=43)
    # THEN no TR007: along the shared path each position passed one value
    assert [f for f in analyze_both(b) if f.rule == "TR007"] == []


def _trace_per_key(captured: list[int]) -> SessionBuilder:
    """An LLM prefill keeping one trace per sequence length: eager prefills of lengths 32 and
    64 at line 21, then one capture per length at the same line, each replayed."""
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for length in (32, 64, 32, 64):  # eager prefills
        out = b.alloc(H)
        b.op("ttnn.slice", [x], [out], line=21, args={"2": [1, 1, length, 64]})
        b.d2h(out, line=30)
        b.free(out)
    tids = []
    for length in captured:
        tid = b.begin_trace(line=40)
        b.op("ttnn.slice", [x], [b.alloc(H)], line=21, args={"2": [1, 1, length, 64]})
        b.end_trace(tid, line=41)
        tids.append(tid)
    for tid in tids:
        b.execute(tid, line=42)
    for tid in tids:
        b.release(tid, line=43)
    return b


def test_one_trace_per_key_each_with_its_own_eager_value_is_not_reported(analyze_both):
    """GIVEN a trace per sequence length, each captured with the value the eager prefill of
    that length passed THEN no TR007: every trace replays its own key's value (the two traces'
    outputs sharing memory is TR010's question)."""
    assert [f for f in analyze_both(_trace_per_key([32, 64])) if f.rule == "TR007"] == []


def test_two_traces_with_the_same_value_of_a_varying_argument_are_reported(analyze_both):
    """GIVEN the eager run passed 32 and 64 but both traces captured 32 THEN TR007: one of
    them is replayed for a length it was not captured with."""
    findings = analyze_both(_trace_per_key([32, 32]))
    assert [(r, line) for r, line in rules_at(findings) if r == "TR007"] == [("TR007", 21)]


def test_a_capture_cut_off_before_its_end_is_not_reported(analyze_both):
    """GIVEN a capture whose next call raised (a readback inside it), so it never ended and is
    never replayed THEN no TR007: no replay uses the value it captured (TR001 is the finding)."""
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for v in (1.0, 0.5):
        out = b.alloc(H)
        b.op("ttnn.multiply", [x], [out], line=21, args={"1": v})
        b.d2h(out, line=30)
        b.free(out)
    b.begin_trace(line=40)
    out = b.alloc(H)
    b.op("ttnn.multiply", [x], [out], line=21, args={"1": 0.25})
    b.d2h(out, line=22)
    b.raised("RuntimeError: TT_FATAL: Reads are not supported during trace capture.")
    rules = [r for r, _ in rules_at(analyze_both(b))]
    assert "TR001" in rules and "TR007" not in rules
