"""Shared fixtures. `chromium`: a real headless browser (the Debian ``chromium`` package) driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: no port, no network) to render report pages;
tests that use it skip only when no Chromium binary is installed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-pipe",
)
# what a page reports about itself once loaded (evaluated in the page)
_PROBE = """JSON.stringify({
  charts: [...document.querySelectorAll('svg.chart')].map(s => {
    const b = s.getBoundingClientRect();
    const marks = [...s.querySelectorAll('rect, path, line')].filter(e => {
      const r = e.getBoundingClientRect(); return r.width > 0 || r.height > 0; }).length;
    return {kind: s.dataset.chart, width: b.width, height: b.height, marks: marks,
            title: (s.querySelector('title') || {}).textContent || ''};
  }),
  links: [...document.querySelectorAll('a[href]')].map(a => new URL(a.getAttribute('href'), document.baseURI).href),
  resources: performance.getEntriesByType('resource').map(r => r.name),
  title: document.title,
  skill_tags: document.querySelectorAll('.tag.skill-load, .tag.script-run').length,
})"""


@dataclass
class PageReport:
    url: str
    charts: list[dict[str, Any]]
    links: list[str]
    resources: list[str]
    title: str
    skill_tags: int
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads
    requests: list[str] = field(default_factory=list)  # every URL the page asked for


class Chromium:
    """One headless Chromium; `load(path)` opens a page in a fresh tab and reports on it."""

    def __init__(self, binary: str, profile: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._resp_r, resp_w = os.pipe()

        def _fds() -> None:  # the browser reads commands on fd 3 and writes replies on fd 4
            os.dup2(cmd_r, 3)
            os.dup2(resp_w, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_fds,
            pass_fds=(3, 4),  # kept open after `_fds` (subprocess closes the others after preexec_fn)
        )
        os.close(cmd_r)
        os.close(resp_w)
        self._buf = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            chunk = os.read(self._resp_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def load(self, path: Path) -> PageReport:
        url = path.resolve().as_uri()
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self._send(f"{domain}.enable", session=session)
        self._events = []
        self._send("Page.navigate", {"url": url}, session=session)
        while not any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session for e in self._events):
            self._events.append(self._read())
        probe = self._send("Runtime.evaluate", {"expression": _PROBE, "returnByValue": True}, session=session)[
            "result"
        ]["value"]
        data = json.loads(probe)
        report = PageReport(url=url, **data)
        for e in self._events:
            if e.get("sessionId") != session:
                continue
            p = e.get("params", {})
            method = e.get("method")
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                report.errors.append("console: " + " ".join(str(a.get("value")) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                report.errors.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                report.errors.append("log: " + str(p["entry"].get("text")))
            elif method == "Network.loadingFailed":
                report.errors.append(f"load failed: {p.get('errorText')}")
            elif method == "Network.requestWillBeSent":
                report.requests.append(p.get("request", {}).get("url", ""))
        self._send("Target.closeTarget", {"targetId": target})
        return report

    def open(self, url: str) -> Tab:
        """A tab on ``url`` (any URL, e.g. a loopback server's) to drive with JavaScript."""
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self._send(f"{domain}.enable", session=session)
        self._send("Page.navigate", {"url": url}, session=session)
        return Tab(self, target, session)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self._send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._resp_r)


class Tab:
    """One open tab: `eval` runs JavaScript in it, `wait` polls a JavaScript condition; `errors` lists the
    console errors and uncaught exceptions seen so far."""

    def __init__(self, browser: Chromium, target: str, session: str) -> None:
        self._browser, self._target, self._session = browser, target, session

    def eval(self, expression: str) -> Any:
        reply = self._browser._send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self._session,
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails'].get('text')}")
        return reply["result"].get("value")

    def wait(self, condition: str, timeout: float = 20.0) -> float:
        """Seconds until ``condition`` (JavaScript) is true in the page."""
        start = time.monotonic()
        while True:
            with contextlib.suppress(RuntimeError):
                if self.eval(f"!!({condition})"):
                    return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise AssertionError(f"not true within {timeout} s: {condition}; errors {self.errors}")
            time.sleep(0.05)

    @property
    def errors(self) -> list[str]:
        out = []
        for e in self._browser._events:
            if e.get("sessionId") != self._session:
                continue
            p, method = e.get("params", {}), e.get("method")
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value")) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + str(p["entry"].get("text")))
        return out

    def close(self) -> None:
        self._browser._send("Target.closeTarget", {"targetId": self._target})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _serve_registry(root: Path, *, readonly: bool = False) -> Iterator[str]:
    """The CNCF distribution registry (Debian's `docker-registry`) with storage under `root`, plain HTTP on
    127.0.0.1:<free port>; `readonly` refuses every push (its maintenance mode). Its address."""
    binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
    assert os.access(binary, os.X_OK), "docker-registry missing: scripts/install-system-deps.sh test installs it"
    address = f"127.0.0.1:{_free_port()}"
    maintenance = "  maintenance:\n    readonly:\n      enabled: true\n" if readonly else ""
    (root / "config.yml").write_text(
        f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"{maintenance}http:\n  addr: {address}\n"
    )
    with open(root / "registry.log", "wb") as log:
        proc = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://{address}/v2/", timeout=2):
                        break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, (root / "registry.log").read_text()
                    time.sleep(0.2)
            yield address
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A container registry of its own (the CNCF distribution registry, Debian's `docker-registry`):
    storage in a temp dir, plain HTTP on 127.0.0.1:<free port>; its address, e.g. 127.0.0.1:40123."""
    with _serve_registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture
def readonly_registry(tmp_path: Path) -> Iterator[str]:
    """A registry that answers pulls but refuses every push (HTTP 405: its read-only maintenance mode)."""
    (tmp_path / "readonly-registry").mkdir()
    with _serve_registry(tmp_path / "readonly-registry", readonly=True) as address:
        yield address


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("chromium is not installed (scripts/install-system-deps.sh test installs it)")
    browser = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser
    finally:
        browser.close()
