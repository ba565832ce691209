"""What ttnn 0.81.1's mock device shows of sub-device managers and global semaphores, which
the recorder and docs/emulator.md rely on: manager ids are opaque (numbered by the recorder in
the order it sees them), the stall-group error text, a global semaphore is an L1 buffer the
allocator report lists and its class takes no weak references (so the recorder cannot see its
free), and a manager load dies on the mock (the trace rules for loads come from tt-metal's
sources)."""

from __future__ import annotations


def test_manager_ids_semaphores_and_stall_groups(run_py):
    p = run_py("""
        import weakref
        dev = open_dev()
        grid = dev.compute_with_storage_grid_size()
        cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
        before = len(ttnn._ttnn.reports.get_buffers([dev]))
        sem = ttnn.create_global_semaphore(dev, cores, 0)
        address = ttnn.get_global_semaphore_address(sem)
        listed = [(b.address, str(b.buffer_type)) for b in ttnn._ttnn.reports.get_buffers([dev])]
        try:
            weakref.ref(sem)
            weak = True
        except TypeError:
            weak = False
        del sem
        after_free = len(ttnn._ttnn.reports.get_buffers([dev]))
        a = dev.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
        b = dev.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
        try:
            int(a)
            as_int = True
        except TypeError:
            as_int = False
        try:
            dev.set_sub_device_stall_group([ttnn.SubDeviceId(1)])
            stall = ""
        except RuntimeError as e:
            stall = str(e)
        dev.remove_sub_device_manager(b)
        emit(before=before, address=address, listed=listed, weak=weak, after_free=after_free,
             as_int=as_int, equal=(a == b), stall=stall)
    """)
    assert p.returncode == 0, p.describe()
    r = p.result
    assert [r["address"], "BufferType.L1"] in r["listed"] and len(r["listed"]) == r["before"] + 1
    assert r["after_free"] == r["before"]  # the free shows in the allocator report only
    assert r["weak"] is False and r["as_int"] is False and r["equal"] is False
    assert "SubDevice index 1 out of bounds 1" in r["stall"]
    assert "sub_device_manager.cpp:173" in r["stall"]


def test_a_manager_load_dies_on_the_mock(run_py):
    p = run_py("""
        dev = open_dev()
        grid = dev.compute_with_storage_grid_size()
        cores = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(grid.x - 1, grid.y - 1))})
        m = dev.create_sub_device_manager([ttnn.SubDevice([cores])], 0)
        emit(created=True)
        dev.load_sub_device_manager(m)
        emit(loaded=True)
    """)
    assert p.returncode == -11, p.describe()  # SIGSEGV
    assert p.results == [{"created": True}]
