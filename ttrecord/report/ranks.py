"""`check` and `report` of a multi-host run: the sessions of all ranks as one result.

A layer over per-session checks: each rank's session is checked on its own (its findings stored
in it, as `ttrecord check SESSION.db` does), its findings labelled with the rank
(`rank 1 (host-b): ...`), then the cross-rank rule (TR019, `analysis.rank_divergence`) compares
the ranks' captures. The exit status is over all ranks: 1 when any rank's finding (or a
cross-rank one) reaches --fail-on, else 3 when a rank did not finish, 4 when no rank had
anything to judge.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ttrecord.errors import TtrecordError
from ttrecord.findings import Finding
from ttrecord.store.ranks import RankSession, missing_ranks

if TYPE_CHECKING:
    from ttrecord.analysis.check import CheckResult
    from ttrecord.report.result import Extras

_STATUS_ORDER = ("ok",)  # any other status is "did not finish"


def label_finding(f: Finding, rank: RankSession) -> Finding:
    """A rank's finding as the merged output shows it: the rank in its title and evidence."""
    if rank.launch is None:
        return f
    evidence = {**f.evidence, "rank": rank.launch.rank, "host": rank.launch.host,
                "session": str(rank.path)}  # fmt: skip
    return dataclasses.replace(f, title=f"{rank.label}: {f.title}", evidence=evidence)


def check_ranks(ranks: Sequence[RankSession], on_step: Callable[[str], None] | None = None,
                ) -> tuple[CheckResult, Extras, list[CheckResult]]:  # fmt: skip
    """Check every rank and compare them: (the merged result, its extras, each rank's own)."""
    from ttrecord.analysis import rank_divergence
    from ttrecord.analysis.check import CheckResult, check_session
    from ttrecord.report import keep_going
    from ttrecord.report.lead import change_indexes
    from ttrecord.report.outcome import of_session
    from ttrecord.report.patches import suggest_all
    from ttrecord.report.result import Extras
    from ttrecord.store.reader import Session

    per_rank: list[CheckResult] = []
    findings: list[Finding] = []
    extras = Extras(change=[], keep_going=[], patches=[])
    empties = []
    for rank in ranks:
        result = check_session(str(rank.path), on_step=on_step)
        per_rank.append(result)
        with Session.open(rank.path) as session:
            empties.append(of_session(session))
            extras.changed_on_disk.extend(
                f.file for f in result.findings
                if f.file and f.file not in extras.changed_on_disk and session.source_changed_on_disk(f.file))  # fmt: skip
            extras.change.extend(change_indexes(session, result.findings))  # type: ignore[union-attr]
            extras.keep_going.extend(keep_going.messages(session, result.findings))  # type: ignore[union-attr]
            extras.patches.extend(suggest_all(session, result.findings))  # type: ignore[union-attr]
        findings.extend(label_finding(f, rank) for f in result.findings)
    cross = rank_divergence.detect([rank_divergence.load_rank(r) for r in ranks])
    findings.extend(cross)
    extras.change.extend([0] * len(cross))  # type: ignore[union-attr]  # their own line
    extras.keep_going.extend([None] * len(cross))  # type: ignore[union-attr]
    extras.patches.extend([None] * len(cross))  # type: ignore[union-attr]
    # nothing to judge only when no rank had anything (one empty rank among others is a finding's
    # business, not the run's)
    extras.empty = empties[0] if all(e is not None for e in empties) else None
    first = per_rank[0]
    unfinished = [r for r in per_rank if not r.finished]
    sources = {r.path: r.sources for r in per_rank}

    def source(file: str) -> str | None:
        for lookup in sources.values():
            text = lookup(file)
            if text is not None:
                return text
        return None

    merged = CheckResult(
        path=_run_path(ranks), session_id=first.session_id, script=first.script,
        backend=first.backend, status=unfinished[0].status if unfinished else first.status,
        cwd=first.cwd, events=sum(r.events for r in per_rank), findings=findings, sources=source,
        recording_stopped=next((r.recording_stopped for r in per_rank if r.recording_stopped), None),
    )  # fmt: skip
    return merged, extras, per_rank


def _run_path(ranks: Sequence[RankSession]) -> str:
    folders = {str(r.path.parent) for r in ranks}
    names = ", ".join(r.path.name for r in ranks)
    return f"{len(ranks)} ranks: {names}" + (f" in {folders.pop()}" if len(folders) == 1 else "")


def run_ranks_check(ranks: Sequence[RankSession], fmt: str = "text", fail_on: str = "error",
                    out: TextIO | None = None, quiet: bool = False, allow_incomplete: bool = False,
                    allow_empty: bool = False, baseline: str | None = None) -> int:  # fmt: skip
    """`ttrecord check` of several ranks' sessions: one output, one exit status over all ranks."""
    from ttrecord.analysis import STEPS
    from ttrecord.progress import Progress
    from ttrecord.report import _formats, exit_code
    from ttrecord.report.result import Reported

    if baseline is not None:
        raise TtrecordError("--baseline compares one session; check each rank's session on its own")
    with Progress("checking ranks", total=STEPS * len(ranks), quiet=quiet) as bar:
        merged, extras, per_rank = check_ranks(ranks, on_step=bar.step)
    code = exit_code(merged.findings, fail_on, extras.empty, merged.finished,
                     allow_empty=allow_empty, allow_incomplete=allow_incomplete)  # fmt: skip
    out = out or sys.stdout
    reported = Reported.of(merged, extras)
    try:
        if fmt == "json":
            from ttrecord.report.jsonfmt import document

            doc = document(reported)
            doc["ranks"] = rank_rows(ranks, per_rank)
            json.dump(doc, out, indent=2, default=repr)
            out.write("\n")
        else:
            if fmt == "text":
                _rank_lines(ranks, per_rank, out)
            _formats()[fmt](reported, out)
        out.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return code


