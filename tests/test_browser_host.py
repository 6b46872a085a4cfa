"""The host's page (/table) in a real browser, at phone (390x844) and laptop (1280x800) size.

Debian's Chromium driven by Playwright; the real app served by waitress on a free port, with
a table session whose frame loop never runs: the tests act through the API (as another
phone would) or the session (as the camera would), and through the page as the host does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorekeeper.simulate import players
from tests.browsing import LAPTOP, PHONE, Served, serve_table
from tests.browsing import host_page as logged_in
from tests.browsing import play as shared_play
from tests.test_browser import demo_photo
from web.session import TableSession

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/host")





@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("host")) as served:
        yield served


@pytest.fixture(params=[PHONE, LAPTOP], ids=["390x844", "1280x800"])
def size(request: pytest.FixtureRequest) -> dict[str, int]:
    return dict(request.param)


@pytest.fixture
def host_page(browser, served: Served, size: dict[str, int]) -> Iterator[Any]:
    """The host's page, logged in; script errors on it fail the test."""
    with logged_in(browser, served.url, size) as page:
        yield page


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    w = page.viewport_size["width"]
    page.screenshot(path=str(SHOTS / f"test-{name}-{w}.png"))


def fresh_game(served: Served, edition: str = "classic", n: int = 3, **extra: Any) -> str:
    status, body = served.post("/api/game", {
        "edition": edition, "seed": 4,
        "players": [{"name": nm, "colour": c} for nm, c in players(n)], **extra})
    assert status == 200, body
    return str(body["game_id"])


def play(table: TableSession, turns: int, seed: int = 1) -> None:
    shared_play(table, turns, seed, passes=False)


def until(table: TableSession, done: Any, seed: int = 1) -> None:
    for i in range(2000):
        if done(table.game.state):
            return
        play(table, 1, seed=seed + i)
    raise AssertionError("the game never got there")


def roll_photo(served: Served, colours: tuple[str, ...], values: tuple[int, ...]) -> str:
    """A rendered tray photo in the current game's photo folder; its name."""
    return demo_photo(served, colours, values, values[0])[0]


def choosing_with_a_photo(served: Served, **game: Any) -> None:
    """A fresh game whose first player rolled eight dice, photo and all, and now places."""
    fresh_game(served, **game)
    table = served.table
    st = table.game.state
    colour = next(p.colour for p in st.players if p.name == st.current_player())
    values = (1, 2, 2, 3, 4, 5, 6, 6)
    photo = roll_photo(served, (colour,) * 8, values)
    status, _ = served.post("/api/action", {"type": "roll", "dice": [
        {"colour": colour, "value": v} for v in values]})
    assert status == 200
    with table.lock:
        table.last_roll = {"dice": [d.to_dict() for d in table.game.state.roll],
                           "photo": photo, "frame": 7}
        table._after_change()


def box(page: Any, selector: str) -> dict[str, float]:
    b = page.locator(selector).bounding_box()
    assert b is not None, selector
    return b


def nothing_under_the_dock(page: Any, selector: str) -> None:
    """Scrolled to the very end, `selector` ends above the fixed Undo/Scoreboard bar."""
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function(
        """(sel) => { const els = document.querySelectorAll(sel);
                      const last = els[els.length - 1];
                      const dock = document.querySelector('#dock');
                      return last && last.getBoundingClientRect().bottom
                             <= dock.getBoundingClientRect().top; }""",
        arg=selector, timeout=3000)


