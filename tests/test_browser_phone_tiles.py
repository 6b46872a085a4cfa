"""Royale's casino tiles on the players' phones (the scoreboard, "/"), in a real browser.

Two phones, each with its own "Me?" colour, follow one table. A tile's question shows on the
deciding player's phone only, with a button per answer (a secret one says so); every other
phone says whose decision the table waits for. The tiles lie beside their casinos with their
counters and tokens, and the game log says what each tile did. The rolls are entered through
the host's API, as the table's camera or host would; the answers are tapped on the phones.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import GameConfig
from scorekeeper.simulate import players
from tests.browsing import LAPTOP, PHONE, Served, serve_table
from tests.test_browser_scoreboard import CONTRAST

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/shots")
ERRORS: list[str] = []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("phone-tiles")) as served:
        yield served


@pytest.fixture
def phones(browser: Any) -> Iterator[Any]:
    """`phones(n)` opens n phone-sized pages, each in its own browser context (its own
    localStorage: its own "Me?"); script errors on any of them fail the test."""
    contexts: list[Any] = []
    ERRORS.clear()

    def open_phones(n: int, size: dict = PHONE, mobile: bool = True) -> list[Any]:
        pages = []
        for _ in range(n):
            ctx = browser.new_context(viewport=size, device_scale_factor=2 if mobile else 1,
                                      is_mobile=mobile, has_touch=mobile)
            contexts.append(ctx)
            pg = ctx.new_page()
            pg.on("pageerror", lambda exc, pg=pg: ERRORS.append(f"{pg.url}: {exc}"))
            pg.on("console", lambda msg, pg=pg: msg.type == "error" and "/api/" not in msg.text
                  and ERRORS.append(f"{pg.url}: {msg.text}"))
            pages.append(pg)
        return pages

    yield open_phones
    for ctx in contexts:
        ctx.close()
    assert not ERRORS, ERRORS


def royale(served: Served, face: str, seed: int = 1) -> None:
    """A new 3-player Royale game with `face` the one tile, beside casino 1; dealt."""
    served.table.new_game(GameConfig("royale", tuple(players(3)),
                                     {"tiles": 1, "tile_pool": [face]}, seed=seed))
    assert served.post("/api/action", {"type": "deal"})[0] == 200


def get_state(served: Served) -> dict:
    with urllib.request.urlopen(served.url + "/api/state", timeout=5) as r:
        return json.loads(r.read())


def turn(served: Served, value: int) -> str:
    """The player to move rolls all their dice showing `value` and places them: the host's
    API, as the table's camera would bring it. Returns who it was."""
    s = get_state(served)
    who = s["to_move"]
    dice = [{"colour": g["colour"], "value": value, "big": g["big"]}
            for g in s["expected_roll"] for _ in range(g["count"])]
    status, body = served.post("/api/action", {"type": "roll", "dice": dice})
    assert status == 200, body
    status, body = served.post("/api/action", {"type": "place", "value": value})
    assert status == 200, body
    return who


def me(page: Any, served: Served, name: str) -> None:
    """Open the scoreboard and pick `name`'s colour under "Me?", as a player does."""
    page.goto(served.url + "/")
    page.wait_for_selector("#live.on")
    page.wait_for_selector(".casino .tile")
    page.click("#me-btn")
    page.click(f"#me-choices button:has-text('{name}')")
    page.wait_for_function(f"() => document.querySelector('#me-name').textContent === {name!r}")


def asked(page: Any, ask: str) -> None:
    """Wait until this phone shows its own question `ask` with its answers."""
    page.wait_for_function(
        "(ask) => { const d = document.querySelector('#decide.mine');"
        " return d && !d.hidden && d.querySelector('.ask').textContent === ask"
        " && d.querySelector('.answer:not([disabled])'); }", arg=ask)


