"""Sub-device managers and global semaphores against traces: TR003 (a manager switch inside a
capture), TR009 (a trace ended, replayed or released under another manager than its capture's)
and TR005 (a semaphore a captured collective uses, freed or reset after the capture)."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, rules_at

SDM = "sub_device_manager"
SEM = "global_semaphore"


def _manager(b: SessionBuilder, method: str, line: int, **args) -> None:
    b.note(SDM, line, {"method": method, "device": 0, **args})


def _traced(b: SessionBuilder, *, load_inside: str | None = None, refused: bool = False) -> int:
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    if load_inside is not None:
        args = {"manager": 1} if load_inside.startswith("load") else {}
        if refused:
            args["error"] = "RuntimeError: TT_FATAL ... Cannot reset worker state during trace capture"
        _manager(b, load_inside, 21, **args)
    b.op("ttnn.experimental.all_gather_async", [x, w], [b.alloc(H)], line=22)
    b.end_trace(tid, line=23)
    return tid


def test_a_manager_load_inside_a_capture_is_tr003_with_ttnn_s_message(analyze_both):
    # refused as by ttnn, or let through (keep-going mode: the trace's end and replays then
    # run under the loaded manager, a consequence of the same mistake, not a second finding)
    for refused in (True, False):
        b = SessionBuilder()
        b.open_device()
        _manager(b, "create_sub_device_manager", 10, manager=1)
        tid = _traced(b, load_inside="load_sub_device_manager", refused=refused)
        b.execute(tid, line=30)
        b.release(tid, line=31)
        findings = analyze_both(b)
        assert rules_at(findings) == [("TR003", 21)], refused
        assert "Cannot reset worker state during trace capture" in findings[0].message


def test_loading_the_active_manager_or_clearing_the_default_inside_a_capture_is_no_switch(analyze_both):
    for method, before in (("load_sub_device_manager", "load_sub_device_manager"),
                           ("clear_loaded_sub_device_manager", None)):  # fmt: skip
        b = SessionBuilder()
        b.open_device()
        _manager(b, "create_sub_device_manager", 10, manager=1)
        if before:
            _manager(b, before, 11, manager=1)
        tid = _traced(b, load_inside=method)
        b.execute(tid, line=30)
        b.release(tid, line=31)
        if before:
            _manager(b, "clear_loaded_sub_device_manager", 32)
        assert analyze_both(b) == [], method


def test_a_replay_under_another_manager_is_tr009_naming_both(analyze_both):
    b = SessionBuilder()
    b.open_device()
    _manager(b, "create_sub_device_manager", 10, manager=1)
    _manager(b, "load_sub_device_manager", 11, manager=1)
    tid = _traced(b)
    _manager(b, "clear_loaded_sub_device_manager", 25)
    b.execute(tid, line=30)
    _manager(b, "load_sub_device_manager", 31, manager=1)
    b.execute(tid, line=32)
    b.release(tid, line=33)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR009", 30)]
    assert "captured under sub-device manager 1" in findings[0].message
    assert "under the default sub-device manager" in findings[0].message


def test_a_release_after_clearing_the_manager_is_tr009(analyze_both):
    b = SessionBuilder()
    b.open_device()
    _manager(b, "load_sub_device_manager", 11, manager=1)
    tid = _traced(b)
    b.execute(tid, line=30)
    _manager(b, "clear_loaded_sub_device_manager", 31)
    b.release(tid, line=32)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR009", 32)]
    assert "stays alive in its own manager" in findings[0].message


def _semaphore_program(change: dict | None, *, after_release: bool = False) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    b.note(SEM, 5, {"event": "create", "semaphore": 1, "device": 0, "address": 0x100000, "initial_value": 0})
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    b.note(SEM, 22, {"event": "use", "op": "experimental.all_gather_async", "semaphores": [1]})
    b.op("ttnn.experimental.all_gather_async", [x, w], [b.alloc(H)], line=22)
    b.end_trace(tid, line=23)
    if after_release:
        b.execute(tid, line=29)
        b.release(tid, line=30)
    if change is not None:
        b.note(SEM, 40, {"semaphore": 1, **change})
    if not after_release:
        b.execute(tid, line=41)
        b.release(tid, line=42)
    return b


def test_a_semaphore_freed_after_capture_then_replayed_is_tr005_naming_it(analyze_both):
    findings = analyze_both(_semaphore_program({"event": "free"}))
    assert rules_at(findings) == [("TR005", 40)]
    assert "global semaphore #1 (L1 address 0x100000, created at model.py:5)" in findings[0].message
    assert findings[0].severity.value == "error"


def test_a_semaphore_reset_to_another_value_is_tr005_and_to_its_own_value_is_not(analyze_both):
    assert rules_at(analyze_both(_semaphore_program({"event": "reset", "value": 3}))) == [("TR005", 40)]
    assert analyze_both(_semaphore_program({"event": "reset", "value": 0})) == []


def test_a_semaphore_kept_alive_or_freed_after_the_release_is_fine(analyze_both):
    assert analyze_both(_semaphore_program(None)) == []
    assert analyze_both(_semaphore_program({"event": "free"}, after_release=True)) == []


def test_a_trace_its_removed_manager_took_along_is_not_never_released(analyze_both):
    def program(remove: bool) -> SessionBuilder:
        b = SessionBuilder()
        b.open_device()
        _manager(b, "create_sub_device_manager", 10, manager=1)
        _manager(b, "load_sub_device_manager", 11, manager=1)
        tid = _traced(b)
        b.execute(tid, line=30)
        _manager(b, "clear_loaded_sub_device_manager", 31)
        if remove:
            _manager(b, "remove_sub_device_manager", 32, manager=1)
        return b

    assert analyze_both(program(remove=True)) == []
    assert rules_at(analyze_both(program(remove=False))) == [("TR009", 20)]
