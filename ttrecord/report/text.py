"""`ttrecord check` in the terminal: each finding with its line of code, evidence and fix.

Rendered with rich so colour follows the terminal (plain text when piped or written to a
file). Findings come most severe first, each pinned to `file:line` in the form editors and
terminals turn into links.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.padding import Padding
from rich.style import Style
from rich.text import Text

from ttrecord.findings import Finding, Severity
from ttrecord import terminal, textsafe
from ttrecord.report import CheckResult
from ttrecord.report.keep_going import line as keep_going_line
from ttrecord.report.lead import Frame, frames
from ttrecord.report.patches import Patch
from ttrecord.report.result import changed_line, extras

STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold blue"}


def flatten(evidence: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Evidence as `key: value` lines; nested address ranges shown by their range text."""
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if "range" in value:
                extra = (
                    f" {value['buffer_type']} on device {value['device']}"
                    if "buffer_type" in value
                    else ""
                )
                uses = "; ".join(value.get("used_by", []))
                rows.append((name, f"{value['range']}{extra}, {value['size']} bytes/bank"
                             + (f" ({uses})" if uses else "")))  # fmt: skip
            else:
                rows += flatten(value, f"{name}.")
        elif key == "chips" and isinstance(value, list):  # a mesh's chips: one line
            rows.append((name, ", ".join(_chip(c) for c in value)))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, item in enumerate(value):
                rows += flatten({f"{key}[{i}]": item}, prefix)
        else:
            rows.append((name, str(value)))
    return rows


def _chip(chip: Any) -> str:
    """`(0,3) device 3` of a finding's `chips` evidence (`ttrecord.meshes`)."""
    if isinstance(chip, dict) and isinstance(chip.get("coord"), list):
        return f"({','.join(map(str, chip['coord']))}) device {chip.get('device_id')}"
    return str(chip)


_SHOWN = ("occurrences", "folded", "helper")  # evidence printed in its own form, not as key: value rows
def chain(f: Finding, change: int | None = None) -> list[tuple[str, Frame]]:
    """The frames to show, each with its lead: the line to change first (`change`, an index
    into `lead.frames(f)`; default: the outermost), then each call down to the finding's own
    line, then the frames above the line to change."""
    shown = frames(f)
    if len(shown) == 1:
        return [("  ", shown[0])]
    k = min(change if change is not None else 0, len(shown) - 1)
    out = [("  change here: ", shown[k])]
    out += [("  which calls ", frame) for frame in shown[k + 1:]]
    out += [("  reached from ", frame) for frame in reversed(shown[:k])]
    return out


def occurrence_text(occ: dict[str, Any]) -> str:
    first, last = occ.get("first") or {}, occ.get("last") or {}

    def at(o: dict) -> str:
        trace = f", trace {o['trace']}" if o.get("trace") is not None else ""
        return f"event {o.get('event')}{trace}"

    return f"{occ['count']} times: first at {at(first)}, last at {at(last)}"


def location(console: Console, lead: str, file: str | None, line: int | None,
             function: str | None, style: str = "cyan") -> Text:
    """`lead` + `file:line` + ` in function` in the console's width: the path is shortened from
    the middle (file name and line stay), then the function name is left out."""
    if not file:
        return Text(f"{lead}(no call site recorded)")
    room = console.width - len(lead)
    func = f" in {function}" if function else ""
    full = f"{file}:{line}" if line else file
    if len(full) + len(func) > room and len(terminal.where(file, line, room - len(func))) + len(
        func
    ) > room:
        func = ""  # the function name goes before the line number would
    return Text.assemble(lead, (terminal.where(file, line, room - len(func)),
                                _linked(console, style, file)), func)


def _linked(console: Console, style: str, file: str) -> str | Style:
    """On a terminal, `file:line` is also an OSC 8 hyperlink to the file, its URI built by
    ttrecord (percent-encoded: no character of the session's path reaches the terminal raw);
    piped or in a file, plain text."""
    if not console.is_terminal or console.legacy_windows or not os.path.isabs(file):
        return style
    try:
        uri = Path(file).as_uri()
    except ValueError:
        return style
    return Style.parse(style) + Style(link=uri)


def source(console: Console, line: int, text: str) -> Text:
    """`   42 | code` cut to the console's width."""
    lead = f"    {line:>5} | "
    return Text.assemble(lead, (terminal.fit(text, console.width - len(lead)), "bold"))