def waits(page: Any, words: str) -> None:
    page.wait_for_function(
        "(w) => { const d = document.querySelector('#decide');"
        " return d && !d.hidden && d.querySelector('.waiting')"
        " && d.querySelector('.waiting').textContent === w; }", arg=words)


def answers(page: Any) -> list[str]:
    return page.locator("#decide .answer").all_inner_texts()


def log_lines(page: Any) -> list[str]:
    return [" ".join(t.split()) for t in page.locator("#log-list > li .t").all_inner_texts()]


def open_log(page: Any) -> None:
    if not page.locator("#log").evaluate("d => d.open"):
        page.click("#log > summary")
    page.wait_for_selector("#log-list > li", state="visible")


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"phone-{name}.png"), full_page=True)


def notices_reach_the_phones(served: Served) -> bool:
    """Whether the state the phones get carries the rules engine's notices (what the tiles
    did), which the log's words about a tile's outcome are made from."""
    s = get_state(served)
    return any(n.get("kind") == "tile" for n in s.get("game_notices") or s.get("notices", []))


def test_lucky_punch_the_hold_on_the_holders_phone_the_guess_on_the_guessers(served, phones):
    royale(served, "A1")
    anna, benno = phones(2)
    me(anna, served, "anna")
    me(benno, served, "benno")
    # The tile lies beside casino 1, named, on both phones.
    for pg in (anna, benno):
        assert pg.locator('.casino[data-casino="1"] .tile .tile-badge').inner_text() == \
            "Lucky Punch"
    assert turn(served, 1) == "anna"

    # The secret hold: only on anna's phone, which says it is secret.
    asked(anna, "secretly take 1, 2 or 3 tokens")
    assert answers(anna) == ["1 in my fist", "2 in my fist", "3 in my fist"]
    assert "only you see this" in anna.locator("#decide .secret-note").inner_text()
    waits(benno, "Waiting: anna decides in secret for Lucky Punch")
    assert benno.locator("#decide .answer").count() == 0
    assert "fist" not in benno.locator("main").inner_text()
    assert benno.locator("#turn .what").inner_text() == "decides for Lucky Punch, in secret"
    for pg in (anna, benno):  # the tile's casino shows it is the one asking
        assert pg.locator('.casino[data-casino="1"] .tile.asking').count() == 1
    shot(anna, "lucky-punch-hold")
    shot(benno, "lucky-punch-waiting")
    for b in anna.locator("#decide .answer").all():
        box = b.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
    anna.click("#decide .answer:has-text('3 in my fist')")

    # The guess: on benno's phone; anna's waits. Nothing on benno's says what anna holds.
    asked(benno, "how many tokens does anna hold?")
    assert answers(benno) == ["Guess 1", "Guess 2", "Guess 3"]
    assert benno.locator("#decide .secret-note").count() == 0
    waits(anna, "Waiting: benno decides for Lucky Punch")
    assert anna.locator("#decide .answer").count() == 0
    benno_text = benno.locator("body").inner_text()
    assert "3 in my fist" not in benno_text and "held 3" not in benno_text
    open_log(benno)
    assert log_lines(benno)[0].startswith("Lucky Punch: anna chose in secret")
    shot(benno, "lucky-punch-guess")
    benno.click("#decide .answer:has-text('Guess 2')")

    # Decided: both phones follow the stream, the question is gone, the log says it all.
    for pg in (anna, benno):
        pg.wait_for_selector("#decide", state="hidden")
        open_log(pg)
        pg.wait_for_function("() => [...document.querySelectorAll('#log-list > li .t')]"
                             ".some(t => t.textContent.includes('benno guessed 2'))")
        lines = log_lines(pg)
        assert lines[0].startswith("Lucky Punch: benno guessed 2"), lines
        assert lines[1].startswith("Lucky Punch: anna chose in secret"), lines
    assert get_state(served)["to_move"] == "benno"
    assert notices_reach_the_phones(served)
    text = " ".join(anna.locator("#log-list").inner_text().split())
    assert "Lucky Punch: benno guessed 2, anna held 3: anna gets $40,000" in text, text
    shot(anna, "lucky-punch-log")


