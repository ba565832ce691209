"""`ttrecord export`: a session in another tool's format, through ttrecord.export."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ttrecord.cli.output import check_output, folder_replaced_on_success, replaced_on_success
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
            "-f", "--force", action="store_true",
            help="replace an earlier export of ttrecord (never a session or another file)"
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
        check_output(out, inputs=[session_path], force=args.force, kind=module.OUTPUT)
        with Session.open(session_path) as session, Progress(
            f"exporting {args.format}", quiet=args.quiet
        ) as bar:
            kwargs = {}
            if "progress" in inspect.signature(module.export).parameters:  # rows written
                kwargs["progress"] = bar.advance
                if bar.enabled:
                    bar.set_total(_rows_estimate(session))
            try:
                summary = _export_replacing(module, session, out, kwargs)
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


def _export_replacing(module: ModuleType, session: Session, out: Path,
                      kwargs: dict) -> Any:  # fmt: skip
    """Export into a temporary file or folder beside `out`, moved into place on success."""
    if module.OUTPUT == "file":
        with replaced_on_success(out) as temp:
            summary = module.export(session, temp, **kwargs)
        return dataclasses.replace(summary, path=str(out))
    with folder_replaced_on_success(out) as temp:
        summary = module.export(session, temp, **kwargs)
        _point_config_at(temp, out)
    return dataclasses.replace(summary, path=str(out))


def _point_config_at(temp: Path, out: Path) -> None:
    """The visualizer's config names its own folder: the final one, not the temporary."""
    config_path = temp / "config.json"
    if not config_path.exists():
        return
    config = json.loads(config_path.read_text(encoding="utf-8"))
    if isinstance(config, dict) and "report_path" in config:
        config["report_path"] = str(out.resolve())
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