def print_finding(console: Console, f: Finding, result: CheckResult, state: str | None = None,
                  change: int | None = None, went_past: str | None = None,
                  patch: Patch | None = None) -> None:  # fmt: skip
    head = Text.assemble((f"{f.severity}", STYLE[f.severity]), " ", (f.rule, "bold"), "  ", f.title)
    if state is not None:  # against a baseline: new, or still there
        head.append(f"  [{state}]", style="bold" if state == "new" else "dim")
    console.print(head)
    if went_past is not None:  # the run went on where real ttnn would have stopped
        console.print(Padding(Text(keep_going_line(went_past), style="magenta"), (0, 0, 0, 2),
                              expand=False))  # fmt: skip
    # What to do first: the line to change (the outermost user frame: where a helper is
    # called, often where the fix goes), down to the ttnn call, then the fix; evidence last.
    # Locations and source lines are never wrapped (terminals and editors link `file:line`):
    # a path too long is shortened from the middle, a source line cut at its end.
    for lead, (file, line, function) in chain(f, change):
        console.print(location(console, lead, file, line, function), soft_wrap=True)
        src = result.source_line(file, line)
        if src is not None and line is not None:
            console.print(source(console, line, src.rstrip()), soft_wrap=True)
    if isinstance(f.evidence.get("helper"), str):  # the library code the user's line called
        console.print(location(console, "  inside ", f.evidence["helper"], None, None),
                      soft_wrap=True)  # fmt: skip
    console.print(Padding(Text.assemble(("fix: ", "green"), f.fix), (0, 0, 0, 2), expand=False))
    if patch is not None:  # the mechanical fix itself, for `patch -p0` in the run's folder
        console.print(Padding(Text(f"suggested patch: {patch.description} (apply with"
                                   " `patch -p0` in the run's folder)", style="green"),
                              (0, 0, 0, 2), expand=False))  # fmt: skip
        room, cut = console.width - 4, False
        for diff_line in patch.diff(result.cwd).splitlines():
            style = "green" if diff_line.startswith("+") else "red" if diff_line.startswith("-") else ""
            cut |= len(diff_line) > room
            console.print(Text("    " + terminal.fit(diff_line, room), style=style), soft_wrap=True)
        if cut:  # a cut line would not apply: say where the whole patch is
            console.print(Padding(Text("(lines cut to the terminal's width: the whole patch is"
                                       " `patch` in `ttrecord check --format json`)", style="dim"),
                                  (0, 0, 0, 4), expand=False))  # fmt: skip
    occ = f.evidence.get("occurrences")
    if isinstance(occ, dict) and occ.get("count", 1) > 1:
        console.print(Text(f"  {occurrence_text(occ)}", style="bold"))
    console.print(Padding(Text(f.message), (0, 0, 0, 2), expand=False))
    for item in f.folded:
        times = f" x{item['count']}" if item.get("count", 1) > 1 else ""
        console.print(Padding(Text.assemble(
            ("also caused by this: ", "dim"), (f"{item['rule']}{times}", "bold"),
            f" {item['title']} at {terminal.shorten_path(str(item['at']), console.width - 2)}"
            f" ({item['why']})"), (0, 0, 0, 2), expand=False))  # fmt: skip
    rows = flatten({k: v for k, v in f.evidence.items() if k not in _SHOWN})
    if rows:
        console.print(Text("  evidence:", style="dim"))
        for key, value in rows:
            console.print(
                Padding(Text.assemble((f"{key}: ", "dim"), value), (0, 0, 0, 4), expand=False)
            )
    console.print()


def summary_line(result: CheckResult) -> Text:
    s = result.summary()
    where = f"{result.path} ({result.backend}, run {result.status}, {result.events} events)"
    empty = extras(result).empty
    if not result.findings and empty is not None:  # never "no hazards" when nothing was judged
        return Text.assemble(("Nothing to judge", "bold yellow"), f" in {where}: {empty.why}")
    if not result.findings:
        if not result.finished:
            return Text.assemble(("No trace hazards found before the run stopped", "bold yellow"),
                                 f" in {where}.")  # fmt: skip
        return Text.assemble(("No trace hazards found", "bold green"), f" in {where}.")
    counts = ", ".join(
        f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in s["by_severity"].items() if n
    )
    rules = ", ".join(f"{rule} x{n}" for rule, n in s["by_rule"].items())
    return Text.assemble((f"{s['total']} finding{'s' if s['total'] != 1 else ''}", "bold"),
                         f": {counts} ({rules}) in {where}.")  # fmt: skip


def render(result: CheckResult, out: TextIO) -> None:
    result = textsafe.clean_deep(result)  # long texts cut, controls shown as escapes
    console = textsafe.console(file=out, soft_wrap=False)  # session text is data
    empty = extras(result).empty
    if not result.finished and not (empty is not None and empty.before_any_call):
        console.print(Text.assemble(
            (f"The recorded run did not finish (status: {result.status}).", "bold red"),
            " The findings below cover only what it did before it stopped; a hazard later in"
            " the program cannot show up here."))  # fmt: skip
        console.print()
    more = extras(result)
    if more.changed_on_disk:  # said once: every source line below is the recorded one
        console.print(Text(changed_line(more.changed_on_disk), style="yellow"))
        console.print()
    states: list[str | None] = [None] * len(result.findings)
    if more.baseline is not None:
        states = list(more.baseline.state)
    changes: list[int | None] = [None] * len(result.findings)
    if more.change is not None:
        changes = list(more.change)
    past: list[str | None] = list(more.keep_going or [None] * len(result.findings))
    patches: list[Patch | None] = list(more.patches or [None] * len(result.findings))
    for f, state, change, went, patch in zip(result.findings, states, changes, past, patches,
                                             strict=True):  # fmt: skip
        print_finding(console, f, result, state, change, went, patch)
    if more.baseline is not None:
        for entry in more.baseline.fixed:
            at = terminal.where(entry.get("file") or "?", entry.get("line"), console.width - 30)
            console.print(Text.assemble(("fixed ", "bold green"), (str(entry["id"]), "bold"),
                                        f"  {entry.get('title', '')} (was at {at})"), soft_wrap=True)  # fmt: skip
        console.print(Text(more.baseline.line(), style="bold"))
    if result.findings and more.empty is not None:
        console.print(Text(more.empty.why, style="yellow"))
    if result.recording_stopped:  # never a silent pass over a partial recording
        console.print(Text.assemble(("Partial recording: ", "bold red"),
                                    str(result.recording_stopped)))  # fmt: skip
    console.print(summary_line(result))
