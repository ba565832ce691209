"""pytest plugin: `pytest --ttrecord` records each test's ttnn calls into its own session.

A test whose session has a finding at or above `--ttrecord-fail-on` (default: error) fails,
and its report lists the findings with the file:line that caused them. Without `--ttrecord`
this module only adds its options and the `ttrecord` marker: nothing is imported or installed.

Recording happens in the test process. The backend (real ttnn or the emulator) and the
recording proxy are installed before conftest files and test modules import `ttnn`; each test
(its setup and body) goes to one session file under `--ttrecord-dir`, named after its node id.
Each pytest-xdist worker records its own tests; the controller only prints the summary.
`@pytest.mark.ttrecord(audit_region="Decoder.forward")` audits each call of that function as
a would-be capture region for that one test; `fail_on=` overrides the threshold.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FAIL_ON = ("error", "warning", "info", "never")
BACKENDS = ("auto", "ttnn", "emulator")
_RANK = {"error": 2, "warning": 1, "info": 0, "never": 99}
_PROPERTY = "ttrecord"  # report.user_properties key (travels from xdist workers)
_PLUGIN_NAME = "ttrecord-recording"  # the entry point itself is registered as "ttrecord"
_MARKER = (
    "ttrecord(audit_region=None, fail_on=None, verify_replay=False): under --ttrecord, audit"
    " each call of the function named by audit_region as a would-be trace-capture region,"
    " override --ttrecord-fail-on for this test, and/or verify its replays (TR011)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ttrecord", "ttrecord: record ttnn calls, report trace-capture hazards")
    group.addoption("--ttrecord", action="store_true", default=False,
                    help="record each test's ttnn calls into its own session and fail tests"
                         " whose session has trace-capture hazards")  # fmt: skip
    group.addoption("--ttrecord-dir", default=".ttrecord", metavar="DIR",
                    help="folder for the sessions, one per test (default: .ttrecord)")  # fmt: skip
    group.addoption("--ttrecord-fail-on", default="error", choices=FAIL_ON,
                    help="fail a test with a finding of this severity or worse"
                         " (default: error; never: only report)")  # fmt: skip
    group.addoption("--ttrecord-verify-replay", action="store_true", default=False,
                    help="check replays against an eager re-run of the captured ops"
                         " (TR011; reads device memory around execute_trace)")  # fmt: skip
    group.addoption("--ttrecord-backend", default="auto", choices=BACKENDS,
                    help="auto: real ttnn when it can reach a device, else the built-in"
                         " emulator (default: auto)")  # fmt: skip


def _is_xdist_controller(namespace: Any) -> bool:
    """True in the process that hands tests to xdist workers (it runs none itself)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    return bool(getattr(namespace, "numprocesses", None) or getattr(namespace, "tx", None))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:  # fmt: skip
    """Install the backend and the proxy before any conftest or test module imports ttnn."""
    _start(early_config, early_config.known_args_namespace)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER)
    _start(config, config.option)  # when loaded too late for load_initial_conftests
    plugin = config.pluginmanager.get_plugin(_PLUGIN_NAME)
    if isinstance(plugin, _Recording) and _controls_xdist_workers(config):
        # A pytest -n run started from inside an xdist worker inherits PYTEST_XDIST_WORKER,
        # so it looked like a worker early on; only now does `workerinput` tell them apart.
        plugin.close()
        config.pluginmanager.unregister(plugin)
        config.pluginmanager.register(_Summary(plugin.folder), _PLUGIN_NAME)


def _controls_xdist_workers(config: pytest.Config) -> bool:
    if hasattr(config, "workerinput"):
        return False
    return bool(getattr(config.option, "numprocesses", None) or getattr(config.option, "tx", None))


def _start(config: pytest.Config, namespace: Any) -> None:
    if not getattr(namespace, "ttrecord", False) or config.pluginmanager.has_plugin(_PLUGIN_NAME):
        return
    folder = Path(namespace.ttrecord_dir).resolve()
    backend = _load_backend(namespace.ttrecord_backend)
    if _is_xdist_controller(namespace):
        plugin: _Summary = _Summary(folder)  # conftests import ttnn here too: backend loaded
    else:
        plugin = _Recording(folder, backend, namespace.ttrecord_fail_on,
                            namespace.ttrecord_verify_replay)  # fmt: skip
    config.pluginmanager.register(plugin, _PLUGIN_NAME)


