"""The shell every page shares, in a real browser (Debian's Chromium under Playwright), at a
phone's size and a laptop's: what a phone pays in bytes to join and to keep watching, and
what the shell does for people who cannot see small, faint or crowded things.

The real app is served by waitress on a free port; rolls come through the session as the
camera gives them (a rendered tray photo, read dice), placements as the host enters them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import Deal, Place
from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from tests.conftest import served_in_thread
from web.app import Settings, create_app
from web.session import TableSession

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PIN = "2468"
SHOTS = Path("/tmp/shell")
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
SIZES = [pytest.param(PHONE, id="phone"), pytest.param(LAPTOP, id="laptop")]
# A real table: a turn (throw, count, decide, place) takes about 15 s, so about 4 rolls a
# minute. The test plays faster than that; what it measures is the bytes of each roll.
ROLLS_PER_MINUTE = 4
FIRST_LOAD_MAX = 100_000
MINUTE_MAX = 300_000


@dataclass
class Served:
    url: str
    table: TableSession
    data_dir: Path
    app: Any


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("shell")
    store = GameStore(tmp)
    table = TableSession(store, tmp, "demo", reader=object(), players=players(3), seed=4,
                         auto_deal=False)
    app = create_app(table, Settings(pin=PIN, keepalive=5))
    with served_in_thread(app, threads=12) as port:
        yield Served(f"http://127.0.0.1:{port}", table, tmp, app)
        table.stop()
    store.close()


ERRORS: list[str] = []


@pytest.fixture(autouse=True)
def no_script_errors() -> Iterator[None]:
    ERRORS.clear()
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield
    assert not ERRORS, ERRORS


def page_at(browser, size: dict[str, int], scheme: str = "light"):
    """A page at `size` (a touch phone when narrow); script errors on it fail the test."""
    phone = size["width"] < 700
    ctx = browser.new_context(viewport=size, color_scheme=scheme,
                              device_scale_factor=2 if phone else 1, is_mobile=phone,
                              has_touch=phone)
    page = ctx.new_page()
    page.on("pageerror", lambda exc: ERRORS.append(f"{page.url}: {exc}"))
    page.on("console", lambda msg: msg.type == "error" and "/api/" not in msg.text
            and "ERR_" not in msg.text and ERRORS.append(f"{page.url}: {msg.text}"))
    return ctx, page


def size_name(size: dict[str, int]) -> str:
    return f"{size['width']}x{size['height']}"


class Wire:
    """Bytes the page received over the network, as Chromium counts them (CDP): a finished
    response by its encoded length (compressed body and headers), a stream still open (the
    live updates) by the chunks received so far."""

    def __init__(self, ctx, page) -> None:
        self.urls: dict[str, str] = {}
        self.finished: dict[str, int] = {}
        self.chunks: dict[str, int] = defaultdict(int)
        self.cdp = ctx.new_cdp_session(page)
        self.cdp.send("Network.enable")
        self.cdp.on("Network.requestWillBeSent",
                    lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"]))
        self.cdp.on("Network.dataReceived", self._chunk)
        self.cdp.on("Network.loadingFinished",
                    lambda e: self.finished.__setitem__(e["requestId"],
                                                        int(e["encodedDataLength"])))

    def _chunk(self, e: dict[str, Any]) -> None:
        self.chunks[e["requestId"]] += int(max(e.get("encodedDataLength") or 0,
                                               e.get("dataLength") or 0))

    def by_url(self) -> dict[str, int]:
        self.cdp.send("Runtime.evaluate", {"expression": "1"})  # events before this are in
        out: dict[str, int] = defaultdict(int)
        for rid, url in self.urls.items():
            out[url] += self.finished.get(rid, self.chunks.get(rid, 0))
        return dict(out)

    def total(self) -> int:
        return sum(self.by_url().values())


def camera_roll(served: Served, rng: random.Random) -> None:
    """The next player throws: the camera's photo of the tray and its reading go to the
    session, as the frame loop hands them over (a deal first when one is due)."""
    from vision import tracker as tk
    from vision.demo import DemoSource, Turn
    from vision.reader import DieRead

    table = served.table
    state = table.game.state
    if state.phase == "deal":
        table.apply(Deal())
        state = table.game.state
    roll = state.random_roll(rng)
    colours = tuple(d.colour for d in roll.dice)
    values = tuple(d.value for d in roll.dice)
    src = DemoSource(iter([Turn("p", colours, values, values[0])]), seed=rng.randrange(999),
                     size=(960, 720), realtime=False)
    while True:
        frame = src.read()
        assert frame is not None
        if frame.meta["truth"]["phase"] == "settled":
            break
    dice = tuple(DieRead(d["value"], d["colour"], d["big"], tuple(d["bbox"]), 0.99)
                 for d in frame.meta["truth"]["dice"])
    n = state.seq * 100
    with table.lock:
        table._handle([tk.Roll(n, n / 15, dice, n - 5, (n - 5) / 15, frame.image)])
    assert table.game.state.phase == "choose", table.pending


def place(served: Served, rng: random.Random) -> None:
    """The player takes the dice of one value (entered by the host)."""
    state = served.table.game.state
    served.table.apply(Place(rng.choice(sorted({d.value for d in state.roll}))))


def start_game(served: Served, seed: int) -> None:
    from scorekeeper import GameConfig

    table = served.table
    with table.lock:
        table.new_game(GameConfig("classic", tuple(players(3)), {}, seed, 0))
    served.app.extensions["display"].update(table.game.id, hide_money=False, deal="hand",
                                            ended=False)


def wait_for_roll_shown(page, photo: str) -> None:
    """The scoreboard shows this roll, its photo loaded."""
    page.wait_for_function(
        """(name) => { const img = document.querySelector('#roll .photo');
                       return img && img.src.includes(name) && img.complete
                              && img.naturalWidth > 0; }""", arg=photo, timeout=10000)


@pytest.mark.parametrize("size", SIZES)
def test_the_scoreboard_is_light_to_join_and_to_watch(served: Served, browser,
                                                      size: dict[str, int]) -> None:
    start_game(served, seed=11)
    rng = random.Random(5)
    for _ in range(5):  # a game under way: casinos with dice, a roll photo on show
        camera_roll(served, rng)
        place(served, rng)
    camera_roll(served, rng)
    ctx, page = page_at(browser, size)
    wire = Wire(ctx, page)
    page.goto(served.url + "/")
    page.wait_for_selector("#live.on")
    page.wait_for_load_state("load")
    wait_for_roll_shown(page, served.table.last_roll["photo"].split("/")[-1])
    first = wire.by_url()
    first_total = sum(first.values())
    print(f"\nfirst load at {size_name(size)}: {first_total} bytes: {first}")
    assert first_total <= FIRST_LOAD_MAX, first

    # A reload costs nothing but the page itself and the live state: every file is cached.
    before = wire.total()
    page.reload()
    page.wait_for_selector("#live.on")
    wait_for_roll_shown(page, served.table.last_roll["photo"].split("/")[-1])
    again = {u: n for u, n in wire.by_url().items() if n and "/static/" in u
             and n != first.get(u)}
    assert not again, again  # no static file came over the wire again
    reload_total = wire.total() - before
    assert reload_total < 20_000, reload_total

    start = wire.total()
    start_by_url = wire.by_url()
    rolls = 8
    for _ in range(rolls):
        place(served, rng)
        camera_roll(served, rng)
        wait_for_roll_shown(page, served.table.last_roll["photo"].split("/")[-1])
    spent = wire.total() - start
    per_roll = spent / rolls
    minute = per_roll * ROLLS_PER_MINUTE
    grown = {u: n - start_by_url.get(u, 0) for u, n in wire.by_url().items()
             if n != start_by_url.get(u, 0)}
    print(f"watching at {size_name(size)}: {per_roll:.0f} bytes a roll, {minute:.0f} a "
          f"minute of {ROLLS_PER_MINUTE} rolls: {grown}")
    assert minute <= MINUTE_MAX, grown
    ctx.close()


def test_text_is_compressed_and_files_are_cached_for_good(served: Served) -> None:
    """Headers, through Flask's test client: what the browser test above relies on."""
    import gzip
    import re

    client = served.app.test_client()
    accept = {"Accept-Encoding": "gzip, deflate, br"}
    page = client.get("/", headers=accept)
    assert page.headers["Content-Encoding"] == "gzip"
    assert page.headers["Cache-Control"] == "no-cache"  # a new version is seen at once
    assert "Accept-Encoding" in page.headers["Vary"]
    html = gzip.decompress(page.data).decode()
    files = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert {f.split("?")[0] for f in files} >= {"/static/app.css", "/static/common.js",
                                               "/static/scoreboard.js"}
    for url in files:
        assert re.search(r"\?v=[0-9a-f]{12}$", url), url
        r = client.get(url, headers=accept)
        assert r.status_code == 200
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        if url.split("?")[0].endswith((".css", ".js")):
            assert r.headers["Content-Encoding"] == "gzip", url
            name = url.split("?")[0].removeprefix("/static/")
            disk = (Path(served.app.static_folder) / name).read_bytes()
            assert gzip.decompress(r.data) == disk
            assert len(r.data) < len(disk) * 0.6
            again = client.get(url, headers={**accept, "If-None-Match": r.headers["ETag"]})
            assert again.status_code == 304
        r.close()
    # An old or missing version is the file on disk now: not to be kept.
    r = client.get("/static/app.css?v=000000000000", headers=accept)
    assert r.headers["Cache-Control"] == "no-cache"
    r.close()
    r = client.get("/static/app.css")
    assert r.headers["Cache-Control"] == "no-cache" and "Content-Encoding" not in r.headers
    r.close()
    # JSON is compressed; the live stream and photos never are.
    state = client.get("/api/state", headers=accept)
    assert state.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(state.data).startswith(b"{")
    plain = client.get("/api/state")
    assert "Content-Encoding" not in plain.headers and plain.data.startswith(b"{")
    events = client.get("/api/events", headers=accept)
    assert events.mimetype == "text/event-stream"
    assert "Content-Encoding" not in events.headers
    assert next(events.response).startswith(b"retry")
    events.close()
    photo = served.table.last_roll and served.table.last_roll.get("photo")
    if photo:
        r = client.get(f"/api/photo/{photo}?w=160", headers=accept)
        assert r.mimetype == "image/jpeg" and "Content-Encoding" not in r.headers
    tiny = client.get("/manifest.webmanifest", headers=accept)
    assert "Content-Encoding" not in tiny.headers  # too small to be worth it


def test_a_changed_file_gets_a_new_address(tmp_path: Path) -> None:
    from web.pages import Assets

    (tmp_path / "a.css").write_text("body { color: red }")
    (tmp_path / "b.css").write_text("p { color: blue }")
    assets = Assets(tmp_path)
    a1, b1 = assets.version("a.css"), assets.version("b.css")
    (tmp_path / "a.css").write_text("body { color: green }")
    assert assets.version("a.css") != a1
    assert assets.version("b.css") == b1  # the other files keep their address and cache
    assert assets.version("missing.css") is None
    assert assets.version("../a.css") is None
