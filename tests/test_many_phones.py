"""Many phones never lock out the host: streams have their own bounded threads.

The app runs under waitress with the options `serve` uses; 40 phones hold the live updates
open and 4 watch the camera, and every page, the state and the host's taps still answer.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import NoReader, free_port, serving
from web.app import Settings, create_app, make_server
from web.session import TableSession

PIN = "97531"


@contextmanager
def _served(app, settings: Settings, servers: list | None = None) -> Iterator[int]:
    """The app under waitress with `serve`'s own options."""
    server = make_server(app, settings, "127.0.0.1", 0)
    if servers is not None:
        servers.append(server)
    with serving(server) as port:
        yield port


def _open_stream(port: int, path: str) -> tuple[socket.socket, bytes]:
    """A phone holding a stream open: sends the request, reads the first bytes, keeps it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    return s, s.recv(4096)


def _request(port: int, method: str, path: str, body: dict | None = None,
             headers: dict | None = None, timeout: float = 10.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})} if body is not None \
            else dict(headers or {})
        conn.request(method, path, body=payload, headers=hdrs)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path: Path):
    from scorekeeper.simulate import players
    from scorekeeper.store import GameStore

    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", NoReader(), players=players(3), seed=4,
                         auto_deal=False)
    settings = Settings(pin=PIN, keepalive=1.0)
    app = create_app(table, settings)
    with _served(app, settings) as port:
        yield table, settings, port
    table.stop()
    store.close()


@pytest.mark.slow
def test_forty_live_phones_and_four_cameras_leave_the_host_in_control(served):
    table, _settings, port = served
    held: list[socket.socket] = []
    try:
        for _ in range(40):
            s, first = _open_stream(port, "/api/events")
            assert b"200 OK" in first and b"text/event-stream" in first
            held.append(s)
        for _ in range(4):
            s, first = _open_stream(port, "/api/camera/stream")
            assert b"200 OK" in first
            held.append(s)
        # A fifth camera viewer is told to come back later, not left hanging.
        status, body = _request(port, "GET", "/api/camera/stream")
        assert status == 503 and b"already shown" in body
        auth = {"X-Table-Pin": PIN}
        for method, path, body in [
            ("GET", "/", None), ("GET", "/table", None), ("GET", "/camera", None),
            ("GET", "/api/state", None),
            ("POST", "/api/login", {"pin": PIN}),
            ("POST", "/api/action", {"type": "deal"}),
            ("GET", "/api/state", None),
        ]:
            started = time.monotonic()
            status, _ = _request(port, method, path, body, headers=auth, timeout=10)
            assert status == 200, (path, status)
            assert time.monotonic() - started < 10
        assert table.game.state.phase == "roll", "the host's deal went through"
    finally:
        for s in held:
            s.close()


def test_live_updates_past_the_limit_get_a_503_with_retry(tmp_path: Path):
    from scorekeeper.simulate import players
    from scorekeeper.store import GameStore

    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", NoReader(), players=players(3))
    settings = Settings(pin=PIN, live_clients=2, keepalive=1.0)
    app = create_app(table, settings)
    held = []
    try:
        with _served(app, settings) as port:
            for _ in range(2):
                s, first = _open_stream(port, "/api/events")
                assert b"200 OK" in first
                held.append(s)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/api/events")
            r = conn.getresponse()
            assert r.status == 503
            assert int(r.getheader("Retry-After")) > 0
            assert "follow the table" in json.loads(r.read())["error"]
            conn.close()
            # A phone that leaves gives its place back.
            held.pop().close()
            deadline = time.monotonic() + 10
            while True:
                s, first = _open_stream(port, "/api/events")
                if b"200 OK" in first:
                    held.append(s)
                    break
                s.close()
                assert time.monotonic() < deadline, "the slot of a closed stream never came back"
                time.sleep(0.2)
    finally:
        for s in held:
            s.close()
        table.stop()
        store.close()


def test_each_connection_is_set_to_find_a_vanished_phone(tmp_path: Path):
    """Keep-alive and a user timeout on every accepted connection: the kernel drops a phone
    that stopped acknowledging, and its stream's thread is freed."""
    from waitress.channel import HTTPChannel

    from scorekeeper.simulate import players
    from scorekeeper.store import GameStore

    store = GameStore(tmp_path)
    table = TableSession(store, tmp_path, "demo", NoReader(), players=players(3))
    settings = Settings(pin=PIN, keepalive=1.0)
    servers: list = []
    try:
        with _served(create_app(table, settings), settings, servers) as port:
            s, first = _open_stream(port, "/api/events")
            assert b"200 OK" in first
            channels = [c for c in servers[0]._map.values() if isinstance(c, HTTPChannel)]
            assert channels
            for ch in channels:
                sock = ch.socket
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) > 0
            s.close()
    finally:
        table.stop()
        store.close()


@pytest.mark.slow
def test_memory_levels_off_as_camera_viewers_come_and_go():
    """Rounds of 4 camera viewers: what the server keeps after they leave stops growing
    (each viewer's frames were encoded on its own thread, and glibc kept every thread's
    heap: round after round the process kept ~50 MB more)."""
    from tests.benches import load_bench

    got = load_bench("viewers").measure(rounds=3, viewers=4, seconds=8.0,
                                        port=free_port())
    after = got["after"]
    assert after[-1] - after[0] < 40, got