def _load_backend(requested: str) -> Any:
    """Real ttnn or the emulator, installed as `ttnn`; a usage error when it cannot load."""
    from ttrecord.errors import TtrecordError
    from ttrecord.recorder import backend as backends

    try:
        return backends.choose(requested)
    except TtrecordError as exc:
        reason = str(exc).split(": ", 1)[-1]  # the recorder words it for `ttrecord run`
        raise pytest.UsageError(f"--ttrecord-backend {requested}: {reason}") from None


def session_path(folder: Path, nodeid: str) -> Path:
    """The session file of one test: its node id made file-safe (hashed when very long)."""
    name = re.sub(r"[^\w.-]+", "_", nodeid).strip("_") or "test"
    if len(name) > 150:
        name = name[:130] + "-" + hashlib.sha1(nodeid.encode()).hexdigest()[:12]
    return folder / f"{name}.db"


# -- reporting -------------------------------------------------------------------------------


@dataclass
class _Crash:
    """What pytest's one-line summary shows for a test failed by its findings."""

    path: str
    lineno: int
    message: str

    def toterminal(self, tw: Any) -> None:
        tw.line(f"{self.path}:{self.lineno}: {self.message}")


class FindingsRepr:
    """A test report's failure text: the findings, each at its file:line, and the session.

    It carries `reprtraceback` (the text as one native entry) and `sections`, which is what
    pytest needs to send it from an xdist worker as an exception report: the controller then
    rebuilds `reprcrash`, and its short summary keeps the reason (`TR001 at model.py:39: …`)."""

    def __init__(self, text: str, crash: _Crash) -> None:
        from _pytest._code.code import ReprEntryNative, ReprTraceback

        self.text = text
        self.reprcrash = crash
        self.reprtraceback = ReprTraceback([ReprEntryNative([text + "\n"])], None, "native")
        self.sections: list[tuple[str, str, str]] = []

    def toterminal(self, tw: Any) -> None:
        for line in self.text.splitlines():
            tw.line(line, red=line.startswith("TR"), bold=line.startswith("TR"))

    def __str__(self) -> str:
        return self.text


def _where(file: str | None, line: int | None, root: Path) -> str:
    if not file:
        return "<unknown>"
    try:
        shown = os.path.relpath(file, root)
        shown = file if shown.startswith("..") else shown
    except ValueError:
        shown = file
    return f"{shown}:{line}" if line else shown


def format_findings(findings: list[Any], session: Path, threshold: str, root: Path,
                    changes: list[int] | None = None) -> str:  # fmt: skip
    """Each finding: its rule and line, the line to change down to the ttnn call
    (`changes`: per finding, see ttrecord.report.lead), the fix, then what happened."""
    from ttrecord.report.text import chain

    lines = [f"ttrecord: {len(findings)} finding(s) in {_where(str(session), None, root)}"
             f" (fail-on: {threshold})"]  # fmt: skip
    for i, f in enumerate(findings):
        func = f" in {f.function}" if f.function else ""
        times = f" (x{f.occurrences})" if f.occurrences > 1 else ""
        lines.append(f"{f.rule} {f.severity} {_where(f.file, f.line, root)}{func}: {f.title}{times}")
        for lead, (file, line, function) in chain(f, changes[i] if changes else None):
            if lead.strip():
                lines.append(f"  {lead}{_where(file, line, root)} in {function}")
        if f.fix:
            lines.append(textwrap.indent(f"fix: {f.fix}", "    "))
        lines.append(textwrap.indent(f.message, "    "))
        for item in f.folded:
            at = _where(item["file"], item.get("line"), root) if item.get("file") else item["at"]
            lines.append(f"    also caused by this: {item['rule']} {item['title']} at {at}")
    return "\n".join(lines)