# --- item 1: a new game asks first; saved games are listed, resumed, viewed, deleted ----------
def test_a_new_game_asks_first_and_names_what_would_be_left(served: Served, host_page: Any):
    old = fresh_game(served)
    table = served.table
    until(table, lambda st: st.round == 2 and st.phase == "roll")
    ranking = table.game.state.results()["ranking"]
    best = max(r["score"] for r in ranking)
    page = host_page
    page.click(".tabs [data-tab=game]")
    page.click("#start-game")
    page.wait_for_selector("#ask[open]")
    text = page.locator("#ask-text").inner_text()
    assert text.startswith("Game in progress: Round 2 of 4, ")
    assert f"with ${best:,}" in text and "It stays saved and can be resumed." in text
    shot(page, "new-game-asks")
    page.click("#ask-cancel")
    page.wait_for_selector("#ask:not([open])", state="attached")
    assert table.game.id == old
    page.click("#start-game")
    page.click("#ask-ok")
    page.wait_for_selector("#tab-play:not([hidden])")
    assert table.game.id != old and table.game.state.seq <= 1
    page.click(".tabs [data-tab=game]")
    page.wait_for_selector(f"#games li[data-game='{old}']")
    item = page.locator(f"#games li[data-game='{old}']").inner_text()
    assert "Round 2" in item and "with $" in item


def test_saved_games_are_resumed_viewed_with_photos_and_deleted(served: Served,
                                                                host_page: Any):
    table = served.table
    first = fresh_game(served)
    st = table.game.state
    colour = next(p.colour for p in st.players if p.name == st.current_player())
    roll_photo(served, (colour,) * 8, (1, 1, 2, 3, 4, 5, 6, 6))
    assert served.post("/api/action", {"type": "roll", "dice": [
        {"colour": colour, "value": v} for v in (1, 1, 2, 3, 4, 5, 6, 6)]})[0] == 200
    assert served.post("/api/action", {"type": "place", "value": 6})[0] == 200
    second = fresh_game(served, n=4)
    third = fresh_game(served, "royale")
    page = host_page
    page.click(".tabs [data-tab=game]")
    for gid in (first, second, third):
        page.wait_for_selector(f"#games li[data-game='{gid}']")
    now = page.locator(f"#games li[data-game='{third}']")
    assert "playing now" in now.inner_text().lower() and now.locator("[data-g=delete]").count() == 0
    one = page.locator(f"#games li[data-game='{first}']")
    text = one.inner_text()
    assert "Classic" in text and "Round 1" in text and "anna" in text and "carla" in text
    shot(page, "saved-games")

    # View: the game's history with its photo, small, and the whole photo on a tap.
    one.locator("[data-g=view]").click()
    page.wait_for_selector("#hist-head:not([hidden])")
    page.wait_for_selector("#history .thumb img")
    src = page.locator("#history .thumb img").get_attribute("src")
    assert f"/api/photo/{first}/" in src and "w=" in src
    page.wait_for_function("() => document.querySelector('#history .thumb img').naturalWidth"
                           " > 0 && document.querySelector('#history .thumb img')"
                           ".naturalWidth <= 240")
    assert "turn 1" in page.locator("#history").inner_text()
    page.click("#history .thumb")
    page.wait_for_selector("#photo-view[open]")
    page.wait_for_function("() => document.querySelector('#photo-full').naturalWidth === 960")
    page.click("#photo-view")
    page.wait_for_selector("#photo-view:not([open])", state="attached")
    page.click("#hist-back")

    # Delete one, after a question naming it.
    page.locator(f"#games li[data-game='{second}'] [data-g=delete]").click()
    page.wait_for_selector("#ask[open]")
    assert "deleted for good" in page.locator("#ask-text").inner_text()
    page.click("#ask-ok")
    page.wait_for_selector(f"#games li[data-game='{second}']", state="detached")
    assert table.game.id == third

    # Resume the first: the table plays it on, at the turn it was left.
    page.locator(f"#games li[data-game='{first}'] [data-g=resume]").click()
    page.click("#ask-ok")
    page.wait_for_selector("#tab-play:not([hidden]) [data-act=inc]")
    assert table.game.id == first and table.game.state.seq == 3
    page.click(".tabs [data-tab=game]")
    page.wait_for_selector(f"#games li.current[data-game='{first}']")


