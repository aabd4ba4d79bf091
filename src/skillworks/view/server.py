"""`skillworks view`: a local web app over run directories (aiohttp; the front end is served from the
package, nothing from a CDN).

Routes: ``/`` the app; ``/api/runs``; ``/api/trials`` (filter, sort, search, page); ``/api/version`` (changes
when a run's results.jsonl does: the page polls it to refresh while a run goes); ``/runs/<key>/<path>`` the
files of a run directory (its reports, trial and pair pages) — regular files inside the run only, never
through a link out of it. Pages of a run are served with a policy that runs no script. The server binds
to 127.0.0.1 by default and answers only requests whose Host header names it (no DNS rebinding).
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
import os
import stat
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from skillworks.view.index import FILTERS, TrialIndex

_STATIC = ("index.html", "view.js", "view.css")
_APP_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
# run pages are data (trajectories an agent wrote): no script at all, styles inline as the reports have them
_RUN_POLICY = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'none'"
_TEXT_TYPES = {".json", ".jsonl", ".log", ".txt", ".md", ".yaml", ".yml", ".toml", ".py", ".sh", ".csv"}


@dataclass(frozen=True)
class ViewServer:
    """A started viewer: its address and how to stop it."""

    url: str
    runner: web.AppRunner

    async def stop(self) -> None:
        await self.runner.cleanup()


def _allowed_hosts(host: str, port: int) -> set[str]:
    names = {host, "127.0.0.1", "localhost"} if host in ("127.0.0.1", "localhost") else {host}
    if host in ("::1", "[::1]"):
        names = {"[::1]", "localhost"}
    return {f"{n}:{port}" for n in names}


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, ensure_ascii=False, allow_nan=False, default=str),
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


def _static(name: str) -> bytes:
    return resources.files("skillworks.view").joinpath("static", name).read_bytes()


def _run_file(run_dir: Path, rel: str) -> Path | None:
    """The regular file ``rel`` inside ``run_dir``, walked component by component without following a
    link (an agent's trial files may hold links to host files)."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") or "\\" in p or "\0" in p for p in parts):
        return None
    current = run_dir
    for part in parts:
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            return None
        if os.path.islink(current):
            return None
    return current if stat.S_ISREG(st.st_mode) else None


def make_app(index: TrialIndex, *, host: str, port: int) -> web.Application:
    allowed = _allowed_hosts(host, port)
    lock = asyncio.Lock()

    @web.middleware
    async def only_our_host(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.headers.get("Host", "") not in allowed:
            return web.Response(status=403, text="skillworks view: this Host is not served\n")
        return await handler(request)

    async def refreshed() -> None:
        async with lock:  # one re-read at a time; the parse runs off the event loop
            await asyncio.to_thread(index.refresh)

    async def app_file(request: web.Request) -> web.Response:
        name = request.match_info.get("name") or "index.html"
        if name not in _STATIC:
            raise web.HTTPNotFound()
        ctype = {"html": "text/html", "js": "text/javascript", "css": "text/css"}[name.rsplit(".", 1)[1]]
        return web.Response(
            body=_static(name),
            content_type=ctype,
            charset="utf-8",
            headers={"Content-Security-Policy": _APP_POLICY, "X-Content-Type-Options": "nosniff"},
        )

    async def runs(request: web.Request) -> web.Response:
        await refreshed()
        return _json({"runs": index.runs_summary(), "filters": list(FILTERS)})

    async def version(request: web.Request) -> web.Response:
        await refreshed()
        return _json({"version": index.version()})

    async def trials(request: web.Request) -> web.Response:
        params = request.query
        filters = {k: params[k] for k in FILTERS if k in params}
        try:
            offset = int(params.get("offset", "0"))
            limit = int(params.get("limit", "200"))
            result = await asyncio.to_thread(
                index.query,
                filters,
                q=params.get("q", ""),
                sort=params.get("sort", "finished"),
                descending=params.get("order", "asc") == "desc",
                offset=offset,
                limit=limit,
            )
        except ValueError as exc:
            return _json({"error": str(exc)}, status=400)
        result["version"] = index.version()
        return _json(result)

    async def run_file(request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        run = next((r for r in index.runs if r.key == key), None)
        path = _run_file(run.run_dir, request.match_info["path"]) if run is not None else None
        if path is None:
            raise web.HTTPNotFound()
        suffix = path.suffix.lower()
        ctype = "text/plain" if suffix in _TEXT_TYPES else mimetypes.guess_type(path.name)[0]
        return web.FileResponse(
            path,
            headers={
                "Content-Security-Policy": _RUN_POLICY,
                "X-Content-Type-Options": "nosniff",
                "Content-Type": f"{ctype or 'application/octet-stream'}; charset=utf-8"
                if (ctype or "").startswith("text/")
                else ctype or "application/octet-stream",
            },
        )

    app = web.Application(middlewares=[only_our_host])
    app.router.add_get("/", app_file)
    app.router.add_get("/static/{name}", app_file)
    app.router.add_get("/api/runs", runs)
    app.router.add_get("/api/version", version)
    app.router.add_get("/api/trials", trials)
    app.router.add_get("/runs/{key}/{path:.+}", run_file)
    return app


async def start_view(run_dirs: list[Path], *, host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """Index the run directories and start serving them; ``port=0`` picks a free port."""
    index = await asyncio.to_thread(TrialIndex, run_dirs)
    runner: web.AppRunner | None = None
    if port == 0:  # the Host check needs the port before the app exists: bind a socket first
        import socket

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        port = int(sock.getsockname()[1])
        runner = web.AppRunner(make_app(index, host=host, port=port), access_log=None)
        await runner.setup()
        site: web.BaseSite = web.SockSite(runner, sock)
    else:
        runner = web.AppRunner(make_app(index, host=host, port=port), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
    await site.start()
    shown = f"[{host}]" if ":" in host else host
    return ViewServer(url=f"http://{shown}:{port}/", runner=runner)
