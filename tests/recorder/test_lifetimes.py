"""Rule: watching a class's deallocation sees every instance die, in order, without changing
what the class does when its instances die, and unwatching puts the class back as it was.
(The native path, real ttnn's nanobind Tensor, is checked in tests/realttnn.)"""

from __future__ import annotations

from ttrecord.recorder import lifetimes


class Base:
    died: list = []

    def __del__(self) -> None:
        Base.died.append("base")


class Tensor(Base):
    __slots__ = ()  # like the emulator's: no __dict__, no weak references


def test_watch_sees_each_death_and_keeps_the_class_behaviour():
    """GIVEN a watched class whose base has a __del__ WHEN instances die THEN the watcher gets
    each one's id in order and the base __del__ still runs; after unwatch nothing is seen and
    the class has no __del__ of its own again."""
    seen: list[int] = []
    Base.died.clear()
    assert lifetimes.watch(Tensor, seen.append)
    a, b = Tensor(), Tensor()
    ids = [id(a), id(b)]
    del a
    del b
    assert seen == ids and Base.died == ["base", "base"]
    lifetimes.unwatch(Tensor, seen.append)
    c = Tensor()
    del c
    assert seen == ids and Base.died == ["base"] * 3
    assert "__del__" not in Tensor.__dict__


def test_two_watchers_share_one_hook():
    """GIVEN two watchers on one class WHEN one leaves THEN the other still sees deaths."""
    first: list[int] = []
    second: list[int] = []
    lifetimes.watch(Tensor, first.append)
    lifetimes.watch(Tensor, second.append)
    lifetimes.unwatch(Tensor, first.append)
    t = Tensor()
    ident = id(t)
    del t
    lifetimes.unwatch(Tensor, second.append)
    assert first == [] and second == [ident]
