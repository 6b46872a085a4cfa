"""The pages in a real browser: Debian's Chromium driven by Playwright, at phone size.

The real app is served by waitress on a free port, with a table session whose frame loop never
runs: the tests act through the API (as the host would) or the session (as the camera would).
Screenshots of every page in light and dark go to tests/screenshots/ for a person to look at.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import cv2
import pytest

from scorekeeper.simulate import players
from tests.browsing import PHONE, PIN, Served, play, serve_table

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path(__file__).parent / "screenshots"





@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("table")) as served:
        yield served


ERRORS: list[str] = []


def page_for(browser, scheme: str = "light"):
    """A phone-sized page; script errors on it are collected and fail the test."""
    ctx = browser.new_context(viewport=PHONE, color_scheme=scheme, device_scale_factor=2,
                              is_mobile=True, has_touch=True)
    page = ctx.new_page()
    page.on("pageerror", lambda exc: ERRORS.append(f"{page.url}: {exc}"))
    page.on("console", lambda msg: msg.type == "error" and "/api/" not in msg.text
            and ERRORS.append(f"{page.url}: {msg.text}"))
    return ctx, page


@pytest.fixture(autouse=True)
def no_script_errors() -> Iterator[None]:
    ERRORS.clear()
    yield
    assert not ERRORS, ERRORS


def fresh_game(served: Served, seed: int = 4, **extra) -> None:
    status, body = served.post("/api/game", {
        "edition": "classic", "seed": seed,
        "players": [{"name": n, "colour": c} for n, c in players(3)], **extra})
    assert status == 200, body


def demo_photo(served: Served, colours: tuple[str, ...], values: tuple[int, ...],
               chosen: int) -> tuple[str, list[dict]]:
    """A rendered tray photo in the game's photo folder, and the labels of its dice."""
    from vision.demo import DemoSource, Turn

    src = DemoSource(iter([Turn("p", colours, values, chosen)]), seed=3, size=(960, 720),
                     realtime=False)
    while True:
        frame = src.read()
        assert frame is not None
        if frame.meta["truth"]["phase"] == "settled":
            break
    gid = served.table.game.id
    folder = served.data_dir / "photos" / gid
    folder.mkdir(parents=True, exist_ok=True)
    name = f"event-{served.table.game.events:05d}.jpg"
    cv2.imwrite(str(folder / name), frame.image)
    return f"{gid}/{name}", frame.meta["truth"]["dice"]


VALUES = (1, 2, 2, 3, 4, 5, 6, 6)


def first_roll_photo(served: Served, seed: int, values: tuple[int, ...]
                     ) -> tuple[str, list[dict]]:
    """A fresh game, and a photo of its first player's dice showing `values`."""
    fresh_game(served, seed=seed)
    state = served.table.game.state
    who = state.current_player()
    colour = next(p.colour for p in state.players if p.name == who)
    return demo_photo(served, (colour,) * len(values), values, values[1])


def shot(page, name: str, full: bool = True) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full)


def login(page, served: Served) -> None:
    page.goto(served.url + "/table")
    page.fill("#pin", PIN)
    page.click("#login-form button")
    page.wait_for_selector("#host:not([hidden])")


def test_scoreboard_shows_a_placement_within_a_second_and_loads_small(served: Served, browser):
    fresh_game(served)
    table = served.table
    ctx, page = page_for(browser)
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    sizes: dict[str, int] = {}
    urls: dict[str, str] = {}
    cdp.on("Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"],
                                                                   e["request"]["url"]))
    cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(e["requestId"],
                                                                  int(e["encodedDataLength"])))
    page.goto(served.url + "/")
    page.wait_for_selector(".casino")
    page.wait_for_load_state("load")
    first = {urls[k]: v for k, v in sizes.items() if k in urls and "/api/" not in urls[k]}
    total = sum(first.values())
    print(f"\nscoreboard first load: {total} bytes over {len(first)} requests: {first}")
    assert total <= 100_000, first
    assert any(u.endswith("/") for u in first) and any(".js" in u for u in first)

    who = table.game.state.current_player()
    colour = next(p.colour for p in table.game.state.players if p.name == who)
    dice = [{"colour": colour, "value": v} for v in (1, 2, 3, 3, 3, 4, 5, 6)]
    assert served.post("/api/action", {"type": "roll", "dice": dice})[0] == 200
    t0 = time.monotonic()
    assert served.post("/api/action", {"type": "place", "value": 3})[0] == 200
    page.wait_for_function(
        """() => { const c = document.querySelector('[data-casino="3"]');
                   return c && c.querySelector('.stake .n') &&
                          c.querySelector('.stake .n').textContent === '3'; }""",
        timeout=1000)
    elapsed = time.monotonic() - t0
    print(f"placement shown after {elapsed * 1000:.0f} ms")
    assert elapsed < 1.0
    assert page.locator('[data-casino="3"] .stake .nm').first.inner_text() == who
    ctx.close()