# --- item 2: a pending question offers what the rules take, likely first ---------------------
def test_someone_elses_dice_are_asked_about_with_the_right_answer_first(served: Served,
                                                                        host_page: Any):
    fresh_game(served)
    table = served.table
    st = table.game.state
    mover = st.current_player()
    other = next(p for p in st.players if p.name != mover)
    dice = [{"colour": other.colour, "value": v, "big": False, "confidence": 0.99}
            for v in (1, 2, 2, 3, 4, 5, 6, 6)]
    table.ask("roll", "colour", "The dice are not the colour of the player to move.", [],
              dice)
    page = host_page
    page.wait_for_selector(".confirm .answers button")
    buttons = page.locator(".confirm .answers button")
    first = buttons.first
    assert first.get_attribute("data-act") == "dismiss"
    assert "primary" in (first.get_attribute("class") or "")
    assert other.name in first.inner_text()
    assert page.locator("[data-act=confirm-read], [data-act=confirm-dice]").count() == 0
    whose = page.locator(".confirm .whose").inner_text()
    assert f"{other.name}'s {other.colour} dice" in whose and mover in whose
    nothing_under_the_dock(page, ".confirm .answers button")
    shot(page, "someone-elses-dice")
    page.click(".confirm [data-act=correct]")
    page.wait_for_selector(".confirm .editor")
    page.click(".confirm [data-act=uncorrect]")
    first = page.locator(".confirm .answers button").first
    first.click()
    page.wait_for_selector(".confirm", state="detached")
    assert not table.pending and table.game.state.phase == "roll"


# --- item 3: ending a game leaves nothing of it open --------------------------------------------
def test_ending_a_game_leaves_no_question_and_says_so(served: Served, host_page: Any):
    fresh_game(served)
    table = served.table
    table.ask("roll", "count", "The number of dice does not match what the player holds.", [],
              [{"colour": "red", "value": 3, "big": False, "confidence": 0.99}])
    page = host_page
    page.wait_for_selector(".confirm")
    page.click(".tabs [data-tab=game]")
    page.click("#cur-end")
    page.wait_for_selector("#ask[open]")
    page.click("#ask-ok")
    page.wait_for_selector("#cur-reopen")
    page.click(".tabs [data-tab=play]")
    page.wait_for_selector("[data-act=reopen]")
    assert page.locator("#pending .confirm").count() == 0 and not table.pending
    who = page.locator("#status").inner_text()
    assert "ended" in who.lower() and "Round 1 of" not in who
    shot(page, "ended")


# --- item 7: a placement needs no scrolling ------------------------------------------------------
def test_the_number_buttons_are_on_the_first_screen(served: Served, host_page: Any,
                                                    size: dict[str, int]):
    choosing_with_a_photo(served, edition="custom", options={"skip_rule": "A"})
    page = host_page
    page.wait_for_selector(".confirm .photo-wrap img")
    page.wait_for_function("() => document.querySelector('.confirm .photo-wrap img').complete")
    buttons = page.locator("[data-act=place], [data-act=pass]")
    assert buttons.count() == 7  # six numbers, and skipping the turn
    shot(page, "placement")
    dock = box(page, "#dock")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= size["width"]
    for i in range(buttons.count()):
        b = buttons.nth(i).bounding_box()
        assert b["height"] >= 44 and b["width"] >= 44
        assert b["x"] >= 0 and b["x"] + b["width"] <= size["width"]
        assert b["y"] + b["height"] <= dock["y"], (i, b, dock)  # seen without scrolling
    nothing_under_the_dock(page, "#tab-play .btn")


# --- item 8: what the set-up and the buttons say follows the edition -----------------------------
def test_the_set_up_stops_at_the_editions_player_count(served: Served, host_page: Any):
    fresh_game(served)
    page = host_page
    page.click(".tabs [data-tab=game]")
    page.check("input[name=edition][value=classic]", force=True)
    for _ in range(10):
        if page.locator("#add-player").is_disabled():
            break
        page.click("#add-player")
    assert page.locator("#players-edit .prow").count() == 5
    assert "2 to 5 players" in page.locator("#players-note").inner_text()
    page.check("#opt-neutral")
    page.wait_for_selector("#players-note.err")
    assert "2 to 4 players: remove 1" in page.locator("#players-note").inner_text()
    shot(page, "player-cap")
    page.check("input[name=edition][value=custom]", force=True)
    page.wait_for_function("() => !document.querySelector('#add-player').disabled")
    page.check("input[name=edition][value=royale]", force=True)
    page.wait_for_function("() => document.querySelector('#add-player').disabled")


