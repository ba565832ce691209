"""A headless Chromium driven over the DevTools protocol, through a pipe.

`--remote-debugging-pipe` makes Chromium read protocol messages (JSON, NUL-terminated) on fd 3
and write them on fd 4, so a test needs no port, no websocket library and no driver binary:
the Debian `chromium` package and the standard library are enough. Clicks go through
`Input.dispatchMouseEvent`, the same path a real mouse takes (hit testing included).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

BINARIES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    return next((p for p in map(shutil.which, BINARIES) if p), None)


class Browser:
    def __init__(self, binary: str, width: int = 1400, height: int = 1000) -> None:
        self._profile = tempfile.mkdtemp(prefix="ttrecord-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds() -> None:  # in the child: the protocol's fixed fds
            # Move both out of the way first: either may itself be fd 3 or 4.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome_r, from_chrome_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        log = open(os.path.join(self._profile, "stderr.log"), "wb")  # noqa: SIM115 - open as long as Chromium; read when it fails
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--disable-extensions", "--hide-scrollbars",
             f"--user-data-dir={self._profile}", f"--window-size={width},{height}", "about:blank"],
            # Python's own fds are not inherited anyway; close_fds would run after `fds` and
            # close 3 and 4 again.
            close_fds=False, preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
        log.close()
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next = 0
        self.session: str | None = None
        self.width, self.height = width, height

    # -- protocol --------------------------------------------------------------------------

    def send(self, method: str, params: dict | None = None, session: bool = True) -> dict:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict:
        while b"\0" not in self._buf:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    # -- pages -----------------------------------------------------------------------------

    def open(self, path: Path, timeout: float = 30.0) -> None:
        """Open a file in a fresh tab and wait until the report says it has drawn."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]  # fmt: skip
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        started = time.monotonic()
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()})
        deadline = started + timeout
        while self.eval("document.documentElement?.dataset.ready === '1'") is not True:
            if time.monotonic() > deadline:
                errors = self.eval("String(window.__errors || '')")
                raise TimeoutError(f"the report did not finish drawing ({errors})")
            time.sleep(0.02)
        self.opened_s = time.monotonic() - started  # navigation to drawn, polled every 20 ms

    def eval(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description"))
        return result["result"].get("value")

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})  # fmt: skip

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1})  # fmt: skip
        data = self.send("Page.captureScreenshot", params)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)