def test_scoreboard_reconnects_by_itself_and_resyncs(served: Served, browser):
    fresh_game(served, seed=6)
    ctx, page = page_for(browser)
    page.goto(served.url + "/")
    page.wait_for_selector("#live.on")
    settings = served.app.extensions["settings"]
    settings.stream_max = 0.2  # the server drops the stream, as a dying Wi-Fi would
    try:
        page.wait_for_selector("#live:not(.on)", timeout=5000)
        play(served.table, 2, seed=3)  # a roll and its placement while this phone is away
    finally:
        settings.stream_max = 1800.0
    value = served.table.game.state.last["value"]
    page.wait_for_selector("#live.on", timeout=5000)
    page.wait_for_selector(f'[data-casino="{value}"] .stake', timeout=2000)
    ctx.close()


def test_host_sets_up_a_game_enters_a_roll_confirms_and_undoes(served: Served, browser):
    ctx, page = page_for(browser)
    login(page, served)
    page.click(".tabs [data-tab=game]")
    page.check("input[name=edition][value=classic]", force=True)
    while page.locator("#players-edit .prow").count() > 3:
        page.locator("#players-edit .rm").last.click()
    while page.locator("#players-edit .prow").count() < 3:
        page.click("#add-player")
    for i, (name, colour) in enumerate([("Ada", "red"), ("Bo", "blue"), ("Cy", "yellow")]):
        row = page.locator("#players-edit .prow").nth(i)
        row.locator(".pname").fill(name)
        row.locator(".pcolour").select_option(colour)
    page.locator("#players-edit .star").nth(1).click()  # Bo starts
    shot(page, "table-setup")
    page.click("#start-game")
    page.wait_for_selector("#ask[open], #tab-play:not([hidden]) [data-act=inc]")
    if page.locator("#ask[open]").count():  # the game left behind stays saved
        assert "can be resumed" in page.locator("#ask-text").inner_text()
        page.click("#ask-ok")
    page.wait_for_selector("#tab-play:not([hidden]) [data-act=inc]")
    state = served.table.game.state
    assert [p.name for p in state.players] == ["Ada", "Bo", "Cy"]
    assert state.current_player() == "Bo" and state.phase == "roll"

    # Eight blue dice by hand: two 1s, three 4s, one each of 2, 5, 6.
    for value, n in ((1, 2), (4, 3), (2, 1), (5, 1), (6, 1)):
        for _ in range(n):
            page.click(f"[data-act=inc][data-v='{value}']")
    assert page.locator("[data-act=roll]").is_enabled()
    shot(page, "table-roll-by-hand")
    page.click("[data-act=roll]")
    page.wait_for_selector("[data-act=place][data-v='4']")
    assert served.table.game.state.phase == "choose"
    shot(page, "table-choose")
    page.click("[data-act=place][data-v='4']")
    page.wait_for_function("() => document.querySelector('#status .who')"
                           ".textContent.includes('Cy')", timeout=2000)
    state = served.table.game.state
    assert state.seq == 3 and state.casinos[4].dice[("blue", False)] == 3
    page.click("#undo")
    page.wait_for_selector("[data-act=place][data-v='4']")
    assert served.table.game.state.seq == 2 and served.table.game.state.phase == "choose"
    shot(page, "table-after-undo")
    page.click(".tabs [data-tab=history]")
    page.wait_for_selector("#history li .t")
    assert "Bo rolled" in page.locator("#history").inner_text()
    ctx.close()


def test_host_enters_the_notes_dealt_by_hand(served: Served, browser):
    status, _ = served.post("/api/game", {
        "edition": "classic", "deal": "hand",
        "players": [{"name": n, "colour": c} for n, c in players(4)]})
    assert status == 200
    ctx, page = page_for(browser)
    login(page, served)
    page.click("[data-act=deal-open]")
    page.click("[data-act=deal-add][data-v='60000']")  # casino 1 is full: on to casino 2
    for _ in range(2):
        page.click("[data-act=deal-add][data-v='30000']")
    for _ in range(4):
        page.click("[data-act=deal-add][data-v='50000']")
    shot(page, "table-deal-by-hand")
    page.click("[data-act=deal-hand]")
    page.wait_for_selector("[data-act=inc]")
    casinos = served.table.game.state.casinos
    assert [casinos[c].notes for c in range(1, 7)] == [[60000], [30000, 30000], *[[50000]] * 4]
    ctx.close()


