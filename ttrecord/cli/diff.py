"""`ttrecord diff`: address drift between two trace captures, and where it started."""

from __future__ import annotations

import argparse

INDENT_MAX_ROWS = 2000


class Diff:
    """Compare the buffers two trace captures bake in, op by op, and find where they diverge.

    ttrecord diff A.db B.db                      first capture of each session
    ttrecord diff A.db:2 B.db:1                  capture 2 of A with capture 1 of B
    ttrecord diff A.db B.db --capture 2          capture 2 of both
    ttrecord diff S.db --capture 1 --capture 2   two captures of one session
    ttrecord diff S.db --prep [--capture N]      a capture against its own prep run

    Ops are aligned by op name, call site and occurrence (inserted and removed ops stay
    aligned); every aligned op's inputs and outputs are compared: address, size, buffer type,
    shape, dtype, layout and memory config. The report names the first divergent op and the
    allocation live before the capture that most likely shifted the layout, with its line.

    With --prep, drift means the capture reads a different buffer than its prep run for an
    input the run did not write itself (weights, uploaded inputs, caches), or runs other ops;
    intermediates may sit elsewhere while the prep run's outputs are still alive.

    Exits 0 when the captures match, 1 when drift was found, 2 for unreadable input.
    --format json is documented in docs/diff-json.md.
    """

    @staticmethod
    def prepare_parser(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("targets", nargs="+", metavar="SESSION.db[:N]",
                            help="one or two sessions, each optionally with a capture number")  # fmt: skip
        parser.add_argument("--capture", action="append", type=int, default=[], metavar="N",
                            help="capture number (1 = first); once for both sessions, or twice")  # fmt: skip
        parser.add_argument("--prep", action="store_true",
                            help="compare the capture with the prep run right before it")  # fmt: skip
        parser.add_argument("--format", choices=("text", "json"), default="text",
                            help="output format (default: text)")  # fmt: skip
        parser.add_argument("--limit", type=int, default=50, metavar="N",
                            help="rows per table in text output (default: 50)")  # fmt: skip
        parser.add_argument("--all-ops", action="store_true",
                            help="JSON: list every aligned op, not only the differing ones")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import json
        import sys

        from rich.console import Console

        from ttrecord.analysis.drift import bulk, diff_targets, resolve_targets
        from ttrecord.analysis.drift.jsonfmt import to_json
        from ttrecord import textsafe
        from ttrecord.analysis.drift.render import to_renderables
        from ttrecord.errors import TtrecordError

        if args.limit < 1:
            raise TtrecordError("--limit must be at least 1")
        a, b = resolve_targets(args.targets, args.capture, args.prep)
        with bulk():  # millions of acyclic objects: no cyclic-GC passes over them
            report = diff_targets(a, b)
            if args.format == "json":
                document = to_json(report, all_ops=args.all_ops)
                # Indented output goes through json's pure-Python encoder: only for small
                # reports; dumps (one shot, in C) is several times faster than dump (chunked).
                indent = 2 if len(document["ops"]) <= INDENT_MAX_ROWS else None
                sys.stdout.write(json.dumps(document, indent=indent) + "\n")
            else:
                textsafe.console().print(to_renderables(report, limit=args.limit))
        return 1 if report.drift else 0
