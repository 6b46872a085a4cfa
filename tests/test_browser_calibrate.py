"""The /calibrate page in a real browser at phone size, with the session's real frame loop.

One table runs the demo camera (which plays the people dropping each colour's dice); another
looks at a plain wall, so the tray cannot be found and its corners are tapped on the picture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pytest

from scorekeeper.simulate import players
from scorekeeper.store import GameStore
from tests.conftest import served_in_thread
from vision.sources import Frame, Source
from web.app import Settings, create_app
from web.demo_host import DemoOptions
from web.session import TableSession

from .test_browser import SHOTS, no_script_errors, page_for  # noqa: F401  (autouse fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PIN = "2468"


class Wall(Source):
    """A camera looking at a plain wall: frames forever, no tray anywhere."""

    def __init__(self) -> None:
        super().__init__()
        self.i = 0
        rng = np.random.default_rng(3)
        self.image = (np.full((480, 640, 3), 118, np.uint8)
                      + rng.integers(0, 8, (480, 640, 3), dtype=np.uint8))

    def read(self) -> Frame | None:
        if self.ended:
            return None
        self._refuse_all_controls("a wall has no controls")
        self._stop.wait(1 / 30)
        self.i += 1
        if self._state != "running":
            self._set_state("running", "looking at a wall")
        return Frame(self.i, self.i / 15, self.image)


def serve(tmp: Path, spec: str, **kw: Any) -> Iterator[tuple[str, TableSession]]:
    store = GameStore(tmp)
    table = TableSession(store, tmp, spec, None, players=players(3), seed=4,
                         demo_options=DemoOptions(size=(640, 480)), **kw)
    app = create_app(table, Settings(pin=PIN, keepalive=5))
    with served_in_thread(app, threads=8) as port:
        table.start()
        yield f"http://127.0.0.1:{port}", table
        table.stop()
    store.close()


@pytest.fixture(scope="module")
def demo_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TableSession]]:
    yield from serve(tmp_path_factory.mktemp("demo"), "demo", realtime=True)


@pytest.fixture(scope="module")
def wall_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TableSession]]:
    yield from serve(tmp_path_factory.mktemp("wall"), "wall", source_factory=Wall)


def unlock(page, url: str) -> None:
    page.goto(url + "/calibrate")
    page.fill("#pin", PIN)
    page.click("#login-form button")
    page.wait_for_selector("#cal:not([hidden])")


@pytest.mark.parametrize("size", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}],
                         ids=["phone", "laptop"])
def test_calibrate_page_runs_the_guide_and_saves(demo_table, browser, size) -> None:
    url, table = demo_table
    ctx, page = page_for(browser)
    page.set_viewport_size(size)
    seen: list[str] = []
    ctx.route("**/*", lambda route: (seen.append(route.request.url), route.continue_()))
    unlock(page, url)
    page.wait_for_selector("#again, .cal-chip.sel")
    if page.locator("#again").is_visible():  # saved on the other size already: once more
        page.click("#again")
    # the game's colours are picked already, in seat order (this game has no neutral dice,
    # so no white); a tap takes one out
    page.wait_for_selector(".cal-chip.sel")
    assert page.locator(".cal-chip.sel").all_inner_texts() == [
        "red\n1", "blue\n2", "green\n3"]
    page.click(".cal-chip[data-c=green]")
    assert page.locator(".cal-chip.sel").count() == 2
    page.screenshot(path=str(SHOTS / f"calibrate-start-{size['width']}.png"), full_page=True)
    page.click("#start")
    # the found tray outlined on the picture (the demo's sets come and go in a second each)
    page.wait_for_selector("#overlay polygon.tray", timeout=30000)
    page.screenshot(path=str(SHOTS / f"calibrate-running-{size['width']}.png"), full_page=True)
    page.wait_for_selector("#save:not([disabled])", timeout=60000)
    assert "Reading will be reliable" in page.inner_text("#verdict")
    names = page.locator(".cal-sw b").all_inner_texts()
    assert names == ["red", "blue"]
    steps = page.locator(".cal-steps li b").all_inner_texts()
    assert steps[:2] == ["Camera", "Tray"] and "Glare" in steps and steps[-1] == "Colours"
    # each reading says what it measures and in what unit, not a bare number
    readings = dict(zip(steps, page.locator(".cal-steps li").all_inner_texts(), strict=True))
    assert "of 0 (black) to 100 (white)" in readings["Brightness"]
    assert "% of the floor" in readings["Glare"] and "% of the floor" in readings["Shadows"]
    swatches = page.inner_text("#swatches")
    assert "spread" not in swatches and "dice seen" in swatches and "ΔE" in swatches
    assert page.locator("#swatch-legend").is_visible()
    page.screenshot(path=str(SHOTS / f"calibrate-review-{size['width']}.png"), full_page=True)
    page.click("#save")
    page.wait_for_selector(".cal-saved")
    assert table.profile is not None and table.profile_name in page.inner_text("#cal-current")
    assert [c.name for c in table.profile.colours] == ["red", "blue"]
    hosts = {urlparse(u).netloc for u in seen if not u.startswith(("data:", "blob:"))}
    assert hosts == {urlparse(url).netloc}
    ctx.close()


def test_banner_on_every_page_when_the_profile_could_not_be_used(demo_table, browser) -> None:
    url, table = demo_table
    keep = (table.profile, table.profile_name)
    with table.lock:
        table.use_profile(None, error="profile-7.json: not valid JSON (is the file damaged?)")
        table._after_change()
    try:
        ctx, page = page_for(browser)
        for path in ("/", "/camera"):
            page.goto(url + path)
            page.wait_for_selector("#banner:not([hidden])")
            text = page.inner_text("#banner")
            assert "uncalibrated" in text and "profile-7.json" in text
            assert page.locator("#banner a[href='/calibrate']").count() == 1
        page.screenshot(path=str(SHOTS / "banner-uncalibrated.png"))
        ctx.close()
    finally:
        with table.lock:
            table.use_profile(*keep)
            table._after_change()


def test_tray_corners_are_tapped_when_the_tray_is_not_found(wall_table, browser) -> None:
    url, table = wall_table
    ctx, page = page_for(browser)
    unlock(page, url)
    page.click("#start")
    page.wait_for_selector("#use-corners", timeout=30000)
    assert "Tap the four corners" in page.inner_text("#now")
    box = page.locator("#cam").bounding_box()
    for fx, fy in ((0.1, 0.1), (0.9, 0.12), (0.88, 0.9), (0.12, 0.88)):
        page.mouse.click(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
    assert page.locator("#overlay circle.tap").count() == 4
    page.screenshot(path=str(SHOTS / "calibrate-corners.png"), full_page=True)
    page.click("#use-corners")
    page.wait_for_selector(".cal-drop", timeout=30000)  # on to the colours (none ever come)
    page.screenshot(path=str(SHOTS / "calibrate-drop.png"), full_page=True)
    corners = np.array(table.calibrator.corners)
    assert corners[:, 0].min() == pytest.approx(0.1 * 640, abs=8)
    assert corners[:, 1].max() == pytest.approx(0.9 * 480, abs=8)
    page.click("#cancel")
    page.wait_for_selector("#start")
    assert table.calibrator is None
    ctx.close()


@pytest.mark.parametrize("size", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}],
                         ids=["phone", "laptop"])
def test_calibration_asks_for_the_colours_of_the_game_at_the_table(demo_table, browser,
                                                                    size) -> None:
    from scorekeeper import GameConfig

    url, table = demo_table
    keep = table.game.state.config
    ctx, page = page_for(browser)
    page.set_viewport_size(size)
    unlock(page, url)
    page.wait_for_selector("#again, .cal-chip.sel")
    if page.locator("#again").is_visible():
        page.click("#again")
    chosen = page.locator(".cal-chip.sel")
    try:
        # Classic without its neutral-dice variant: the players' colours, no white.
        page.wait_for_function("() => document.querySelectorAll('.cal-chip.sel').length === 3")
        assert [c.get_attribute("data-c") for c in chosen.all()] == ["red", "blue", "green"]
        assert "without the neutral white dice" in page.inner_text("#setup-note")
        # a colour patch names its colour to a screen reader too
        patch = page.locator(".cal-chip[data-c=red] .sw")
        assert patch.get_attribute("role") == "img" and patch.get_attribute("aria-label") == "red"
        # The game's colours come first, each chip a comfortable target.
        assert page.locator(".cal-chip").first.get_attribute("data-c") == "red"
        for box in (c.bounding_box() for c in page.locator(".cal-chip").all()):
            assert box["height"] >= 44 and box["width"] >= 44, box
        # A game with the neutral dice: white is asked for, after the players' sets.
        with table.lock:
            table.new_game(GameConfig("classic", (("ann", "red"), ("bo", "yellow")),
                                      {"neutral_dice": True}, 3, 0))
        page.wait_for_function("() => [...document.querySelectorAll('.cal-chip.sel')]"
                               ".map((c) => c.dataset.c).join() === 'red,yellow,white'")
        assert chosen.all_inner_texts() == ["red\n1", "yellow\n2", "white\n3"]  # drop order
        assert "neutral white dice count as a colour" in page.inner_text("#setup-note")
        page.screenshot(path=str(SHOTS / f"calibrate-neutral-{size['width']}.png"),
                        full_page=True)
        # Royale always plays with them.
        with table.lock:
            table.new_game(GameConfig("royale", (("ann", "blue"), ("bo", "green")), {}, 3, 0))
        page.wait_for_function("() => [...document.querySelectorAll('.cal-chip.sel')]"
                               ".map((c) => c.dataset.c).join() === 'blue,green,white'")
        # With its tiles, the two black extra dice too, said to be no player's.
        with table.lock:
            table.new_game(GameConfig("royale", (("ann", "blue"), ("bo", "green")),
                                      {"tiles": 3}, 3, 0))
        page.wait_for_function("() => [...document.querySelectorAll('.cal-chip.sel')]"
                               ".map((c) => c.dataset.c).join() === 'blue,green,white,black'")
        note = page.inner_text("#setup-note")
        assert "neutral white dice count as a colour" in note
        assert "Black is the colour of the two black extra dice the tiles throw" in note
        assert "no player's dice" in note
        page.screenshot(path=str(SHOTS / f"calibrate-tiles-{size['width']}.png"), full_page=True)
        # Once the host has chosen, a change of game leaves their choice alone.
        page.click(".cal-chip[data-c=green]")
        with table.lock:
            table.new_game(GameConfig("classic", (("ann", "red"), ("bo", "pink")), {}, 3, 0))
        page.wait_for_function("() => document.querySelector('.cal-chip').dataset.c === 'red'")
        kept = {c.get_attribute("data-c"): c.inner_text() for c in chosen.all()}
        assert kept == {"blue": "blue\n1", "white": "white\n2", "black": "black\n3"}
    finally:
        with table.lock:
            table.new_game(keep)
    ctx.close()