def test_a_pending_read_is_answered_with_one_tap(served: Served, browser):
    table = served.table
    photo, labels = first_roll_photo(served, 9, VALUES)
    dice = [{"colour": d["colour"], "value": d["value"], "big": False, "bbox": d["bbox"],
             "confidence": 0.99} for d in labels]
    doubtful = next(i for i, d in enumerate(dice) if d["value"] == 5)
    dice[doubtful].update(value=None, confidence=0.4)
    with table.lock:
        table.ask("roll", "unsure", "A die could not be read with certainty.", [3, 5], dice,
                   photo)
        table._after_change()
    ctx, page = page_for(browser, "dark")
    login(page, served)
    page.wait_for_selector("[data-act=confirm-cand][data-v='5']")
    page.wait_for_selector(".confirm .box")
    assert page.locator("[data-act=dismiss]").count() == 1  # "that was no roll"
    shot(page, "table-confirm-dark")
    page.click("[data-act=confirm-cand][data-v='5']")
    page.wait_for_selector("[data-act=place]")
    state = table.game.state
    assert not table.pending and state.phase == "choose"
    assert sorted(d.value for d in state.roll) == sorted(VALUES)
    ctx.close()


def test_a_held_roll_waits_for_the_placement_and_can_be_checked_at_once(served: Served,
                                                                         browser):
    from vision import tracker as tk
    from vision.reader import DieRead

    table = served.table
    photo, labels = first_roll_photo(served, 10, VALUES)
    image = cv2.imread(str(served.data_dir / "photos" / photo))
    dice = tuple(DieRead(d["value"], d["colour"], False, tuple(d["bbox"]),
                         0.7 if d["value"] == 5 else 0.98) for d in labels)
    unsure = tuple(d for d in dice if d.confidence < 0.9)
    with table.lock:
        table._handle([tk.Roll(40, 2.7, dice, 34, 2.3, image),
                       tk.NeedsConfirmation(40, 2.7, "unsure", (5,), unsure)])
    ctx, page = page_for(browser)
    page.goto(served.url + "/")  # the players' scoreboard shows the roll being read
    page.wait_for_selector("#roll .label:has-text('one die unclear')")
    assert page.locator("#roll .die[aria-label^='unread']").count() == 1
    shot(page, "scoreboard-held-roll", full=False)
    login(page, served)
    page.wait_for_selector("[data-act=check-roll]")
    assert page.locator(".confirm .die[aria-label^='unread']").count() == 1
    assert not table.pending and table.game.state.phase == "roll"
    shot(page, "table-held-roll")
    page.click("[data-act=check-roll]")
    page.wait_for_selector("[data-act=confirm-cand][data-v='5']")
    page.click("[data-act=confirm-cand][data-v='5']")
    page.wait_for_selector("[data-act=place]")
    assert sorted(d.value for d in table.game.state.roll) == sorted(VALUES)
    ctx.close()


def test_the_camera_page_says_what_the_tracker_sees(served: Served, browser):
    from vision import tracker as tk
    from vision.reader import DieRead

    table = served.table
    with table.lock:
        table.tracker = tk.TurnTracker()
        table._after_change()
    three = DieRead(3, "red", False, (100, 100, 140, 140), 0.97)
    five = DieRead(5, "red", False, (300, 100, 340, 140), 0.97)
    ctx, page = page_for(browser)  # one page: each camera picture holds one of a few streams
    page.goto(served.url + "/camera", wait_until="domcontentloaded")
    for size in (PHONE, {"width": 1280, "height": 800}):
        page.set_viewport_size(size)
        page.wait_for_selector(".stat:has-text('The tray'):has-text('Empty')")
        # Dice land in the tray: the page is told without being reloaded.
        with table.lock:
            table.tracker.feed(0, 0.0, [three, five])
            assert table.tracker.state == "rolling"
            table._after_change()
        page.wait_for_selector(".stat:has-text('Dice rolling')")
        # The player takes the 3: a move not yet sure, in plain words.
        with table.lock:
            for i in range(1, 12):
                table.tracker.feed(i, i / 15, [three, five])
            for i in range(12, 16):
                table.tracker.feed(i, i / 15, [five])
            assert table.tracker.state == "placing"
            table._after_change()
        page.wait_for_selector(".stat:has-text('Dice moving: waiting for them to settle')")
        words = page.locator("#stats").inner_text().lower()
        assert "placing" not in words and "tracker" not in words
        page.screenshot(path=str(SHOTS / f"camera-placing-{size['width']}.png"))
        with table.lock:  # the tests after this one start from a tray the tracker never saw
            table.tracker = tk.TurnTracker()
            table._after_change()
    ctx.close()


