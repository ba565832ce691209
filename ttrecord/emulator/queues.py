"""Command queues that run asynchronously, so a missing event changes numbers as on a card.

On hardware each command queue (CQ) of a device executes its commands in order, on its own,
while the host goes on: two queues are ordered only by `record_event`/`wait_for_event`, and the
host learns that work finished only through a blocking call, `event_synchronize` or
`synchronize_device`. A program that forgets an edge computes on half-written inputs, or reads
outputs the next replay overwrote, now and then.

The emulator models this with one pending list per queue and three modes, chosen by the
environment variable `TTRECORD_EMULATOR_QUEUES` when the device is opened:

* `eager` (the default): every command runs when it is enqueued. Deterministic, and what the
  emulator always did: a correct program gives the same numbers in every mode.
* `adversarial`: a command runs only when something needs it: the host waits for it (a blocking
  read or execute, `event_synchronize`, `synchronize_device`), a later command on its own queue
  runs (queues are in order), or a queue that waits for an event needs the commands before
  that event. That order respects every happens-before edge the program made and otherwise
  delays each queue as long as it can, so a race always goes the wrong way.
* `random` or `random:SEED`: after each enqueue, each queue of the device runs a random number
  of its pending commands (seeded: the same seed, the same interleaving). Also consistent with
  happens-before; a racy program gives different numbers for different seeds.

What is a command: trace replays (`execute_trace`), writes into existing device tensors
(`copy_host_to_device_tensor`), reads (`cpu`, `to_torch`, `from_device`, …: a non-blocking read
hands back a host tensor of zeros that is filled when the read runs), event waits. Device ops
called from Python go to CQ 0 and run at once after everything pending on CQ 0 (a schedule the
hardware could also pick). Capture begin/end and release run after every pending command.
"""

from __future__ import annotations

import os
import random
from collections import deque
from typing import Any, Optional
from collections.abc import Callable

ENV = "TTRECORD_EMULATOR_QUEUES"
MODES = ("eager", "adversarial", "random")


def parse_mode(text: Optional[str]) -> tuple[str, Optional[int]]:
    """(mode, seed) from the environment variable's value; raises ValueError with one line."""
    if not text:
        return "eager", None
    mode, _, seed = text.strip().partition(":")
    mode = mode.lower()
    if mode not in MODES:
        raise ValueError(f"{ENV}={text!r}: expected one of eager, adversarial, random[:SEED]")
    if seed and mode != "random":
        raise ValueError(f"{ENV}={text!r}: only random takes a seed")
    try:
        return mode, (int(seed) if seed else (0 if mode == "random" else None))
    except ValueError:
        raise ValueError(f"{ENV}={text!r}: the seed must be an integer") from None


class Event:
    """A point in one queue: done when that queue has run `position` commands."""

    __slots__ = ("cq", "position")

    def __init__(self, cq: int, position: int) -> None:
        self.cq = cq
        self.position = position


class CommandQueues:
    """The command queues of one device. Not thread-safe by itself: callers hold the device
    lock (every caller already does for the memory it touches)."""

    def __init__(self, num_queues: int, mode: Optional[str] = None) -> None:
        self.mode, seed = parse_mode(os.environ.get(ENV) if mode is None else mode)
        self._random = random.Random(seed) if self.mode == "random" else None
        self._pending: list[deque[Callable[[], None]]] = [deque() for _ in range(max(num_queues, 1))]
        self._enqueued = [0] * len(self._pending)
        self._done = [0] * len(self._pending)

    @property
    def eager(self) -> bool:
        return self.mode == "eager"

    def _queue(self, cq: int) -> int:
        if cq < 0:
            raise RuntimeError(f"ttnn emulator: command queue {cq} does not exist")
        while cq >= len(self._pending):  # the emulator does not police num_command_queues
            self._pending.append(deque())
            self._enqueued.append(0)
            self._done.append(0)
        return cq

    def submit(self, cq: int, command: Callable[[], None]) -> int:
        """Enqueue `command` on `cq`; returns its position (1-based) in that queue."""
        q = self._queue(cq)
        self._enqueued[q] += 1
        if self.eager:
            self._run_until(q, self._enqueued[q] - 1)
            command()
            self._done[q] += 1
            return self._enqueued[q]
        self._pending[q].append(command)
        if self._random is not None:
            self._random_progress()
        return self._enqueued[q]

    def record(self, cq: int) -> Event:
        """An event that completes when everything enqueued on `cq` so far has run."""
        q = self._queue(cq)
        return Event(q, self._enqueued[q])

    def wait(self, cq: int, event: Event) -> None:
        """`cq` runs nothing enqueued after this until `event` is done."""
        self.submit(cq, lambda: self._run_until(event.cq, event.position))

    def finish(self, cq: Optional[int] = None) -> None:
        """The host waits for `cq` (every queue when None) to run what it has."""
        for q in range(len(self._pending)) if cq is None else (self._queue(cq),):
            self._run_until(q, self._enqueued[q])

    def host_wait(self, event: Event) -> None:
        self._run_until(event.cq, event.position)

    def run_now(self, cq: int) -> None:
        """Before a command that runs at once on `cq` (a device op called from Python)."""
        if not self.eager:
            q = self._queue(cq)
            self._run_until(q, self._enqueued[q])

    def _run_until(self, q: int, position: int) -> None:
        pending = self._pending[q]
        while self._done[q] < position and pending:
            command = pending.popleft()
            self._done[q] += 1  # first: a wait inside may run other queues, never this one back
            command()

    def _random_progress(self) -> None:
        rng = self._random
        assert rng is not None
        order = list(range(len(self._pending)))
        rng.shuffle(order)
        for q in order:
            n = len(self._pending[q])
            if n:
                self._run_until(q, self._done[q] + rng.randint(0, n))


def queues_of(device: Any) -> CommandQueues:
    """The device's queues, made on first use (devices made before this module was loaded)."""
    queues = getattr(device, "queues", None)
    if queues is None:
        queues = device.queues = CommandQueues(getattr(device, "num_command_queues", 1))
    return queues
