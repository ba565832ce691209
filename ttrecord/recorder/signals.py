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

A signal sent with kill(2) to the whole process group (`kill -INT -PGID`, `timeout`, a CI
runner stopping a job) carries SI_USER too, yet the kernel has already delivered it to the
child. To tell it from one sent to the supervisor alone, a canary process in the same group
(forked at start, all three signals blocked) reports each signal it receives with its sender;
a signal the canary also got from the same sender was a group signal and is not forwarded.
`timeout` sends its signal to the supervisor and then to the group: a copy sent to the
supervisor alone within a second of the same group signal from the same sender is one event,
not a second press.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import struct
import subprocess
import sys
import time
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SI_KERNEL = 0x80  # si_code of signals the terminal (the kernel) generates
_REPORT = struct.Struct("<ii")  # (signal, sender pid) from the canary
_CANARY_WAIT = 0.25  # how long a group signal's copy may take to reach the canary's report
_SAME_SIGNAL = 1.0  # the same signal from the same sender within this is one event


def _canary(write_fd: int, parent: int) -> None:
    """The canary's life (in a forked process): report every signal the group receives."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            return
        while True:
            info = signal.sigwaitinfo(HANDLED)
            os.write(write_fd, _REPORT.pack(info.si_signo, info.si_pid))
    except BaseException:  # noqa: BLE001 - the canary only ever ends
        pass
    finally:
        os._exit(0)


class SignalRelay:
    def __init__(self) -> None:
        # (signal, came from the terminal, sender pid or None when unknown)
        self.received: list[tuple[int, bool, int | None]] = []
        self._handled = 0  # how many of `received` were acted on
        self._presses: dict[int, int] = {}  # family (INT, or TERM+HUP) -> count
        self.killed = False
        self._previous: dict[signal.Signals, Any] = {}
        self._ignored: set[int] = set()  # ignored at start: never forwarded
        self._blocked = False
        self._canary_pid: int | None = None
        self._canary_fd: int | None = None
        self._canary_seen: list[tuple[int, int, float]] = []  # (signal, sender, when)
        self._last: tuple[int, int | None, float] | None = None  # last group signal

    def install(self) -> None:
        """Before the child exists: remember signals with plain handlers; start the canary.
        A signal ignored when ttrecord started (`nohup`) stays ignored, so the program inherits
        SIG_IGN as it would under plain python."""
        for signum in HANDLED:
            if signal.getsignal(signum) == signal.SIG_IGN:
                self._ignored.add(signum)
                continue
            self._previous[signum] = signal.signal(signum, self._early)
        self._start_canary()

    def _start_canary(self) -> None:
        try:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
        except OSError:
            return  # no canary: signals are forwarded as sent to the supervisor alone
        if pid == 0:
            os.close(read_fd)
            _canary(write_fd, os.getppid())
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        self._canary_pid, self._canary_fd = pid, read_fd

    def _early(self, signum: int, frame: Any) -> None:
        self.received.append((signum, False, None))

    def block(self) -> None:
        """After the child started (a blocked mask would be inherited across exec)."""
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        self._blocked = True

    def wait(self, timeout: float) -> None:
        """Sleep up to `timeout`, collecting any signal that arrives."""
        info = signal.sigtimedwait(HANDLED, timeout)
        while info is not None:
            self.received.append((info.si_signo, info.si_code == SI_KERNEL, info.si_pid))
            info = signal.sigtimedwait(HANDLED, 0)

    def act(self, proc: subprocess.Popen) -> None:
        """Forward or escalate each signal not yet acted on."""
        while self._handled < len(self.received):
            signum, from_terminal, sender = self.received[self._handled]
            self._handled += 1
            if signum in self._ignored:
                continue
            now = time.monotonic()
            to_group = (not from_terminal and sender is not None
                        and self._canary_got(signum, sender))  # fmt: skip
            last = self._last
            if (not to_group and not from_terminal and last is not None
                    and last[:2] == (signum, sender) and now - last[2] < _SAME_SIGNAL):  # fmt: skip
                continue  # `timeout`: the copy sent to us beside the one sent to the group
            if to_group:
                self._last = (signum, sender, now)
            family = signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM
            self._presses[family] = self._presses.get(family, 0) + 1
            if proc.poll() is not None:
                continue
            if self._presses[family] >= 2:
                proc.kill()
                self.killed = True
            elif not from_terminal and not to_group:
                proc.send_signal(signum)

    def _canary_got(self, signum: int, sender: int) -> bool:
        """Whether the canary received this signal from this sender too (a group signal)."""
        if self._canary_fd is None:
            return False
        deadline = time.monotonic() + _CANARY_WAIT
        while True:
            self._read_canary()
            for i, (seen, pid, _) in enumerate(self._canary_seen):
                if (seen, pid) == (signum, sender):
                    del self._canary_seen[i]
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self._canary_fd], [], [], left)

    def _read_canary(self) -> None:
        assert self._canary_fd is not None
        now = time.monotonic()
        try:
            data = os.read(self._canary_fd, 4096)
        except BlockingIOError:
            data = b""
        except OSError:
            data = b""
        for i in range(0, len(data) - len(data) % _REPORT.size, _REPORT.size):
            signum, pid = _REPORT.unpack_from(data, i)
            self._canary_seen.append((signum, pid, now))
        self._canary_seen = [e for e in self._canary_seen if now - e[2] < 5.0]

    @property
    def interrupted(self) -> bool:
        return any(s == signal.SIGINT for s, _, _ in self.received)

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
        if self._canary_pid is not None:
            try:
                os.kill(self._canary_pid, signal.SIGKILL)
                os.waitpid(self._canary_pid, 0)
            except OSError:
                pass
            self._canary_pid = None
        if self._canary_fd is not None:
            os.close(self._canary_fd)
            self._canary_fd = None