def rank_rows(ranks: Sequence[RankSession], per_rank: Sequence[CheckResult]) -> list[dict[str, Any]]:
    """One row per rank: who it is, its session, how its run ended and its findings' count."""
    rows = []
    for rank, result in zip(ranks, per_rank, strict=True):
        launch = rank.launch
        rows.append({"rank": launch.rank if launch else None, "size": launch.size if launch else None,
                     "host": launch.host if launch else None,
                     "run_id": launch.run_id if launch else None,
                     "launcher": launch.launcher if launch else None, "session": str(rank.path),
                     "status": result.status, "findings": len(result.findings)})  # fmt: skip
    return rows


def _rank_lines(ranks: Sequence[RankSession], per_rank: Sequence[CheckResult], out: TextIO) -> None:
    from ttrecord import textsafe

    console = textsafe.console(file=out, soft_wrap=False)
    launch = ranks[0].launch
    size = launch.size if launch is not None else None
    head = f"Multi-host run: {len(ranks)} rank(s)" + (f" of {size}" if size else "")
    if launch is not None:
        head += f", launched by {launch.launcher}, run id {launch.run_id}"
    console.print(textsafe.clean(head, 500), markup=False, highlight=False)
    for rank, result in zip(ranks, per_rank, strict=True):
        n = len(result.findings)
        console.print(textsafe.clean(f"  {rank.label}: {rank.path} (run {result.status},"
                                     f" {n} finding{'s' if n != 1 else ''})", 1000),
                      markup=False, highlight=False, soft_wrap=True)  # fmt: skip
    missing = missing_ranks(ranks)
    if missing:
        console.print(textsafe.clean(f"  no session for rank(s) {', '.join(map(str, missing))}:"
                                     " not compared", 500), markup=False, highlight=False)  # fmt: skip
    console.print()


def render_ranks_report(ranks: Sequence[RankSession], out: TextIO, fmt: str = "text",
                        quiet: bool = False) -> None:  # fmt: skip
    """`ttrecord report` of several ranks: each rank's report under its label, then what the
    ranks' comparison found."""
    from ttrecord.analysis import rank_divergence
    from ttrecord.report import summary, summary_json, text

    cross = rank_divergence.detect([rank_divergence.load_rank(r) for r in ranks])
    if fmt == "json":
        docs = []
        for rank in ranks:
            buf = io.StringIO()
            summary_json.render(str(rank.path), buf, quiet=quiet)
            doc = json.loads(buf.getvalue())
            doc["rank"] = rank.launch.to_json() if rank.launch is not None else None
            docs.append(doc)
        from ttrecord.report.jsonfmt import finding_dict

        json.dump({"ranks": docs, "across_ranks": [finding_dict(f) for f in cross]}, out,
                  indent=2, default=repr)  # fmt: skip
        out.write("\n")
        return
    from ttrecord import textsafe

    console = textsafe.console(file=out, soft_wrap=False)
    for rank in ranks:
        console.rule(textsafe.clean(f"{rank.label}: {rank.path.name}", 300), style="bold")
        out.flush()
        summary.render_report(str(rank.path), out, quiet=quiet)
    console.rule("across ranks", style="bold")
    if not cross:
        console.print(f"The {len(ranks)} ranks captured the same op sequences.", markup=False)
        return
    from ttrecord.analysis.check import CheckResult

    holder = CheckResult(path="", session_id="", script="", backend="", status="ok", cwd=None,
                         events=0, findings=cross)  # fmt: skip
    for f in cross:
        text.print_finding(console, textsafe.clean_deep(f), holder)


def run_lines(paths: Sequence[os.PathLike[str] | str]) -> list[str]:
    """One line per multi-rank run among listed sessions, with what comparing its ranks found
    (the sessions list of `ttrecord tui DIR` shows them above the files)."""
    from pathlib import Path

    from ttrecord.analysis import rank_divergence
    from ttrecord.store.ranks import runs_among

    lines = []
    for ranks in runs_among([Path(p) for p in paths]):
        launch = ranks[0].launch
        assert launch is not None
        size = f" of {launch.size}" if launch.size else ""
        head = f"run {launch.run_id} ({launch.launcher}): {len(ranks)} ranks{size}"
        try:
            found = rank_divergence.detect([rank_divergence.load_rank(r) for r in ranks])
        except Exception as exc:  # noqa: BLE001 - a damaged rank: the listing says so per file
            lines.append(f"{head}; not compared ({exc})")
            continue
        if not found:
            lines.append(f"{head}; their captures agree")
        for f in found:
            lines.append(f"{head}; {f.severity} {f.rule} {f.title}: {f.message.split('. ')[0]}")
    return lines
