"""Royale's casino tiles on the host's page (/table), in a real browser at phone size.

Whole rounds of Royale games whose tiles are named with the engine's internal option
`tile_pool` (six faces a round, one per casino, the draws seeded): the test rolls for the
player to move through the API (as the camera would report it), choosing the dice with the
engine's state so that a tile whose decision has not come up yet is activated, and makes
every decision a tile asks on the page, by clicking its buttons; the black dice a tile throws
are entered on the page by hand. A secret decision is not offered on the page: it names the
player's phone, and is answered through POST /api/answer as that phone would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import GameState
from scorekeeper.simulate import players
from scorekeeper.tiles import FACES
from tests.browsing import LAPTOP, PHONE, Served, host_page, serve_table

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/shots")
DECIDING = {"A1", "A2", "B1", "B2", "D2", "E1", "E2", "F1", "F2", "G1", "G2", "H1", "H2"}
"""The faces that ask a player something (High Five, Bad Luck and Pay Day only count)."""
GAMES = [
    ["A1", "B1", "E1", "F1", "G1", "H1"],
    ["A2", "B2", "E2", "F2", "G2", "H2"],
    ["C1", "D2"],
]
"""Three games whose rounds lay out every face with a decision: six tiles at most, and one
face of each tile."""
THROWS = {"A2": [(3, 4)], "B1": [(1, 2)], "B2": [(2, 3), (6, 5)], "H2": [(2, 5)]}
"""The black dice each throw shows, in turn: a Jackpot 7, Prime Time's two casinos, a Fifty
Fifty bet that wins, My Choice's chips or a die turned."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("tiles")) as served:
        yield served


@pytest.fixture
def page(browser, served: Served) -> Iterator[Any]:
    """The host's page at phone size, logged in; script errors on it fail the test."""
    with host_page(browser, served.url, PHONE) as page:
        yield page


def shot(page: Any, name: str, laptop: bool = False) -> None:
    """The page as it is now at phone size, and at laptop size too when `laptop`."""
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"tiles-{name}-390.png"), full_page=True)
    if laptop:
        page.set_viewport_size(LAPTOP)
        page.screenshot(path=str(SHOTS / f"tiles-{name}-1280.png"), full_page=True)
        page.set_viewport_size(PHONE)


def fits(page: Any, selector: str) -> None:
    """Every `selector` is at least 44 px high, inside the phone's width, and the page does
    not scroll sideways."""
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    boxes = page.locator(selector)
    for i in range(boxes.count()):
        b = boxes.nth(i).bounding_box()
        assert b is not None and b["height"] >= 44, (selector, i, b)
        assert b["x"] >= 0 and b["x"] + b["width"] <= PHONE["width"], (selector, i, b)


def new_game(served: Served, faces: list[str], seed: int) -> None:
    status, body = served.post("/api/game", {
        "edition": "royale", "seed": seed,
        "players": [{"name": n, "colour": c} for n, c in players(3)],
        "options": {"tiles": len(faces), "tile_pool": faces}})
    assert status == 200, body


def roll_into(served: Served, st: GameState, target: int) -> None:
    """The player to move rolls so that up to three small dice show `target` (the Biggy only
    once it is the last die: Knockout! asks those who still hold both kinds), and places
    them: through the API, as the camera reports a turn."""
    rest = 6 if target != 6 else 5
    groups = st.to_dict()["expected_roll"]
    smalls = sum(g["count"] for g in groups if not g["big"])
    dice, small = [], 0
    for g in groups:
        for _ in range(g["count"]):
            hit = (not smalls) if g["big"] else small < 3
            small += not g["big"] and hit
            dice.append({"colour": g["colour"], "value": target if hit else rest,
                         "big": g["big"]})
    assert served.post("/api/action", {"type": "roll", "dice": dice})[0] == 200
    status, body = served.post("/api/action", {"type": "place", "value": target})
    assert status == 200, body


