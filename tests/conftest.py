"""Shared helpers for the tests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `vegas-table` entry point in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "web.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@contextmanager
def served_in_thread(app: Any, threads: int) -> Iterator[int]:
    """The app served by waitress on a free port (yielded), stopped cleanly afterwards."""
    from waitress import create_server

    with serving(create_server(app, host="127.0.0.1", port=0, threads=threads)) as port:
        yield port


@contextmanager
def serving(server: Any) -> Iterator[int]:
    """Run a waitress server in a thread; yields its port, stops it cleanly afterwards.

    waitress's loop must close its own sockets: closed from this thread, the socket its
    `select` is waiting on goes bad under it (an OSError in the server thread, reported by
    pytest as a warning). So the close is handed to the loop through its trigger, and the
    loop, left with nothing to watch, returns."""
    from waitress import wasyncore

    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield server.effective_port
    finally:
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        except OSError:
            # The loop has closed its trigger already (it is ending or has ended; seen once
            # in a clean clone's run as EBADF at teardown): nothing is left to hand over.
            wasyncore.close_all(server._map)
        thread.join(timeout=10)
        server.task_dispatcher.shutdown()
        assert not thread.is_alive(), "the server loop did not stop"


def free_port() -> int:
    """A port nobody listens on now (the kernel's pick), for a server a test starts."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_process(args: list[str], port: int, ready: str = "/api/state",
                  env: dict | None = None) -> subprocess.Popen:
    """`vegas-table serve ARGS --port PORT` in a subprocess, once `ready` answers 200."""
    import time
    import urllib.request

    cmd = [sys.executable, "-m", "web.cli", "serve", *args, "--port", str(port),
           "--host", "127.0.0.1"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    deadline = time.time() + 60
    while time.time() < deadline:
        if p.poll() is not None:
            raise AssertionError("serve exited: " + p.stdout.read().decode(errors="replace"))
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{ready}", timeout=5):
                return p
        except OSError:  # not listening yet, or (HTTPError) not ready
            time.sleep(0.3)
    p.kill()
    raise AssertionError("serve did not come up")


def rest_after_stop(chunks: Iterator[bytes], table: Any) -> list[bytes]:
    """What a streamed response still sends while the table stops. The web server waits
    for open responses when it shuts down, so a stream must end with the table: fails if it
    is still going 2 s later."""
    rest: list[bytes] = []
    reader = threading.Thread(target=lambda: rest.extend(chunks), daemon=True)
    reader.start()  # ends only if the stream does
    table.stop()
    reader.join(timeout=2.0)
    assert not reader.is_alive(), "the stream outlived the table"
    return rest


@pytest.fixture
def cli():
    return run_cli


class NoReader:
    """API and page tests never run the frame loop; the session only needs something to hold."""

    def read(self, frame):  # pragma: no cover - never called
        raise AssertionError("the frame loop must not run in API or page tests")


@pytest.fixture
def table(tmp_path: Path):
    """A table session with a 3-player classic game, dealt by hand, camera loop not started."""
    from scorekeeper.simulate import players
    from scorekeeper.store import GameStore
    from web.session import TableSession

    store = GameStore(tmp_path)
    t = TableSession(store, tmp_path, "demo", NoReader(), players=players(3), seed=4,
                     auto_deal=False)
    yield t
    store.close()


CHROMIUM = Path("/usr/bin/chromium")  # Debian's: browser downloads are impossible here


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium under Playwright, for the page tests (`make test` installs both)."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    (Path(__file__).parent / "screenshots").mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield b
        b.close()