class _Summary:
    """Collects what each test recorded (from the reports, so xdist workers count too)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.recorded: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == _PROPERTY:
                self.recorded[report.nodeid] = json.loads(str(value))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.recorded:
            return
        tr = terminalreporter
        tr.section("ttrecord")
        with_findings = {k: v for k, v in self.recorded.items() if v["findings"]}
        judged = {k: v for k, v in self.recorded.items() if not v.get("empty")}
        tr.line(f"{len(judged)} test(s) recorded into {self.folder};"
                f" {len(with_findings)} with findings")  # fmt: skip
        empty: dict[str, int] = {}
        for v in self.recorded.values():
            if v.get("empty"):
                empty[v["empty"]] = empty.get(v["empty"], 0) + 1
        if empty:  # never a silent pass: say what had nothing to judge
            tr.line(_empty_line(empty))
        for nodeid, info in with_findings.items():
            rules = ", ".join(f"{r} x{n}" for r, n in sorted(info["findings"].items()))
            tr.line(f"  {nodeid}: {rules}  ({info['session']})")


def _empty_line(counts: dict[str, int]) -> str:
    """One line for the tests that gave the trace rules nothing to judge."""
    parts = []
    if counts.get("no_calls"):
        parts.append(f"{counts['no_calls']} recorded no ttnn call")
    if counts.get("no_capture"):
        parts.append(f"{counts['no_capture']} captured no trace (eager only: only"
                     " @pytest.mark.ttrecord(audit_region=...) can judge those)")  # fmt: skip
    if counts.get("no_backend"):
        parts.append(f"{counts['no_backend']} ran without a backend")
    return "nothing to judge: " + "; ".join(parts)


# -- recording -------------------------------------------------------------------------------


@dataclass
class _Test:
    nodeid: str
    path: Path
    writer: Any
    regions: tuple[str, ...]
    fail_on: str
    changes: list[int] | None = None  # per finding, the frame of its line to change


class _Recording(_Summary):
    """The recorder of this process: installed once, then one session per test."""

    def __init__(self, folder: Path, backend: Any, fail_on: str, verify_replay: bool = False) -> None:
        super().__init__(folder)
        from ttrecord.recorder import setup
        from ttrecord.recorder.decode import Decoder
        from ttrecord.recorder.log import LogReader, LogWriter

        self.fail_on = fail_on
        self.backend = backend
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.log_path: Path | None = folder / f".pytest-{worker}-{os.getpid()}.log"
        self.log_path.unlink(missing_ok=True)
        self.log = LogWriter(str(self.log_path))
        self.reader = LogReader(str(self.log_path))
        self.decoder = Decoder()
        self.recording = setup.start(backend, self.log,
                                     setup.Options(stack_depth=3, verify_replay=verify_replay))  # fmt: skip
        self.recorder = self.recording.recorder  # `with ttrecord.region(...)` in tests works too
        self.verify_replay = verify_replay
        self.current: _Test | None = None

    def pytest_report_header(self) -> str:
        b = self.backend
        return f"ttrecord: backend {b.name} ({b.reason}); sessions in {self.folder}"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        """Put ttnn back and drop the log (xdist workers may not reach pytest_unconfigure)."""
        self.close()

    def close(self) -> None:
        if self.log_path is None:
            return
        self.recording.stop()
        self.reader.close()
        if not os.environ.get("TTRECORD_KEEP_LOG"):
            self.log_path.unlink(missing_ok=True)
        self.log_path = None

    def _drain(self) -> list[Any]:
        from ttrecord.events import Status

        self.recorder.finish(unwatch=False)  # buffers freed since the last call, then flush
        self.decoder.feed(self.reader.read())
        self.decoder.close_open_calls(Status.DIED)
        return self.decoder.ready()

    # -- one test ------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        from ttrecord.store.writer import SessionWriter

        self._drain()  # calls between tests (the last test's teardown) belong to no test
        marker = item.get_closest_marker("ttrecord")
        kwargs = marker.kwargs if marker else {}
        regions = kwargs.get("audit_region") or ()
        regions = (regions,) if isinstance(regions, str) else tuple(regions)
        fail_on = kwargs.get("fail_on") or self.fail_on
        if fail_on not in FAIL_ON:
            pytest.fail(f"ttrecord marker: fail_on={fail_on!r} is not one of"
                        f" {', '.join(FAIL_ON)}", pytrace=False)  # fmt: skip
        path = session_path(self.folder, item.nodeid)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        writer = SessionWriter(path)
        b = self.backend
        writer.start(script=item.nodeid, argv=[item.nodeid], backend=b.name,
                     backend_reason=b.reason, ttnn_version=b.version,
                     options={"stack_depth": 3, "audit_regions": list(regions),
                              "pytest": {"nodeid": item.nodeid,
                                         "worker": os.environ.get("PYTEST_XDIST_WORKER")}})  # fmt: skip
        self.current = _Test(item.nodeid, path, writer, regions, fail_on)
        self.recording.audit(regions)
        if kwargs.get("verify_replay"):
            self.recording.verify(True)  # for this test only

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        test = self.current
        if test is None or test.nodeid != item.nodeid:
            return
        if call.when == "setup" and report.passed:
            return  # the session goes on through the test body
        if call.when not in ("setup", "call"):
            return
        self.current = None
        self.recording.end_audit()
        if not self.verify_replay:
            self.recording.verify(False)
        try:
            findings, empty = self._finish(test, report, call)
        except Exception as exc:  # never let the recorder's trouble hide the test's result
            report.sections.append(("ttrecord", f"ttrecord could not analyse this test: {exc!r}"))
            return
        if empty is not None:
            report.sections.append(("ttrecord", empty.why))
        if findings is not None:
            self._judge(test, report, findings, item.config.rootpath, empty)
        elif empty is not None:
            report.user_properties.append(
                (_PROPERTY, json.dumps({"session": None, "findings": {}, "empty": empty.kind})))

    def _finish(self, test: _Test, report: pytest.TestReport,
                call: pytest.CallInfo) -> tuple[list | None, Any]:  # fmt: skip
        """Write the test's events, close the session, analyse it: (findings, why there was
        nothing to judge); findings None when nothing was recorded."""
        from ttrecord.analysis.check import findings_for
        from ttrecord.events import SessionStatus
        from ttrecord.report.lead import change_indexes
        from ttrecord.report.outcome import Empty, of_session
        from ttrecord.store.reader import Session

        events = self._scoped(self._drain(), test.regions)
        writer = test.writer
        if not events or (report.skipped and not hasattr(report, "wasxfail")):
            writer.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{test.path}{suffix}").unlink(missing_ok=True)
            if report.skipped:
                return None, None
            return None, Empty("no_calls", "ttrecord: no ttnn call was recorded in this test:"
                               " nothing to judge.")  # fmt: skip
        writer.add(events)
        exc = call.excinfo
        if exc is None:
            writer.finish(SessionStatus.OK, exit_code=0)
        else:
            writer.finish(SessionStatus.ERROR, exit_code=1, error_type=exc.typename,
                          error_message=str(exc.value), traceback=str(report.longrepr))  # fmt: skip
        writer.close()
        with Session.open(test.path) as session:
            findings = findings_for(session, store=True, say_why=True).findings
            empty = of_session(session)
            test.changes = change_indexes(session, findings)
        if empty is not None:
            empty = Empty(empty.kind, f"ttrecord: {empty.why}")
        return findings, empty

    def _scoped(self, events: list[Any], regions: tuple[str, ...]) -> list[Any]:
        """Drop audit-region marks of regions another test asked for (their wrappers stay)."""
        foreign = {name for names in self.recording.audits for name in names} - set(regions)
        if not foreign:
            return events
        from ttrecord.events import Kind

        kept = []
        for ev in events:
            if ev.kind in (Kind.REGION_BEGIN, Kind.REGION_END) and ev.name in foreign:
                continue
            if ev.region in foreign:
                ev.region = None
            kept.append(ev)
        return kept

    def _judge(self, test: _Test, report: pytest.TestReport, findings: list[Any],
               root: Path, empty: Any = None) -> None:  # fmt: skip
        counts: dict[str, int] = {}
        for f in findings:
            counts[f.rule] = counts.get(f.rule, 0) + 1
        report.user_properties.append(
            (_PROPERTY, json.dumps({"session": str(test.path), "findings": counts,
                                    "empty": empty.kind if empty is not None else None}))
        )  # fmt: skip
        if not findings:
            return
        text = format_findings(findings, test.path, test.fail_on, root, test.changes)
        failing = [f for f in findings if f.severity.rank >= _RANK[test.fail_on]]
        if failing and report.passed:
            first = failing[0]
            crash = _Crash(first.file or str(test.path), first.line or 0,
                           f"{first.rule} at {_where(first.file, first.line, root)}: {first.title}")  # fmt: skip
            report.outcome = "failed"
            report.longrepr = FindingsRepr(text, crash)  # type: ignore[assignment]  # pytest takes any toterminal()
        else:
            report.sections.append(("ttrecord findings", text))