def pick(st: GameState, code: str, choices: list[dict[str, Any]], bets: dict[str, int]) -> int:
    """Which button the host taps: something happens where the tile lets it (a die moved, a
    casino closed, a reward taken), and a Fifty Fifty bet once, then the reward."""
    words = [c["choice"] for c in choices]
    payout = {t["casino"] for t in st.to_dict()["tiles"]["casinos"] if t["tile"] in ("B1", "G1")}
    if code == "B2":
        if "higher" in words and not bets.get("B2"):
            bets["B2"] = 1
            return words.index("higher")
        return words.index("take")
    if "casino" in words:
        # No Entry! closes, Block It! fills with blank dice, the highest casino left but
        # those whose winner the payout asks.
        return max(i for i, c in enumerate(choices)
                   if c["choice"] == "casino" and c["value"] not in payout)
    for i, w in enumerate(words):
        if w not in ("keep", "none", "roll"):
            return i
    return 0


def decide_on_the_page(served: Served, page: Any, seen: dict[str, int],
                       bets: dict[str, int]) -> None:
    """The tile decision waiting, made on the page (or on the player's phone when secret)."""
    st = served.table.game.state
    pending = st.to_dict()["tiles"]["pending"][0]
    code, name, who = pending["tile"], pending["name"], pending["player"]
    card = page.locator(f".tile-ask[data-tile='{code}'][data-seq='{st.seq}']")
    card.wait_for()
    text = card.inner_text()
    assert pending["ask"] in text and who in text and f"Casino {pending['casino']}" in text
    colour = next(p.colour for p in st.players if p.name == who)
    assert card.locator(f".whose .sw[aria-label='{colour}']").count() == 1
    first = code not in seen
    seen[code] = seen.get(code, 0) + 1
    if pending["roll"]:
        throws = THROWS.get(code, [(1, 3)])
        a, b = throws[min(bets.get(code + "-throw", 0), len(throws) - 1)]
        bets[code + "-throw"] = bets.get(code + "-throw", 0) + 1
        assert card.locator("[data-act=roll]").is_disabled()
        for v in (a, b):
            card.locator(f"[data-act=inc][data-k='black'][data-v='{v}']").click()
        if first:
            fits(page, ".tile-ask [data-act=roll], .tile-ask .stepper button")
            shot(page, f"{code}-throw", laptop=code == "A2")
        with page.expect_response("**/api/action") as r:
            card.locator("[data-act=roll]").click()
        assert r.value.status == 200
        return
    if pending["secret"]:
        assert card.locator("[data-act=tile]").count() == 0  # nothing to tap for the table
        secret = card.locator(".secret").inner_text()
        assert f"{who} chooses on their own phone" in secret
        assert "Me?" in secret and colour in secret
        if first:
            shot(page, f"{code}-secret", laptop=True)
        choice = pending["choices"][0]
        status, body = served.post("/api/action", {"type": "tile", **choice, "player": who})
        assert status == 403 and name in body["error"], body
        status, body = served.post("/api/answer", {
            "player": who, "tile": code, "choice": choice["choice"],
            "value": choice.get("value")})
        assert status == 200, body
        return
    buttons = card.locator("[data-act=tile]")
    labels = [c["label"] for c in pending["choices"]]
    assert [t.strip() for t in buttons.all_inner_texts()] == labels
    if first:
        fits(page, ".tile-ask [data-act=tile]")
        shot(page, code, laptop=code in ("F2", "H2", "E1"))
    i = pick(st, code, pending["choices"], bets)
    with page.expect_response("**/api/action") as r:
        buttons.nth(i).click()
    assert r.value.status == 200, r.value.json()


def target_for(st: GameState, seen: dict[str, int]) -> int:
    """The casino to place in: one whose tile has not asked yet (Power Play's left alone
    while someone holds its token, so that its offer comes on their next turn); then the
    start player crowds Prime Time's and Black Box's casinos, whose winner they ask at the
    payout, and the others keep out of them."""
    tiles = st.to_dict()["tiles"]["casinos"]
    closed = {t["closed"] for t in tiles if t.get("closed")}
    open_ = [c for c in range(1, 7) if c not in closed]
    for t in tiles:
        if t["tile"] in DECIDING - {"B1", "G1"} and t["tile"] not in seen \
                and t["casino"] in open_ and not (t["tile"] == "D2" and t.get("token")):
            return int(t["casino"])
    payout = [t["casino"] for t in tiles if t["tile"] in ("B1", "G1") and t["casino"] in open_]
    first = st.players[0]
    if st.player_to_act() == first.name and payout:
        mine = {c["casino"]: c["weights"].get(first.name, 0) for c in st.to_dict()["casinos"]}
        return int(min(payout, key=lambda c: mine[c]))
    rest = [c for c in open_ if c not in payout and not any(
        t["casino"] == c and t["tile"] == "D2" and t.get("token") for t in tiles)]
    return (rest or open_)[-1]


