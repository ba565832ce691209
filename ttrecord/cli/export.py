"""`ttrecord export`: a session in another tool's format, through ttrecord.export."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ttrecord.errors import TtrecordError
from ttrecord.export import EXPORTERS
from ttrecord.terminal import wrap

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


class Export:
    """Write a session in another tool's format (Perfetto trace JSON, ttnn-visualizer report).

    ttrecord export perfetto SESSION.db -o trace.json    then open it at ui.perfetto.dev
    ttrecord export visualizer SESSION.db -o DIR         then open DIR in ttnn-visualizer

    perfetto: Chrome trace-event JSON, one track per device and command queue; ops as slices,
    trace captures and replays as enclosing slices, allocations as instants with live-bytes
    counters, findings as marked instants.
    visualizer: a TT-NN report folder (db.sqlite + config.json): operations, arguments,
    tensors, the buffers live after each operation, stack traces, errors. docs/exports.md
    lists what maps and what does not.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("format", choices=sorted(EXPORTERS), help="output format")
        parser.add_argument("session", metavar="SESSION.db", help="a recorded session")
        parser.add_argument(
            "-o", "--output", metavar="PATH",
            help="file (perfetto) or folder (visualizer) to write; default: next to the"
                 " session, named after it",
        )  # fmt: skip
        parser.add_argument(
            "-f", "--force", action="store_true", help="replace an existing output"
        )
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar on the terminal")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import inspect

        from ttrecord.export import exporter
        from ttrecord.progress import Progress
        from ttrecord.store.reader import Session

        module = exporter(args.format)
        session_path = Path(args.session)
        out = Path(args.output) if args.output else _default_output(session_path, module)
        _check_output(out, module.OUTPUT, args.force)
        with Session.open(session_path) as session, Progress(
            f"exporting {args.format}", quiet=args.quiet
        ) as bar:
            kwargs = {}
            if "progress" in inspect.signature(module.export).parameters:  # rows written
                kwargs["progress"] = bar.advance
                if bar.enabled:
                    bar.set_total(_rows_estimate(session))
            try:
                summary = module.export(session, out, **kwargs)
            except OSError as exc:
                raise TtrecordError(f"{out}: cannot write ({exc.strerror or exc})") from None
        print(wrap(summary.line(), sys.stdout))
        return 0


def _rows_estimate(session: Session) -> int:
    """About how many rows an export writes: one per event and per allocation or free."""
    return session.export_row_estimate()


def _default_output(session: Path, module: ModuleType) -> Path:
    stem = session.name[: -len(session.suffix)] if session.suffix else session.name
    return session.with_name(stem + module.DEFAULT_SUFFIX)


def _check_output(out: Path, kind: str, force: bool) -> None:
    """Refuse to overwrite (without --force) or to write a file over a folder and back."""
    if kind == "file":
        if out.is_dir():
            raise TtrecordError(f"{out}: is a folder; give a file name with -o")
        if out.exists() and not force:
            raise TtrecordError(f"{out}: already exists (use --force to replace it)")
        if not out.parent.is_dir():
            raise TtrecordError(f"{out.parent}: no such folder")
    else:
        if out.exists() and not out.is_dir():
            raise TtrecordError(f"{out}: is a file; give a folder with -o")
        if out.is_dir() and any(out.iterdir()) and not force:
            raise TtrecordError(f"{out}: folder is not empty (use --force to replace the report)")
