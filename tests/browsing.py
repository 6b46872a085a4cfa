"""What the browser tests share: the real app served by waitress on a free port, with a table
session whose frame loop never runs (the tests act through the API, as the host would, or
through the session, as the camera would), and the sizes pages are looked at."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorekeeper import Deal, Place
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from tests.conftest import served_in_thread
from web.app import Settings, create_app
from web.session import TableSession

PIN = "2468"
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}


@dataclass
class Served:
    url: str
    table: TableSession
    data_dir: Path
    app: Any

    def post(self, path: str, body: dict, method: str = "POST") -> tuple[int, dict]:
        """A JSON write with the table PIN: the status and the answer."""
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              "X-Table-Pin": PIN}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())


@contextmanager
def serve_table(folder: Path) -> Iterator[Served]:
    """A 3-player classic table, dealt by hand, served until the block ends."""
    store = GameStore(folder)
    table = TableSession(store, folder, "demo", reader=object(), players=players(3), seed=4,
                         auto_deal=False)
    app = create_app(table, Settings(pin=PIN, keepalive=5))
    try:
        with served_in_thread(app, threads=12) as port:
            yield Served(f"http://127.0.0.1:{port}", table, folder, app)
            table.stop()
    finally:
        store.close()


@contextmanager
def host_page(browser: Any, url: str, size: dict[str, int]) -> Iterator[Any]:
    """The host's page at `size` (phone-like below 600 px), logged in; script errors on it
    fail the test."""
    phone = size["width"] < 600
    ctx = browser.new_context(viewport=dict(size), device_scale_factor=2 if phone else 1,
                              is_mobile=phone, has_touch=phone)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/table")
    page.fill("#pin", PIN)
    page.click("#login-form button")
    page.wait_for_selector("#host:not([hidden])")
    page.wait_for_selector("#live.on")
    yield page
    ctx.close()
    assert not errors, errors


def play(table: TableSession, turns: int, seed: int = 1, passes: bool = True) -> None:
    """Random legal turns, as the camera would report them (`passes`: a pass may be one)."""
    rng = random.Random(seed)
    for _ in range(turns):
        st = table.game.state
        if st.is_over():
            return
        if st.phase == "deal":
            table.apply(Deal())
        elif st.phase in ("roll", "neutral"):
            table.apply(st.random_roll(rng))
        else:
            legal = st.legal_actions()
            table.apply(rng.choice(legal if passes else
                                   [a for a in legal if isinstance(a, Place)] or legal))
