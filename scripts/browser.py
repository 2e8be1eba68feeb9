"""Drive Debian's headless Chromium through the DevTools protocol over a pipe (no extra
Python package, no browser download): open a page, collect console errors, exceptions and
network requests, evaluate JavaScript, take a screenshot.

Used by tests/test_report_browser.py and scripts/report_bench.py. The network is cut
twice: the browser runs in an empty network namespace when `unshare -n` works (as root),
and the page's network is emulated offline through the protocol; every request the page
makes is recorded, so a test can assert that it made none but file:// ones.

    with Browser() as b:
        page = b.open(Path("report.html"))
        page.evaluate("document.title")
        page.screenshot(Path("shot.png"))
        page.errors, page.requests
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

CHROMIUM = os.environ.get("LOCALJUDGE_CHROMIUM", "/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)
TIMEOUT = 60.0


class BrowserError(RuntimeError):
    pass


def available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


def _no_network_prefix() -> list[str]:
    """`unshare -n` when it works here (root, or user namespaces allowed); else nothing."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


class Page:
    """A loaded tab: the errors and requests seen while it loaded, and its load time."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.load_seconds = 0.0

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited when it is a promise)."""
        reply = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, target: Path, width: int = 1400, height: int = 1800) -> Path:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        target.write_bytes(base64.b64decode(data))
        return target


class Browser:
    """One headless Chromium, driven over --remote-debugging-pipe."""

    def __init__(self) -> None:
        if not available():
            raise BrowserError(
                f"{CHROMIUM} not found: scripts/setup.sh --dev installs Debian's chromium"
            )
        self._profile = tempfile.mkdtemp(prefix="localjudge-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the protocol pipe is fds 3 (in) and 4 (out)
            # Copies first: a pipe end may already sit on fd 3 or 4.
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)
            # A copy may itself have landed on 3 or 4 (dup2 onto itself changes nothing).
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [
                *_no_network_prefix(),
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(os.environ["LOCALJUDGE_CHROMIUM_LOG"], "ab")  # noqa: SIM115
            if os.environ.get("LOCALJUDGE_CHROMIUM_LOG")
            else subprocess.DEVNULL,
            preexec_fn=wire,
            close_fds=False,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(BrowserError, OSError):
                self.send("Browser.close", timeout=10)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- the protocol ----------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium exited (code {self.proc.poll()})")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = TIMEOUT,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._events.append(reply)

    def _wait_event(self, method: str, session: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self._events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return
            seen = len(self._events)
            self._events.append(self._read_message(deadline))

    def open(self, path: Path, offline: bool = True) -> Page:
        """Load `path` from a file:// URL in a new tab and wait for its load event."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        for domain in ("Runtime", "Log", "Page", "Network"):
            page.send(f"{domain}.enable")
        if offline:
            page.send(
                "Network.emulateNetworkConditions",
                {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
            )
        self._events.clear()
        started = time.perf_counter()
        page.send("Page.navigate", {"url": path.resolve().as_uri()})
        self._wait_event("Page.loadEventFired", session)
        page.load_seconds = time.perf_counter() - started
        page.errors, page.requests = self._collect(session)
        return page

    def _collect(self, session: str) -> tuple[list[str], list[str]]:
        errors: list[str] = []
        requests: list[str] = []
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(params["entry"].get("text", "")[:500])
            elif method == "Network.requestWillBeSent":
                requests.append(params.get("request", {}).get("url", ""))
        return errors, requests

    def errors_since_load(self, page: Page) -> list[str]:
        """Errors reported after the page loaded (e.g. by a click handler)."""
        errors, _ = self._collect(page.session)
        return errors
