"""One open session shared by a screen's thread workers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar, cast

from ttrecord.errors import SessionError
from ttrecord.store.reader import Session
from ttrecord.textsafe import clean, clean_deep

T = TypeVar("T")


class _HandleSource(Protocol):
    def handle(self, path: Path) -> SessionHandle: ...


def handle_of(app: object, path: Path) -> SessionHandle:
    """The app's shared handle for `path` (a screen sees its app typed as a plain App)."""
    return cast(_HandleSource, app).handle(path)


class SessionHandle:
    """Opens the session on first use and serialises queries on its one connection.

    Workers run on their own threads; sqlite3 allows a connection to be shared across threads
    only when calls do not interleave, and the reader caches call sites and buffers per
    Session, so one lock-guarded Session beats reopening (and re-caching) per query.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._session: Session | None = None
        self._lock = threading.Lock()
        self.errors: list[str] = []  # what could not be read (`ttrecord tui` then exits 2)

    def run(self, query: Callable[[Session], T]) -> T:
        """Run `query` on the session; raises SessionError if the file cannot be read."""
        with self._lock:
            try:
                return self._run(query)
            except SessionError as exc:
                self.errors.append(str(exc))
                raise

    def _run(self, query: Callable[[Session], T]) -> T:
        if self._session is None:
            self._session = Session.open(self.path, live=True)
        try:
            # Session text is data: control and bidi characters shown as escapes before any
            # widget gets it (see ttrecord.textsafe).
            return cast(T, clean_deep(query(self._session)))  # same structure, text made safe
        except SessionError:
            raise
        except Exception as exc:  # a file changed or damaged under us
            raise SessionError(clean(f"{self.path}: cannot be read ({exc})", 500)) from None

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None