def test_black_box_the_split_and_secret_pile_by_the_splitter_the_pick_by_the_winner(served,
                                                                                     phones):
    royale(served, "G1")
    anna, benno, carla = phones(3)
    me(anna, served, "anna")
    me(benno, served, "benno")
    me(carla, served, "carla")
    for pg in (anna, benno, carla):
        assert pg.locator('.casino[data-casino="1"] .tile').inner_text().startswith("Black Box")
        assert "Six tokens on the tile" in pg.locator('.casino[data-casino="1"] .tile').inner_text()
    # anna wins casino 1; benno and carla take 6 and 5. Then the round ends: benno (to the
    # winner's left) splits the tokens.
    assert [turn(served, v) for v in (1, 6, 5)] == ["anna", "benno", "carla"]

    asked(benno, "split the six tokens into two piles for anna")
    assert answers(benno) == ["3 + 3", "4 + 2", "5 + 1"]
    for pg in (anna, carla):
        waits(pg, "Waiting: benno decides for Black Box")
        assert pg.locator("#decide .answer").count() == 0
    shot(benno, "black-box-split")
    benno.click("#decide .answer:has-text('4 + 2')")

    # The chips token, in secret: still benno's phone.
    asked(benno, "secretly, which pile takes the chips token?")
    assert answers(benno) == ["Chips token in pile 1 (4)", "Chips token in pile 2 (2)"]
    assert "only you see this" in benno.locator("#decide .secret-note").inner_text()
    for pg in (anna, carla):
        waits(pg, "Waiting: benno decides in secret for Black Box")
        assert pg.locator("#decide .answer").count() == 0
    for pg in (anna, benno, carla):
        tile = pg.locator('.casino[data-casino="1"] .tile').inner_text()
        assert "Piles of 4 and 2 tokens, face down" in tile
    shot(benno, "black-box-secret")
    shot(anna, "black-box-waiting")
    benno.click("#decide .answer:has-text('in pile 2')")

    # The winner picks a face-down pile; nothing on their phone says where the chips are.
    asked(anna, "which face-down pile, 1 (4 tokens) or 2 (2)?")
    assert answers(anna) == ["Pile 1 (4 tokens)", "Pile 2 (2 tokens)"]
    assert "chips token in pile" not in anna.locator("body").inner_text().lower()
    waits(benno, "Waiting: anna decides for Black Box")
    shot(anna, "black-box-pick")
    anna.click("#decide .answer:has-text('Pile 2')")

    for pg in (anna, benno, carla):
        pg.wait_for_selector("#decide", state="hidden")
    open_log(carla)
    carla.wait_for_function("() => [...document.querySelectorAll('#log-list > li .t')]"
                            ".some(t => t.textContent.includes('anna chose pile 2'))")
    lines = log_lines(carla)
    tiles = [x for x in lines if x.startswith("Black Box:")]
    assert tiles[0].startswith("Black Box: anna chose pile 2"), lines
    assert tiles[1] == "Black Box: benno chose in secret", lines
    assert tiles[2].startswith("Black Box: benno split the tokens 4 + 2"), lines
    # The round paid out: casino 1's winner got the pile (2 chips and $20,000 from the bank).
    s = get_state(served)
    assert s["round"] == 2
    anna_now = next(p for p in s["players"] if p["name"] == "anna")
    assert anna_now["chips"] == 2 + 2 + 2, anna_now  # 2 a round, twice, and the pile's 2
    shot(carla, "black-box-log")
    assert notices_reach_the_phones(served)
    text = " ".join(carla.locator("#log-list").inner_text().split())
    assert re.search(r"Black Box: anna chose pile 2 \(2 tokens\): anna gets 2 chips and "
                     r"\$20,000", text), text


