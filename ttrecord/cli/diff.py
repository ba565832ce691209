"""`ttrecord diff`: address drift between two trace captures, and where it started."""

from __future__ import annotations

import argparse

class Diff:
    """Compare the buffers two trace captures bake in, op by op, and find where they diverge.

    ttrecord diff A.db B.db                      first capture of each session
    ttrecord diff A.db:2 B.db:1                  capture 2 of A with capture 1 of B
    ttrecord diff A.db B.db --capture 2          capture 2 of both
    ttrecord diff S.db:1 S.db:2                  two captures of one session
    ttrecord diff S.db --capture 1 --capture 2   the same
    ttrecord diff S.db[:N] --prep                a capture against its own prep run

    Ops are aligned by what ran: op name, order and tensor signature (shapes, dtypes, layouts,
    memory configs, input/output/in-place roles), with the call site only as a tie-break, so
    inserted lines, moved helpers and renamed files still align and different ops do not;
    identical call sites pair one to one. The output says how many ops matched exactly, by
    signature, by call site alone, out of order, or not at all. Every aligned op's inputs and
    outputs are compared: address, size, buffer type, shape, dtype, layout and memory config.
    The report names the first divergent op and the allocation live before the capture that
    most likely shifted the layout, with its line in the run that has it.

    With --prep, the prep run is the eager run of the captured ops before begin_trace_capture
    (found by op names and tensor signatures, so a warm-up block copied from the captured one
    counts, and frees, readbacks or other ops between the two do not hide it; frees are left
    out on both sides). Drift means the capture reads a different buffer than its prep run for an
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
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar on the terminal")  # fmt: skip

    def run(self, args: argparse.Namespace) -> int:
        import sys


        from ttrecord.analysis.drift import DIFF_STEPS, bulk, diff_targets, resolve_targets
        from ttrecord.report.drift_json import write_json
        from ttrecord import textsafe
        from ttrecord.report.drift import to_renderables
        from ttrecord.errors import TtrecordError
        from ttrecord.progress import Progress

        if args.limit < 1:
            raise TtrecordError("--limit must be at least 1")
        a, b = resolve_targets(args.targets, args.capture, args.prep)
        with bulk():  # millions of acyclic objects: no cyclic-GC passes over them
            with Progress("diff", total=DIFF_STEPS + 1, quiet=args.quiet) as bar:
                report = diff_targets(a, b, on_step=bar.step)
                if args.format == "json":
                    bar.step("writing JSON")
                    write_json(report, sys.stdout, all_ops=args.all_ops)
                else:
                    bar.step("laying out the report")
                    renderables = to_renderables(report, limit=args.limit)
            if args.format != "json":
                textsafe.console().print(renderables)
        return 1 if report.drift else 0
