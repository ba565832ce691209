"""The sessions of one multi-host run: which files, which rank each one is.

`ttrecord run` under a launcher stores the rank, world size, host and run id in each session's
options (`ttrecord.launch`). `check`, `report` and `tui` given a folder or several files read
them back here, and refuse a mix they cannot merge: sessions of two runs, two sessions
claiming one rank, or a single-process session among ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ttrecord.errors import SessionError, TtrecordError
from ttrecord.launch import Launch
from ttrecord.store.damage import DAMAGE
from ttrecord.store.reader import Session, find_sessions


@dataclass(frozen=True)
class RankSession:
    path: Path
    launch: Launch | None  # None: a session recorded without a launcher

    @property
    def label(self) -> str:
        return self.launch.label if self.launch is not None else self.path.name


def launch_of(path: Path) -> Launch | None:
    """The launch a session file recorded (None for a single-process run); SessionError when
    the file is not a readable session."""
    with Session.open(path, snapshot=False) as session:  # the session row is all it reads
        options = session.info().options or {}
    return Launch.from_json(options.get("launch"))


def expand(targets: Sequence[str]) -> list[Path]:
    """Session files named on a command line: files as given, folders scanned (sessions
    directly inside, other files skipped)."""
    files: list[Path] = []
    for raw in targets:
        p = Path(raw)
        if p.is_dir():
            found = find_sessions(p)
            if not found:
                raise TtrecordError(f"{raw}: no ttrecord session in this folder")
            files.extend(found)
        elif not p.exists():
            raise TtrecordError(f"{raw}: no such file or folder")
        else:
            files.append(p)
    unique: dict[Path, Path] = {}
    for f in files:
        unique.setdefault(f.resolve(), f)
    return list(unique.values())


def one_run(paths: Sequence[Path]) -> list[RankSession]:
    """The given sessions as the ranks of one run, in rank order. One session, launched or
    not, is a run of its own. TtrecordError when they are not one run."""
    sessions: list[RankSession] = []
    for p in paths:
        try:
            sessions.append(RankSession(p, launch_of(p)))
        except SessionError as exc:
            raise TtrecordError(str(exc)) from None
    if len(sessions) <= 1:
        return sessions
    lone = [s for s in sessions if s.launch is None]
    if lone:
        raise TtrecordError(f"{lone[0].path}: not recorded under a launcher (mpirun, tt-run);"
                            " only the ranks of one launch can be merged")  # fmt: skip
    runs: dict[str, list[RankSession]] = {}
    for s in sessions:
        assert s.launch is not None
        runs.setdefault(s.launch.run_id, []).append(s)
    if len(runs) > 1:
        names = "; ".join(f"{', '.join(x.path.name for x in group[:3])}" for group in runs.values())
        raise TtrecordError(f"the sessions belong to {len(runs)} different runs ({names});"
                            " give the files of one run")  # fmt: skip
    by_rank: dict[int, RankSession] = {}
    for s in sessions:
        assert s.launch is not None
        other = by_rank.get(s.launch.rank)
        if other is not None:
            raise TtrecordError(f"{other.path.name} and {s.path.name} are both rank"
                                f" {s.launch.rank} of one run")  # fmt: skip
        by_rank[s.launch.rank] = s
    return [by_rank[r] for r in sorted(by_rank)]


def missing_ranks(sessions: Sequence[RankSession]) -> list[int]:
    """Ranks of the launch's world size that have no session here."""
    sizes = {s.launch.size for s in sessions if s.launch is not None and s.launch.size}
    if not sizes:
        return []
    have = {s.launch.rank for s in sessions if s.launch is not None}
    return [r for r in range(max(sizes)) if r not in have]


def runs_among(paths: Sequence[Path]) -> list[list[RankSession]]:
    """The multi-rank runs among some session files (a folder's listing): each run's ranks in
    rank order, runs in the order their first file comes; single-process sessions, unreadable
    files and a rank given twice are left out (a listing shows them; it does not merge them)."""
    runs: dict[str, dict[int, RankSession]] = {}
    for p in paths:
        try:
            launch = launch_of(p)
        except (SessionError, *DAMAGE):  # type: ignore[misc]  # DAMAGE is a tuple of exception types
            continue  # unreadable or damaged: the listing shows it on its own
        if launch is None:
            continue
        runs.setdefault(launch.run_id, {}).setdefault(launch.rank, RankSession(p, launch))
    return [[ranks[r] for r in sorted(ranks)] for ranks in runs.values() if len(ranks) > 1]