def test_the_tiles_beside_their_casinos_at_phone_and_laptop_size(served, phones):
    """Every face's counters and tokens in words beside its casino; blank dice as blank dice;
    a closed casino says so. Looked at on a phone and a laptop."""
    royale(served, "F2")  # Handicap puts the blank gray dice into every casino
    phone, = phones(1)
    laptop, = phones(1, LAPTOP, mobile=False)
    for pg in (phone, laptop):
        me(pg, served, "carla")
        tile = pg.locator('.casino[data-casino="1"] .tile').inner_text()
        assert tile.startswith("Handicap") and "1 chip 0/2" in tile, tile
        for c in range(1, 7):
            words = "blank die" if c <= 3 else "blank dice"
            stake = pg.locator(f'.casino[data-casino="{c}"] .stake:has-text("{words}")')
            assert stake.count() == 1
            assert stake.locator("svg.die.blank").count() == 1
            assert stake.locator(".n").inner_text() == ("1" if c <= 3 else "2")
        assert "neutral dice" not in pg.locator("#casinos").inner_text()
    shot(phone, "handicap-phone")
    shot(laptop, "handicap-laptop")
    # Handicap asks anna: taking a blank die, then the picture: anna's phone only.
    assert turn(served, 1) == "anna"
    waits(phone, "Waiting: anna decides for Handicap")
    assert phone.locator("#decide .ask").inner_text() == "take a blank die from a casino?"
    shot(laptop, "handicap-waiting-laptop")


def test_no_entry_closes_a_casino_from_the_players_phone_and_the_page_stays_readable(served,
                                                                                     phones):
    royale(served, "E1")
    anna, carla = phones(2)
    me(anna, served, "anna")
    me(carla, served, "carla")
    assert turn(served, 1) == "anna"
    asked(anna, "close which casino?")
    assert answers(anna) == [f"Close casino {c}" for c in range(2, 7)]
    waits(carla, "Waiting: anna decides for No Entry!")
    assert carla.locator("#decide .ask").inner_text() == "close which casino?"
    # What a player must be able to read and tap: 44 px answers, AA contrast in light and
    # dark, and 200% text that still fits the phone's width.
    for scheme in ("light", "dark"):
        anna.emulate_media(color_scheme=scheme)
        carla.emulate_media(color_scheme=scheme)
        ratios = anna.evaluate(CONTRAST, "#decide .ask, #decide h2 .at, .tile-does, .tile-facts li,"
                                         " .tile-badge, .answers .btn")
        ratios += carla.evaluate(CONTRAST, "#decide .waiting, #decide .ask")
        low = [r for r in ratios if r[2] < 4.5]
        assert ratios and not low, (scheme, low)
    anna.evaluate("document.documentElement.style.fontSize = '200%'")
    anna.wait_for_function("() => parseFloat(getComputedStyle(document.documentElement)"
                           ".fontSize) >= 30")
    assert anna.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
    for b in anna.locator("#decide .answer").all():
        box = b.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
    shot(anna, "no-entry-200")
    anna.evaluate("document.documentElement.style.fontSize = ''")
    anna.emulate_media(color_scheme="light")
    anna.click("#decide .answer:has-text('Close casino 5')")

    for pg in (anna, carla):
        pg.wait_for_selector('.casino.closed[data-casino="5"] .closed-tag')
        tile = pg.locator('.casino[data-casino="1"] .tile').inner_text()
        assert "Casino 5 closed" in tile, tile
        assert "Reward track 1 of 6, next space: no reward" in tile, tile
        open_log(pg)
        pg.wait_for_function("() => [...document.querySelectorAll('#log-list > li .t')]"
                             ".some(t => t.textContent.startsWith('No Entry!: anna closed'))")
        assert log_lines(pg)[0].startswith("No Entry!: anna closed casino 5"), log_lines(pg)
    shot(carla, "no-entry-closed")
    assert notices_reach_the_phones(served)
    assert log_lines(anna)[0] == "No Entry!: anna closed casino 5: anna gets $30,000"
