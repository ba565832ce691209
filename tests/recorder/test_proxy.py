"""The proxy records every way a program reaches ttnn (module attributes, `from ttnn import`,
submodules, Tensor methods), leaves classes and constants alone, and records calls ttnn makes
internally as children of the user's call."""

from __future__ import annotations

import sys

from tests.recorder import fake_ttnn
from tests.recorder.inprocess import record_inprocess

from ttrecord import emulator


def test_every_access_path_is_recorded(tmp_path):
    """GIVEN the emulator behind the proxy WHEN a program uses ttnn.x, `from ttnn import x`,
    ttnn.experimental.x, `import ttnn.experimental` and Tensor methods THEN each call is an
    event named after the op with its call-site line, and wrappers are cached."""
    seen = {}

    def body(ttnn):
        import torch

        from ttnn import add  # noqa: PLC0415 - the point of the test

        import ttnn.experimental as experimental  # noqa: PLC0415

        seen["same"] = ttnn.add is ttnn.add and add is ttnn.add
        seen["classes"] = ttnn.MeshDevice is emulator.MeshDevice and ttnn.bfloat16 is emulator.bfloat16
        seen["module"] = sys.modules["ttnn.experimental"] is experimental
        dev = ttnn.open_device(device_id=0)
        x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        y = add(x, x)
        cos = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        z = ttnn.experimental.rotary_embedding(y, cos, cos)
        z = experimental.rotary_embedding(z, cos, cos)
        z.cpu()
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    assert seen == {"same": True, "classes": True, "module": True}
    calls = [(e.kind.value, e.name) for e in events if e.parent is None and e.kind.value not in ("alloc", "free")]
    assert calls == [
        ("device_open", "open_device"), ("h2d", "from_torch"), ("op", "add"), ("h2d", "from_torch"),
        ("op", "experimental.rotary_embedding"), ("op", "experimental.rotary_embedding"),
        ("d2h", "Tensor.cpu"), ("device_close", "close_device"),
    ]  # fmt: skip
    lines = {e.callsite.line for e in events if e.callsite}
    assert len(lines) == 8 and all(e.callsite.file == __file__ for e in events if e.callsite)


def test_nested_calls_are_children_of_the_user_call(tmp_path):
    """GIVEN a ttnn whose gelu calls ttnn.relu twice through the module, and whose to_torch
    calls Tensor.cpu WHEN the user calls gelu and to_torch THEN the inner calls are recorded
    with parent = the user's call, no call site, and the user calls are top-level."""
    fake = fake_ttnn.make()

    def body(ttnn):
        dev = ttnn.open_device()
        t = ttnn.relu(ttnn.Tensor(dev))
        g = ttnn.gelu(t)
        ttnn.to_torch(g)

    events = record_inprocess(fake, body, tmp_path)
    calls = [e for e in events if e.kind.value not in ("alloc", "free")]
    top = {e.seq: e.name for e in calls if e.parent is None}
    assert list(top.values()) == ["open_device", "Tensor", "relu", "gelu", "to_torch"]
    children = [(top[e.parent], e.name, e.kind.value, e.callsite) for e in calls if e.parent]
    assert children == [("gelu", "relu", "op", None), ("gelu", "relu", "op", None),
                        ("to_torch", "Tensor.cpu", "d2h", None)]  # fmt: skip
    assert [e.kind.value for e in calls if e.name == "to_torch"] == ["d2h"]


def test_uninstall_restores_the_module(tmp_path):
    """GIVEN a recording that ended WHEN looking at the emulator THEN its Tensor methods and
    warnings.warn are the originals again (the proxy leaves nothing behind)."""
    import warnings

    cpu, warn = emulator.Tensor.__dict__["cpu"], warnings.warn
    record_inprocess(emulator, lambda ttnn: None, tmp_path)
    assert emulator.Tensor.__dict__["cpu"] is cpu and warnings.warn is warn


def test_tensor_constructor_with_a_device_is_a_write(tmp_path):
    """GIVEN ttnn.Tensor(data, dtype, device, layout) and a host-only ttnn.Tensor(data, dtype)
    WHEN recorded THEN the device one is an h2d call `Tensor` with its allocation as child and
    the new tensor as output; the host one is not recorded; ttnn.Tensor still works as the
    class for isinstance, issubclass and subclassing."""
    import numpy as np

    def body(ttnn):
        dev = ttnn.open_device(device_id=0)
        t = ttnn.Tensor(np.zeros((64, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT)
        host = ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16)
        assert t.buffer_address() > 0
        assert isinstance(host, ttnn.Tensor) and isinstance(t, emulator.Tensor)
        assert issubclass(type(t), ttnn.Tensor) and ttnn.Tensor is ttnn.Tensor

        class Mine(ttnn.Tensor):  # subclassing the proxied class subclasses the real one
            pass

        assert issubclass(Mine, emulator.Tensor)
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    calls = [e for e in events if e.parent is None and e.kind.value not in ("alloc", "free")]
    assert [(e.kind.value, e.name) for e in calls] == [
        ("device_open", "open_device"), ("h2d", "Tensor"), ("device_close", "close_device")]
    ctor = calls[1]
    alloc = next(e for e in events if e.kind.value == "alloc")
    assert alloc.parent == ctor.seq
    assert ctor.outputs[0].buffer.address == alloc.buffer.address
    assert ctor.outputs[0].shape == (64, 64)


def test_a_module_attribute_changed_after_it_was_read_is_seen_at_the_next_read(tmp_path):
    """GIVEN a proxied ttnn whose `relu` was read (and so kept in the proxy) WHEN the program
    sets it on the real module, sets it through the proxy, then deletes it THEN each next read
    sees the change, as without the recorder; after recording the module's class is its own."""
    import types

    fake = fake_ttnn.make()
    original = fake.relu
    seen = {}

    def replacement(t):
        return t

    def body(ttnn):
        seen["first"] = ttnn.relu is ttnn.relu and ttnn.relu.__wrapped__ is original
        fake.relu = replacement  # on the module itself
        seen["module set"] = ttnn.relu is replacement  # not ttnn's: not wrapped
        ttnn.relu = original  # through the proxy
        seen["proxy set"] = ttnn.relu.__wrapped__ is original and fake.relu is original
        del ttnn.relu
        seen["deleted"] = not hasattr(ttnn, "relu")
        fake.relu = original

    record_inprocess(fake, body, tmp_path)
    assert seen == {"first": True, "module set": True, "proxy set": True, "deleted": True}
    assert type(fake) is types.ModuleType