def test_pages_make_no_external_request(served: Served, browser):
    ctx, page = page_for(browser)
    seen: list[str] = []

    def guard(route) -> None:
        seen.append(route.request.url)
        if urlparse(route.request.url).netloc == urlparse(served.url).netloc:
            route.continue_()
        else:
            route.abort()

    ctx.route("**/*", guard)
    loaded = "() => [...document.images].every((i) => i.complete)"
    for size in (PHONE, {"width": 1280, "height": 800}):  # the laptop shows the join QR too
        page.set_viewport_size(size)
        for path, ready in (("/", ".casino"), ("/camera", ".stat"),
                            ("/calibrate", "#login:not([hidden]), #cal:not([hidden])")):
            page.goto(served.url + path, wait_until="load")
            page.wait_for_selector(ready)
            page.wait_for_selector("#live.on")  # the live stream is open
            page.wait_for_function(loaded)
        if size is PHONE:
            login(page, served)
        else:  # unlocked already
            page.goto(served.url + "/table")
            page.wait_for_selector("#host:not([hidden])")
        page.click(".tabs [data-tab=game]")
        page.click(".tabs [data-tab=history]")
        page.wait_for_selector("#history li")
        page.wait_for_function(loaded)
    hosts = {urlparse(u).netloc for u in seen if not u.startswith(("data:", "blob:"))}
    assert hosts == {urlparse(served.url).netloc}, seen
    assert any("/static/" in u and "?v=" in u for u in seen)
    ctx.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_every_page(served: Served, browser, scheme: str):
    """Not an assertion of looks: pictures for a person, of a game in its second round."""
    fresh_game(served, seed=21)
    table = served.table
    play(table, 60, seed=5)
    while table.game.state.phase != "choose":
        play(table, 1, seed=table.game.state.seq)
    st = table.game.state
    photo, _ = demo_photo(served, tuple(d.colour for d in st.roll),
                          tuple(d.value for d in st.roll), st.roll[0].value)
    with table.lock:
        table.last_roll = {"dice": [d.to_dict() for d in st.roll], "photo": photo, "frame": 1}
        table._after_change()
    ctx, page = page_for(browser, scheme)
    page.goto(served.url + "/")
    page.wait_for_selector(".casino .stake")
    shot(page, f"scoreboard-{scheme}")
    # Hidden money: this phone is carla's, the others' totals are face down.
    served.post("/api/display", {"hide_money": True})
    page.click("#me-btn")
    page.click("#me-choices button:has-text('carla')")
    page.wait_for_selector(".player .you")
    page.wait_for_selector(".money.hid")
    shot(page, f"scoreboard-hidden-{scheme}")
    assert page.locator(".money.hid").count() == 2
    served.post("/api/display", {"hide_money": False})
    login(page, served)
    shot(page, f"table-play-{scheme}")
    page.click(".tabs [data-tab=game]")
    shot(page, f"table-game-{scheme}")
    page.click(".tabs [data-tab=history]")
    page.wait_for_selector("#history li .t")
    shot(page, f"table-history-{scheme}", full=False)
    page.goto(served.url + "/camera", wait_until="load")
    page.wait_for_selector(".stat")
    page.wait_for_function("() => document.querySelector('#cam').complete")
    shot(page, f"camera-{scheme}")
    page.set_viewport_size({"width": 1280, "height": 800})
    shot(page, f"camera-laptop-{scheme}")
    page.set_viewport_size(PHONE)
    page.goto(served.url + "/")
    page.wait_for_selector(".casino .stake")
    page.set_viewport_size({"width": 360, "height": 740})
    shot(page, f"scoreboard-360-{scheme}", full=False)
    page.set_viewport_size({"width": 844, "height": 390})
    shot(page, f"scoreboard-landscape-{scheme}")
    page.set_viewport_size({"width": 1280, "height": 800})
    shot(page, f"scoreboard-laptop-{scheme}", full=False)
    page.set_viewport_size({"width": 1920, "height": 1080})
    shot(page, f"scoreboard-tv-{scheme}", full=False)
    page.set_viewport_size(PHONE)
    play(table, 400, seed=7)
    assert table.game.state.is_over()
    page.wait_for_selector(".final:not([hidden]) .rank li")
    shot(page, f"scoreboard-final-{scheme}")
    ctx.close()
