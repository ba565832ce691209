"""How `ttrecord run` passes SIGINT, SIGTERM and SIGHUP on to the recorded program.

The program must see what it would see under plain `python`: each signal once. A terminal's
Ctrl-C (or hang-up) already reaches the whole foreground process group, child included, so
the supervisor does not send it again; a signal sent to the supervisor alone (`kill`, a CI
runner's `timeout`) is forwarded to the child once. The kernel tells the two apart: signals the
terminal generates carry si_code SI_KERNEL, those from kill(2) SI_USER. A second signal of the
same family escalates: the child is killed (SIGKILL) and the session is closed with what it
recorded. There is no timed escalation: the program's cleanup (`close_device` on a card) takes
as long as it takes, as it would without ttrecord.

The supervisor blocks these signals and collects them with sigtimedwait() in its poll loop
(handlers get no siginfo); signals that arrive before the child is started are kept by plain
handlers and treated as sent to the supervisor alone.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SI_KERNEL = 0x80  # si_code of signals the terminal (the kernel) generates


class SignalRelay:
    def __init__(self) -> None:
        self.received: list[tuple[int, bool]] = []  # (signal, came from the terminal)
        self._handled = 0  # how many of `received` were acted on
        self._presses: dict[int, int] = {}  # family (INT, or TERM+HUP) -> count
        self.killed = False
        self._previous: dict[signal.Signals, Any] = {}
        self._blocked = False

    def install(self) -> None:
        """Before the child exists: remember signals with plain handlers."""
        for signum in HANDLED:
            self._previous[signum] = signal.signal(signum, self._early)

    def _early(self, signum: int, frame: Any) -> None:
        self.received.append((signum, False))

    def block(self) -> None:
        """After the child started (a blocked mask would be inherited across exec)."""
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        self._blocked = True

    def wait(self, timeout: float) -> None:
        """Sleep up to `timeout`, collecting any signal that arrives."""
        info = signal.sigtimedwait(HANDLED, timeout)
        while info is not None:
            self.received.append((info.si_signo, info.si_code == SI_KERNEL))
            info = signal.sigtimedwait(HANDLED, 0)

    def act(self, proc: subprocess.Popen) -> None:
        """Forward or escalate each signal not yet acted on."""
        while self._handled < len(self.received):
            signum, from_terminal = self.received[self._handled]
            self._handled += 1
            family = signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM
            self._presses[family] = self._presses.get(family, 0) + 1
            if proc.poll() is not None:
                continue
            if self._presses[family] >= 2:
                proc.kill()
                self.killed = True
            elif not from_terminal:
                proc.send_signal(signum)

    @property
    def interrupted(self) -> bool:
        return any(s == signal.SIGINT for s, _ in self.received)

    def restore(self) -> None:
        if self._blocked:
            for signum in HANDLED:  # drop what is still pending: it was for the finished run
                while signal.sigtimedwait((signum,), 0) is not None:
                    pass
            signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
            self._blocked = False
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