def test_skipping_says_what_it_costs(served: Served, host_page: Any):
    fresh_game(served, "custom", options={"skip_rule": "A"})
    table = served.table
    until(table, lambda st: st.phase == "choose")
    page = host_page
    page.wait_for_selector("[data-act=pass]")
    assert "$1" in page.locator("[data-act=pass]").inner_text()
    fresh_game(served, "royale")
    until(table, lambda st: st.phase == "choose")
    page.wait_for_selector("[data-act=pass]:has-text('chip')")
    assert "$10,000" in page.locator("[data-act=pass]").inner_text()


@pytest.mark.parametrize("edition", ["classic", "royale"])
def test_the_biggy_switch_is_there_only_in_royale(served: Served, host_page: Any, edition: str):
    fresh_game(served, edition)
    table = served.table
    st = table.game.state
    colour = next(p.colour for p in st.players if p.name == st.current_player())
    table.ask("roll", "count", "The number of dice does not match what the player holds.", [],
              [{"colour": colour, "value": 3, "big": False, "confidence": 0.99}])
    page = host_page
    page.wait_for_selector(".confirm [data-act=correct]")
    page.click(".confirm [data-act=correct]")
    page.wait_for_selector(".confirm .editor")
    assert page.locator(".confirm .editor [data-act=set-big]").count() == (
        1 if edition == "royale" else 0)
    names = page.locator(".confirm .editor [data-act=set-c]").all_inner_texts()
    assert colour in [n.strip() for n in names]  # swatches say their colour
    table.dismiss(table.pending[0].id)


# --- item 9: thumbnails where a photo is small, the whole photo on a tap -------------------------
def test_the_roll_photo_is_sent_for_its_size_and_whole_on_a_tap(served: Served,
                                                                host_page: Any,
                                                                size: dict[str, int]):
    choosing_with_a_photo(served)
    page = host_page
    img = page.locator(".confirm .photo-wrap img")
    img.wait_for()
    page.wait_for_function("() => document.querySelector('.confirm .photo-wrap img')"
                           ".naturalWidth > 0")
    src = img.get_attribute("src")
    assert "w=" in src
    natural = page.evaluate("document.querySelector('.confirm .photo-wrap img').naturalWidth")
    shown = img.bounding_box()["width"]
    assert natural < 960 and natural >= shown * 0.9
    img.click()
    page.wait_for_selector("#photo-view[open]")
    page.wait_for_function("() => document.querySelector('#photo-full').naturalWidth === 960")


# --- item 10: tap targets, labels, words ---------------------------------------------------------
def test_tap_targets_are_44_px_and_the_history_speaks_of_turns(served: Served,
                                                               host_page: Any):
    fresh_game(served)
    play(served.table, 7, seed=2)
    page = host_page
    small = page.evaluate("""() => [...document.querySelectorAll(
        '.tabs button, .nav a, .dock .btn, #tab-play button')]
        .filter((e) => e.offsetParent !== null)
        .map((e) => [e.textContent.trim().slice(0, 20), e.getBoundingClientRect().height])
        .filter(([, h]) => h < 44)""")
    assert small == []
    page.click(".tabs [data-tab=game]")
    page.wait_for_selector("#games li")
    small = page.evaluate("""() => [...document.querySelectorAll(
        '#tab-game .switch, #tab-game .seg label, #tab-game button, #tab-game .btn')]
        .filter((e) => e.offsetParent !== null)
        .map((e) => [e.textContent.trim().slice(0, 20), e.getBoundingClientRect().height])
        .filter(([, h]) => h < 44)""")
    assert small == []
    page.click(".tabs [data-tab=history]")
    page.wait_for_selector("#history li .m")
    meta = page.locator("#history li .m").first.inner_text()
    assert "turn" in meta and "#" not in meta and "action" not in meta
    assert "action" not in page.locator("#status").inner_text()
