"""What the real ttnn 0.81.1 does on a mock p150 (no recorder involved).

These pin the facts the recorder and the emulator are built on
(shared notes real-ttnn-mock-device.md and real-ttnn-introspection.md). When a ttnn upgrade
changes one of them, the failing test names the fact that moved.
"""

import sys

import pytest

# (label, shape, memory, dtype, layout) in allocation order, with the measured address;
# "free64" drops the first DRAM 64x64 tensor before the next allocation.
ADDRESS_TABLE = [
    ("DRAM 32x32 bf16", (32, 32), "DRAM", "bf16", "TILE", 1048704),
    ("DRAM 32x32 bf16", (32, 32), "DRAM", "bf16", "TILE", 1050752),
    ("DRAM 64x64 bf16", (64, 64), "DRAM", "bf16", "TILE", 1052800),
    ("DRAM 256x256 bf16", (256, 256), "DRAM", "bf16", "TILE", 1054848),
    ("DRAM 32x32 bf16", (32, 32), "DRAM", "bf16", "TILE", 1071232),
    ("DRAM 1024x1024 bf16", (1024, 1024), "DRAM", "bf16", "TILE", 1073280),
    ("DRAM 32x32 bf16", (32, 32), "DRAM", "bf16", "TILE", 1335424),
    ("L1 32x32 bf16", (32, 32), "L1", "bf16", "TILE", 1570816),
    ("L1 64x64 bf16", (64, 64), "L1", "bf16", "TILE", 1568768),
    ("L1 32x32 bf16", (32, 32), "L1", "bf16", "TILE", 1566720),
    ("free64", None, None, None, None, None),
    ("DRAM 64x64 bf16 (reuses freed)", (64, 64), "DRAM", "bf16", "TILE", 1052800),
    ("DRAM 32x64 bf16 ROW_MAJOR", (32, 64), "DRAM", "bf16", "ROW_MAJOR", 1337472),
    ("DRAM 32x32 float32", (32, 32), "DRAM", "f32", "TILE", 1337984),
    ("DRAM 32x32 bf16", (32, 32), "DRAM", "bf16", "TILE", 1342080),
]