def play_round(served: Served, page: Any, seen: dict[str, int]) -> None:
    """One round to its payout, every tile decision made on the page."""
    table = served.table
    start = table.game.state.round
    bets: dict[str, int] = {}
    for _ in range(400):
        st = table.game.state
        if st.round != start or st.is_over():
            return
        if st.phase == "tile":
            decide_on_the_page(served, page, seen, bets)
            if st.to_dict()["tiles"]["pending"] == []:
                bets.pop("B2", None)
        elif st.phase == "roll":
            bets.pop("B2", None)
            bets.pop("B2-throw", None)
            roll_into(served, st, target_for(st, seen))
        else:
            raise AssertionError(f"unexpected phase {st.phase}")
    raise AssertionError("the round never ended")


def test_every_tiles_decision_is_made_on_the_hosts_page(served: Served, page: Any):
    seen: dict[str, int] = {}
    for seed, faces in enumerate(GAMES, 11):
        new_game(served, faces, seed)
        page.wait_for_selector("#casinos .casinos-card")
        laid = served.table.game.state.to_dict()["tiles"]["casinos"]
        casinos = page.locator("#casinos .hcasino .ctile")
        assert casinos.count() == len({f[0] for f in faces}) == len(laid)
        for t in laid:
            line = page.locator(f"#casinos .hcasino[data-casino='{t['casino']}'] .ctile")
            assert FACES[t["tile"]] in line.inner_text()
        shot(page, f"casinos-{seed}", laptop=seed == 11)
        play_round(served, page, seen)
    missing = sorted(DECIDING - set(seen))
    assert not missing, f"no decision came up for {[FACES[c] for c in missing]}"


def black_refused(page: Any) -> bool:
    """Whether every player's colour list refuses black."""
    return bool(page.evaluate("""() => [...document.querySelectorAll('#players-edit .pcolour')]
        .every((s) => [...s.options].some((o) => o.value === 'black' && o.disabled))"""))


def test_the_new_game_form_sets_the_tiles_up(served: Served, page: Any):
    page.click(".tabs [data-tab=game]")
    page.check("input[name=edition][value=royale]", force=True)
    page.wait_for_selector("#opt-tiles")
    assert page.locator("#opt-tiles").input_value() == "3"  # the main game
    note = page.locator("#tiles-note").inner_text()
    assert "black" in note and "no player's dice" in note and "gray" in note
    assert "blank dice" in note
    # Black is nobody's colour with the tiles: the colour lists refuse it.
    assert black_refused(page)
    page.select_option("#opt-tiles", "0")
    page.wait_for_selector("#tiles-note", state="hidden")
    assert page.locator("#opt-used-field").is_hidden()
    assert not black_refused(page)
    page.select_option("#opt-tiles", "5")
    page.wait_for_selector("#opt-used-field", state="visible")
    page.select_option("#opt-used", "aside")
    fits(page, "#opt-tiles, #opt-used")
    shot(page, "new-game-form", laptop=True)
    old = served.table.game.id
    page.click("#start-game")
    # A game in progress is asked about first (it stays saved).
    page.wait_for_selector("#ask[open], #tab-play:not([hidden])")
    if page.locator("#ask[open]").count():
        page.click("#ask-ok")
    page.wait_for_selector("#tab-play:not([hidden]) #casinos .casinos-card")
    st = served.table.game.state
    assert served.table.game.id != old and st.edition.key == "royale"
    assert st.edition.options["tiles"] == 5 and st.edition.options["used_tiles"] == "aside"
    assert page.locator("#casinos .hcasino .ctile").count() == 5