def test_real_allocator_address_table(run_py):
    steps = [row[:5] for row in ADDRESS_TABLE]
    p = run_py(f"""
        dev = open_dev()
        MEM = {{"DRAM": ttnn.DRAM_MEMORY_CONFIG, "L1": ttnn.L1_MEMORY_CONFIG}}
        DT = {{"bf16": ttnn.bfloat16, "f32": ttnn.float32}}
        LAY = {{"TILE": ttnn.TILE_LAYOUT, "ROW_MAJOR": ttnn.ROW_MAJOR_LAYOUT}}
        keep, addrs, first64 = [], [], None
        for label, shape, mem, dt, lay in {steps!r}:
            if label == "free64":
                # never compare tensors with == / list.remove: Tensor.__eq__ is ttnn.eq
                keep = [t for t in keep if t is not first64]
                first64 = None
                gc.collect()
                addrs.append(None)
                continue
            t = mk(dev, shape, MEM[mem], DT[dt], LAY[lay])
            if label == "DRAM 64x64 bf16":
                first64 = t
            keep.append(t)
            addrs.append(t.buffer_address())
        emit(addrs=addrs,
             pages=[t.buffer_num_pages() for t in keep],
             buffers=sorted((b.address, b.max_size_per_bank, str(b.buffer_type))
                            for b in ttnn._ttnn.reports.get_buffers([dev])))
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    got = p.result["addrs"]
    want = [row[5] for row in ADDRESS_TABLE]
    assert got == want, "\n".join(f"{r[0]:34s} want {w} got {g}" for r, w, g in zip(ADDRESS_TABLE, want, got))
    # the allocator's own view lists exactly the live buffers, with bank-local footprints
    buffers = {tuple(b) for b in p.result["buffers"]}
    assert (1054848, 16384, "BufferType.DRAM") in buffers     # 64 tiles over 8 DRAM banks
    assert (1073280, 262144, "BufferType.DRAM") in buffers    # 1024 tiles
    assert (1337472, 512, "BufferType.DRAM") in buffers       # ROW_MAJOR: 32 rows of 128 B
    assert (1337984, 4096, "BufferType.DRAM") in buffers      # one float32 tile
    assert (1570816, 2048, "BufferType.L1") in buffers
    assert len(buffers) == len(ADDRESS_TABLE) - 2             # 14 allocations, one freed


def test_read_inside_capture_raises_the_real_tt_fatal(run_py):
    p = run_py("""
        dev = open_dev()
        a = mk(dev)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        out = {"trace_id": repr(tid), "active": ttnn.is_trace_capture_active(dev)}
        for name, read in [("cpu", lambda: a.cpu()), ("to_list", lambda: a.to_list()),
                           ("from_device", lambda: ttnn.from_device(a))]:
            try:
                read()
                out[name] = None
            except RuntimeError as e:
                out[name] = str(e)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.release_trace(dev, tid)
        out["active_after"] = ttnn.is_trace_capture_active(dev)
        emit(**out)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert r["trace_id"] == "MeshTraceId(0)" and r["active"] is True and r["active_after"] is False
    for name in ("cpu", "to_list", "from_device"):
        text = r[name]
        assert text is not None, f"{name} inside capture did not raise"
        lines = text.splitlines()
        assert lines[0].startswith("TT_FATAL @ ") and lines[0].endswith(
            "fd_mesh_command_queue.cpp:851: !trace_id_.has_value()"), lines[0]
        assert lines[1:3] == ["info:", "Reads are not supported during trace capture."], lines[:4]
        assert lines[3] == "backtrace:"


def test_writes_and_sync_inside_capture_do_not_raise_on_the_mock_device(run_py):
    """Differs from hardware: there, writes and event syncs inside capture are TT_FATALs.

    The mock device drops them silently, so TR002/TR003 can only be checked against the
    emulator (which raises like hardware); the recorder must still record them as h2d/sync.
    """
    p = run_py("""
        dev = open_dev()
        a = mk(dev)
        host = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16).to(ttnn.TILE_LAYOUT)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        out = {}
        for name, call in [("copy_host_to_device_tensor", lambda: ttnn.copy_host_to_device_tensor(host, a)),
                           ("to_device", lambda: ttnn.to_device(host, dev)),
                           ("synchronize_device", lambda: ttnn.synchronize_device(dev))]:
            try:
                call()
                out[name] = "ok"
            except Exception as e:
                out[name] = str(e).splitlines()[:3]
        out["alloc_in_capture"] = mk(dev).buffer_address()
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.release_trace(dev, tid)
        emit(**out)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert r["copy_host_to_device_tensor"] == "ok"
    assert r["to_device"] == "ok"
    assert r["synchronize_device"] == "ok"
    assert r["alloc_in_capture"] == 1050752  # Tensor(numpy, device): allocation + write, accepted


def test_op_inside_capture_segfaults_the_mock_device(run_py):
    p = run_py("""
        dev = open_dev()
        a, b = mk(dev), mk(dev)
        ttnn.add(a, b)  # fine outside capture
        emit(eager_add="ok")
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        emit(before_op=True)
        ttnn.add(a, b)
        emit(after_op=True)
    """)
    assert p.returncode == -11, p.describe()  # SIGSEGV
    assert p.result == {"eager_add": "ok", "before_op": True}
    assert "Segmentation fault" in p.stderr and "decorators.py" in p.stderr


def test_execute_trace_segfaults_and_allocating_after_capture_warns(run_py):
    p = run_py("""
        dev = open_dev()
        a = mk(dev)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        b = mk(dev)
        emit(alloc_after_capture=b.buffer_address())
        ttnn.execute_trace(dev, tid, cq_id=0, blocking=True)
        emit(after_execute=True)
    """)
    assert p.returncode == -11, p.describe()
    assert p.result == {"alloc_after_capture": 1050752}
    # tt-metal logs (does not raise, no Python warning) when allocating with a live trace
    assert ("Allocating device buffers is potentially unsafe due to the existence of an active "
            "trace") in p.output


def test_get_buffers_sees_frees_no_python_call_reveals(run_py):
    p = run_py("""
        import weakref
        dev = open_dev()
        snap = lambda: sorted((b.address, b.max_size_per_bank, str(b.buffer_type))
                              for b in ttnn._ttnn.reports.get_buffers([dev]))
        a, b = mk(dev), mk(dev, (256, 256))
        s1 = snap()
        del b; gc.collect()
        s2 = snap()
        c = mk(dev, (64, 64))
        try:
            weakref.ref(a)
            wr = "ok"
        except TypeError as e:
            wr = str(e)
        emit(s1=s1, s2=s2, c=c.buffer_address(), weakref=wr,
             one_device_form=len(ttnn._ttnn.reports.get_buffers(dev)))
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert r["s1"] == [[1048704, 2048, "BufferType.DRAM"], [1050752, 16384, "BufferType.DRAM"]]
    assert r["s2"] == [[1048704, 2048, "BufferType.DRAM"]]
    assert r["c"] == 1050752  # the freed address, reused
    assert r["weakref"] == "cannot create weak reference to 'ttnn._ttnn.tensor.Tensor' object"
    assert r["one_device_form"] == 2  # get_buffers(device) works as well as get_buffers([device])


def test_graph_capture_without_torch(run_py):
    """ttnn.graph's Python I/O recording imports torch inside FastOperation.__call__; the C++
    graph (ttnn._ttnn.graph, or ttnn.graph with disable_python_io_recording) does not, and
    reports the buffers ops allocate inside, which no before/after snapshot could attribute."""
    p = run_py("""
        dev = open_dev()
        a, b = mk(dev), mk(dev)
        ttnn.add(a, b)
        out = {"torch_installed": __import__("importlib.util").util.find_spec("torch") is not None}
        ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
        try:
            ttnn.add(a, b)
            out["python_graph_op"] = "ok"
        except Exception as e:
            out["python_graph_op"] = f"{type(e).__name__}: {e}"
        ttnn.graph.end_graph_capture()
        ttnn._ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
        c = ttnn.add(a, b)
        out["c"] = c.buffer_address()
        del c; gc.collect()
        g = ttnn._ttnn.graph.end_graph_capture()
        out["nodes"] = [(n["node_type"], (n.get("params") or {}).get("name"),
                         (n.get("params") or {}).get("address"),
                         (n.get("params") or {}).get("max_size_per_bank"))
                        for n in g if n["node_type"] in ("function_start", "buffer_allocate", "buffer_deallocate")]
        emit(**out)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    if r["torch_installed"]:
        pytest.skip("torch is installed in the lane venv; this test pins the no-torch behaviour")
    assert r["python_graph_op"] == "ModuleNotFoundError: No module named 'torch'"
    nodes = [tuple(n) for n in r["nodes"]]
    assert ("function_start", "BinaryNgDeviceOperation", None, None) in nodes
    assert ("buffer_allocate", None, r["c"], 2048) in nodes
    assert ("buffer_deallocate", None, r["c"], 2048) in nodes
    assert nodes.index(("buffer_allocate", None, r["c"], 2048)) > nodes.index(
        ("function_start", "BinaryNgDeviceOperation", None, None))


def test_api_shapes_the_recorder_wraps(run_py):
    p = run_py("""
        import wrapt
        out = {}
        out["add_type"] = f"{type(ttnn.add).__module__}.{type(ttnn.add).__qualname__}"
        out["add_fqn"] = ttnn.add.python_fully_qualified_name
        out["exp_fqn"] = ttnn.experimental.all_gather_async.python_fully_qualified_name
        out["exp_type"] = type(ttnn.experimental.all_gather_async).__qualname__
        out["trace_fn_module"] = ttnn.begin_trace_capture.__module__
        out["sync_fn_module"] = ttnn.synchronize_device.__module__
        out["tensor_type"] = f"{ttnn.Tensor.__module__}.{ttnn.Tensor.__qualname__}"
        out["cpu_type"] = type(ttnn.Tensor.cpu).__qualname__
        out["eq_is_python_lambda"] = ttnn.Tensor.__eq__.__name__
        import importlib.metadata
        out["dunder_version"] = getattr(ttnn, "__version__", None)
        out["dist_version"] = importlib.metadata.version("ttnn")
        try:
            ttnn.from_torch(np.zeros((32, 32), dtype=np.float32))
            out["from_torch_numpy"] = "ok"
        except Exception as e:
            out["from_torch_numpy"] = f"{type(e).__name__}: {e}"
        calls = []
        def spy(wrapped, instance, args, kwargs):
            calls.append(wrapped.__name__)
            return wrapped(*args, **kwargs)
        wrapt.wrap_function_wrapper(ttnn, "Tensor.cpu", spy)
        dev = open_dev()
        h = mk(dev).cpu()
        out["wrapped_cpu_calls"] = calls
        out["host_storage"] = str(h.storage_type())
        out["to_list_len"] = len(h.to_list())
        emit(**out)
        ttnn.close_device(dev)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert r["add_type"] == "ttnn.decorators.FastOperation"
    assert r["add_fqn"] == "ttnn.add"
    assert r["exp_fqn"] == "ttnn.experimental.all_gather_async" and r["exp_type"] == "FastOperation"
    assert r["trace_fn_module"] == "ttnn._ttnn.operations.trace"
    assert r["sync_fn_module"] == "ttnn._ttnn.device"
    assert r["tensor_type"] == "ttnn._ttnn.tensor.Tensor"
    assert r["cpu_type"] == "nb_method"
    assert r["eq_is_python_lambda"] == "<lambda>"
    assert r["dunder_version"] is None and r["dist_version"] == "0.81.1"  # no ttnn.__version__
    assert r["from_torch_numpy"] == "ModuleNotFoundError: No module named 'torch'"
    assert r["wrapped_cpu_calls"] == ["cpu"]
    assert r["host_storage"] == "StorageType.HOST" and r["to_list_len"] == 32


def test_some_ops_allocate_temporaries_only_graph_capture_sees(tmp_path):
    """ttnn.sum / ttnn.mean allocate an intermediate, free it inside the call, and put the
    output after it. A get_buffers() diff across the call shows only the survivors; the C++
    graph capture shows the temporary too. sum's first call also leaves an op-owned DRAM buffer
    alive (512 B per bank) that belongs to no tensor."""
    from realttnn_helpers import describe, run_script, seq_output

    proc = run_script(sys.executable, "op_temporaries.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    r = seq_output(proc)
    assert r["add"] == {"address": 1050752, "shape": [64, 64], "new_buffers": [[1050752, 2048]],
                        "graph": [["buffer_allocate", 1050752, 2048]]}
    assert r["sum"]["address"] == 1052800 and r["sum"]["shape"] == [64]
    assert r["sum"]["graph"] == [["buffer_allocate", 1050752, 2048], ["buffer_allocate", 1052800, 2048],
                                 ["buffer_allocate", 1054848, 512], ["buffer_deallocate", 1050752, 2048]]
    assert r["sum"]["new_buffers"] == [[1052800, 2048], [1054848, 512]]  # no trace of 1050752
    assert r["mean"]["address"] == 1052800
    assert r["mean"]["graph"] == [["buffer_allocate", 1050752, 2048], ["buffer_allocate", 1052800, 2048],
                                  ["buffer_deallocate", 1050752, 2048]]
    assert r["mean"]["new_buffers"] == [[1052800, 2048]]


def test_trace_buffer_sits_at_the_top_of_each_dram_bank(tmp_path):
    """end_trace_capture allocates the trace's buffer (type TRACE, 1024 B/bank for a tiny trace)
    at the base of the trace region: the top trace_region_size / 8 bytes of every DRAM bank
    (bank size 4278190080). release_trace frees it. On the mock, even an empty capture made
    after an eager op gets one."""
    from realttnn_helpers import describe, run_script, seq_output

    proc = run_script(sys.executable, "trace_region.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    r = seq_output(proc)
    for trs in (1 << 20, 8 << 20):
        base = 4278190080 - trs // 8
        assert r[str(trs)] == {"empty_capture": [[base, 1024]], "after_end": [[base, 1024]],
                               "after_release": []}, (trs, r[str(trs)])
