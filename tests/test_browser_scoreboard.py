"""The scoreboard ("/") in a real browser, at phone (390x844) and laptop (1280x800) size.

What every player sees: the ranking with the gap to the leader and this round's winnings so
far, each casino's payout in words until the next round's first roll, the game log, an
ended game that says so, thumbnails sized for their place, 44 px targets and 200% text.
"""

from __future__ import annotations

import json
import random
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import Deal, GameState, Pass, Place
from scorekeeper.simulate import players
from tests.browsing import LAPTOP, PHONE, Served, serve_table
from tests.test_browser import demo_photo
from web.app import PHOTO_WIDTHS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = {"phone": (PHONE, True), "laptop": (LAPTOP, False)}
ERRORS: list[str] = []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("scoreboard")) as served:
        yield served


@pytest.fixture(params=sorted(SIZES))
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A page at phone or laptop size; script errors on it fail the test."""
    viewport, mobile = SIZES[request.param]
    ctx = browser.new_context(viewport=viewport, device_scale_factor=2 if mobile else 1,
                              is_mobile=mobile, has_touch=mobile)
    pg = ctx.new_page()
    pg.size = request.param
    ERRORS.clear()
    pg.on("pageerror", lambda exc: ERRORS.append(f"{pg.url}: {exc}"))
    pg.on("console", lambda msg: msg.type == "error" and "/api/" not in msg.text
          and ERRORS.append(f"{pg.url}: {msg.text}"))
    yield pg
    ctx.close()
    assert not ERRORS, ERRORS


def new_game(served: Served, edition: str = "classic", seed: int = 4, n: int = 3,
             **options: Any) -> GameState:
    status, body = served.post("/api/game", {
        "edition": edition, "seed": seed, "options": options,
        "players": [{"name": name, "colour": c} for name, c in players(n)]})
    assert status == 200, body
    return served.table.game.state


def step(state: GameState, rng: random.Random) -> Any:
    """The next random legal action, as the camera and the table would bring it."""
    if state.phase == "deal":
        return Deal()
    if state.phase in ("roll", "neutral"):
        return state.random_roll(rng)
    return rng.choice(state.legal_actions())


def play_until(served: Served, done: Any, seed: int) -> None:
    rng = random.Random(seed)
    table = served.table
    while not done(table.game.state):
        table.apply(step(table.game.state, rng))


def deal(served: Served) -> None:
    """The round's money, unless the app dealt it already."""
    if served.table.game.state.phase == "deal":
        served.table.apply(Deal())


def get_state(served: Served) -> dict:
    with urllib.request.urlopen(served.url + "/api/state", timeout=5) as r:
        return json.loads(r.read())


def cash(v: int) -> str:
    return f"${v:,}"


def words(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def open_board(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.wait_for_selector("#live.on")
    page.wait_for_selector(".casino")


def shot(page: Any, name: str) -> None:
    folder = Path(__file__).parent / "screenshots"
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / f"scoreboard-{name}-{page.size}.png"), full_page=True)


# --- the state the page is drawn from ---------------------------------------------------------
@pytest.mark.parametrize("edition, options", [("classic", {}), ("custom", {"skip_rule": "B"}),
                                              ("royale", {})])
def test_the_state_holds_this_rounds_winnings_the_score_parts_and_a_short_log(edition, options):
    g = GameState.new(edition, players(4), options, seed=3)
    rng = random.Random(5)
    while not g.is_over():
        view = g.to_dict()
        for p in view["players"]:
            projected = sum(x["amount"] for c in view["casinos"] for x in c["projected"]
                            if x["player"] == p["name"])
            assert p["round_so_far"] == projected
            assert p["score"] == p["money"] + sum(x["value"] for x in p["score_extras"])
        log = view["log"]
        assert [e["seq"] for e in log] == sorted((e["seq"] for e in log), reverse=True)
        assert all(e["round"] >= g.round - 1 for e in log) and len(log) <= 12
        g.apply_action(step(g, rng))
    assert g.to_dict()["log"][0] == {"seq": g.seq, "round": g.round, "player": None,
                                     "kind": "payout"}


# --- item 3: an ended game ---------------------------------------------------------------------
def test_an_ended_game_says_so_and_its_ranking_and_cards_show_one_figure(served: Served, page):
    new_game(served, "royale", seed=5)
    play_until(served, lambda s: s.round == 2 and s.phase == "choose", seed=2)
    open_board(page, served)
    assert page.locator("#round").inner_text().startswith("Round 2")
    assert served.post("/api/end", {})[0] == 200
    page.wait_for_selector(".final:not([hidden]) .rank li")
    assert page.locator("#round").inner_text() == "Game ended"
    assert "Round" not in page.title()
    assert page.locator("#turn").is_hidden() and page.locator("#pending").is_hidden()
    state = get_state(served)
    chips = {p["name"]: p["chips"] for p in state["players"]}
    assert any(chips.values())
    rows = page.locator("#final .rank li")
    assert rows.count() == 3
    for i in range(rows.count()):
        row = rows.nth(i)
        name = row.locator(".nm").inner_text()
        card = page.locator(f'.player[data-player="{name}"]')
        figure = row.locator(".sc").inner_text()
        assert card.locator(".money").inner_text() == figure
        score = next(p["score"] for p in state["players"] if p["name"] == name)
        assert figure == cash(score)
        if chips[name]:
            said = (f"incl. {chips[name]} unused chip{'s' if chips[name] > 1 else ''} = "
                    f"{cash(10_000 * chips[name])}")
            assert row.locator(".extra").inner_text() == said
            assert card.locator(".extra").inner_text() == said
    shot(page, "ended")
    # Played to its end: over, and still no running round.
    served.post("/api/end", {"ended": False})
    play_until(served, lambda s: s.is_over(), seed=3)
    page.wait_for_function("() => document.querySelector('#round').textContent === 'Game over'")
    assert page.locator("#final h2").inner_text() == "Final ranking"


# --- item 4: who is winning ----------------------------------------------------------------
def test_players_are_ranked_with_the_gap_to_the_leader_and_this_rounds_winnings(served: Served,
                                                                                page):
    new_game(served, "classic", seed=8, n=4)
    play_until(served, lambda s: s.round == 2 and s.seq > 0 and s.phase == "roll"
               and sum(len(c.dice) for c in s.casinos.values()) >= 3, seed=11)
    open_board(page, served)
    state = get_state(served)
    ps = state["players"]
    order = [p["name"] for p in sorted(ps, key=lambda p: -p["score"])]  # stable: seat order
    page.wait_for_selector(".player .rank-badge")
    shown = page.locator(".player").evaluate_all("els => els.map(e => e.dataset.player)")
    assert shown == order
    top = max(p["score"] for p in ps)
    leaders = [p["name"] for p in ps if p["score"] == top]
    assert page.locator(".player").first.locator(".rank-badge").inner_text().endswith("1st")
    for p in ps:
        card = page.locator(f'.player[data-player="{p["name"]}"]')
        place = 1 + sum(q["score"] > p["score"] for q in ps)
        assert card.locator(".rank-badge").inner_text().lstrip("=") == \
            {1: "1st", 2: "2nd", 3: "3rd"}.get(place, f"{place}th")
        gap = card.locator(".gap").inner_text()
        if p["name"] in leaders:
            assert "leader" in gap
        else:
            behind = leaders[0] if len(leaders) == 1 else "the leaders"
            assert gap == f"{cash(top - p['score'])} behind {behind}"
        so_far = p["round_so_far"]
        assert card.locator(".so-far").inner_text() == (
            f"+{cash(so_far)} this round so far" if so_far else "nothing this round so far")
    assert any(p["round_so_far"] for p in ps)
    # One money style on the whole page: "$80,000" on notes, totals, gaps and payouts.
    text = page.locator("main").inner_text()
    assert not re.search(r"\$\d+k", text), text
    figures = re.findall(r"\$[\d,]*\d", text)
    assert figures and all(re.fullmatch(r"\$\d{1,3}(,\d{3})*", f) for f in figures), figures
    shot(page, "ranked")


# --- item 5: the payout moment ---------------------------------------------------------------
def tie_seed(served: Served) -> int:
    """A seed whose random round 1 ends with a casino that paid someone and cancelled a tie."""
    base = served.table.game.state
    for seed in range(200):
        sim = base.clone()
        rng = random.Random(seed)
        while sim.round == 1:
            sim.apply_action(step(sim, rng))
        if any(c["payouts"] and c["cancelled"] for c in sim.round_results[0]["casinos"]):
            return seed
    raise AssertionError("no seed gives a tie next to a payout")


def test_a_payout_is_said_casino_by_casino_until_the_next_rounds_first_roll(served: Served,
                                                                             page):
    new_game(served, "classic", seed=12, n=4)
    seed = tie_seed(served)
    open_board(page, served)
    play_until(served, lambda s: s.round == 2, seed=seed)
    page.wait_for_selector("#summary:not([hidden]) .paid li")
    result = served.table.game.state.round_results[0]
    lines = page.locator("#summary .paid li")
    assert lines.count() == 6
    text = page.locator("#summary").inner_text()
    assert "TIE" not in text and "Round 1 paid out" in text
    assert page.locator("#roll").is_hidden()  # the round's last placement is in the log
    for i, c in enumerate(result["casinos"]):
        line = " ".join(lines.nth(i).inner_text().split())
        assert line.startswith(f"Casino {c['casino']}:")
        paid = ", ".join(f"{p['player']} {cash(p['amount'])}" for p in c["payouts"])
        assert paid in line
        if c["cancelled"]:
            assert f"{words(c['cancelled'])} tied, nothing" in line
            if c["payouts"]:
                assert f"{paid} ({words(c['cancelled'])} tied, nothing)" in line
    shot(page, "payout")
    # Notes are handed out while the next round is dealt: the payout stays.
    deal(served)
    who = served.table.game.state.current_player()
    page.wait_for_function(f"() => document.querySelector('#turn .who').textContent === {who!r}")
    assert page.locator("#summary").is_visible()
    # The next round's first roll puts it away.
    rng = random.Random(1)
    served.table.apply(served.table.game.state.random_roll(rng))
    page.wait_for_selector("#summary", state="hidden")

    # A tap puts it away sooner, and it stays away.
    new_game(served, "classic", seed=12, n=4)
    play_until(served, lambda s: s.round == 2, seed=seed)
    page.wait_for_selector("#summary:not([hidden]) .dismiss")
    page.click("#summary .dismiss")
    assert page.locator("#summary").is_hidden()
    deal(served)
    page.wait_for_function(f"() => document.querySelector('#turn .who').textContent === {who!r}")
    assert page.locator("#summary").is_hidden()

    # The final ranking and the last payout stay until a new game starts.
    play_until(served, lambda s: s.is_over(), seed=seed)
    page.wait_for_selector("#final:not([hidden]) .rank li")
    assert page.locator("#summary").is_visible()
    assert served.post("/api/display", {"hide_money": True})[0] == 200
    page.wait_for_function("() => document.querySelector('#final .rank li')")
    assert page.locator("#final").is_visible()
    served.post("/api/display", {"hide_money": False})
    new_game(served, "classic", seed=13)
    page.wait_for_selector("#final", state="hidden")


# --- item 6: the game log --------------------------------------------------------------------
def test_the_game_log_says_the_last_actions_newest_first(served: Served, page):
    state = new_game(served, "custom", seed=3, skip_rule="A")
    table = served.table
    rng = random.Random(4)
    open_board(page, served)
    deal(served)
    first = state.current_player()
    table.apply(state.random_roll(rng))
    table.apply(Pass())
    second = state.current_player()
    table.apply(state.random_roll(rng))
    value = min(d.value for d in state.roll)
    count = sum(d.value == value for d in state.roll)
    table.apply(Place(value))
    page.wait_for_function("() => document.querySelectorAll('#log-list > li').length === 3")
    items = page.locator("#log-list > li")
    dice = "one die" if count == 1 else f"{count} dice"
    newest = rf"{second} rolled [1-6 ]+ and placed {dice} on casino {value}"
    log_open = page.locator("#log").evaluate("d => d.open")
    if page.size == "phone":
        # Folded on a phone, with the newest action in view; a tap opens it.
        assert not log_open
        assert page.locator("#log-list").is_hidden()
        assert re.fullmatch(newest, page.locator("#log-last").inner_text())
        page.click("#log > summary")
        page.wait_for_selector("#log-list > li", state="visible")
    else:
        assert log_open and page.locator("#log-list").is_visible()
    assert re.fullmatch(newest, items.nth(0).locator(".t").inner_text())
    assert re.fullmatch(rf"{first} rolled [1-6 ]+ and skipped the turn \(paid \$1\)",
                        items.nth(1).locator(".t").inner_text())
    assert items.nth(2).inner_text() == "Round 1: the money is dealt"
    shot(page, "log")
    play_until(served, lambda s: s.round == 2, seed=6)
    page.wait_for_selector("#log-list > li.log-payout")
    newest = page.locator("#log-list > li").first
    # Said once on the page: above while the payout is up, in the log once it is put away.
    assert newest.locator(".t").inner_text() == "Round 1 paid out (see above)"
    assert newest.locator(".paid li").count() == 0
    page.click("#summary .dismiss")
    page.wait_for_selector("#log-list > li.log-payout .paid li")
    assert newest.locator(".t").inner_text() == "Round 1 paid out"
    assert newest.locator(".paid li").count() == 6


# --- item 9: photos sized for their place ------------------------------------------------
def test_a_roll_photo_is_a_thumbnail_and_a_tap_opens_the_whole_photo(served: Served, page):
    state = new_game(served, "classic", seed=9)
    table = served.table
    deal(served)
    table.apply(state.random_roll(random.Random(2)))
    photo, _ = demo_photo(served, tuple(d.colour for d in state.roll),
                          tuple(d.value for d in state.roll), state.roll[0].value)
    full = (served.data_dir / "photos" / photo).stat().st_size
    with table.lock:
        table.last_roll = {"dice": [d.to_dict() for d in state.roll], "photo": photo,
                           "frame": 1}
        table._after_change()
    open_board(page, served)
    page.wait_for_function("() => { const i = document.querySelector('#roll .photo');"
                           " return i && i.complete && i.naturalWidth > 0; }")
    img = page.locator("#roll .photo")
    src = img.get_attribute("src")
    shown = img.evaluate("i => i.getBoundingClientRect().width")
    w = int(re.search(r"[?&]w=(\d+)", src).group(1))
    assert w == min(x for x in PHOTO_WIDTHS if x >= 2 * shown), (w, shown)
    assert img.evaluate("i => i.naturalWidth") <= w < 960
    thumb = len(page.request.get(served.url + src).body())
    assert thumb < full / 2, (thumb, full)
    page.click("#roll .photo-btn")
    page.wait_for_function("() => { const i = document.querySelector('#photo-big');"
                           " return document.querySelector('#photo-dialog').open &&"
                           " i.complete && i.naturalWidth > 0; }")
    big = page.locator("#photo-big")
    assert "w=" not in big.get_attribute("src")
    assert big.evaluate("i => i.naturalWidth") == 960


# --- item 10: targets, labels, contrast, large text ---------------------------------------
CONTRAST = """(sel) => {
  const lum = (rgb) => { const [r, g, b] = rgb.map((v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const parse = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const ground = (el) => { for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); }
    return parse(getComputedStyle(document.body).backgroundColor).slice(0, 3); };
  return [...document.querySelectorAll(sel)]
    .filter((e) => e.checkVisibility() && e.textContent.trim())
    .map((e) => { const a = lum(parse(getComputedStyle(e).color).slice(0, 3)), b = lum(ground(e));
      return [e.className, e.textContent.trim().slice(0, 30),
              (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]; });
}"""

UNCUT = """(sel) => [...document.querySelectorAll(sel)].filter((e) => e.checkVisibility())
  .map((e) => {
  const probe = e.cloneNode(true);
  probe.style.cssText = 'position:absolute;white-space:nowrap;visibility:hidden;width:auto';
  e.parentNode.appendChild(probe);
  const natural = probe.getBoundingClientRect().width;
  probe.remove();
  return [e.textContent, e.getBoundingClientRect().width, natural, e.scrollWidth, e.clientWidth];
})"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_targets_are_44_px_swatches_are_named_text_passes_aa_and_200_percent_fits(
        served: Served, page, scheme: str):
    page.emulate_media(color_scheme=scheme)
    new_game(served, "royale", seed=5, n=4)
    play_until(served, lambda s: s.round == 2, seed=2)
    deal(served)
    st = served.table.game.state
    served.table.apply(st.random_roll(random.Random(3)))
    photo, _ = demo_photo(served, tuple(d.colour for d in st.roll),
                          tuple(d.value for d in st.roll), st.roll[0].value)
    with served.table.lock:
        served.table.last_roll = {"dice": [d.to_dict() for d in st.roll], "photo": photo,
                                  "frame": 1}
        served.table._after_change()
    page.goto(served.url + "/")
    page.wait_for_selector("#roll .photo-btn")
    page.wait_for_selector(".player .rank-badge")
    targets = ["#me-btn", "#roll .photo-btn", "#log > summary", "#earlier summary"]
    for sel in targets:
        box = page.locator(sel).bounding_box()
        assert box and box["height"] >= 44 and box["width"] >= 44, (sel, box)
    # Every colour swatch has its words beside it.
    unnamed = page.locator("main .sw, .bar .sw").evaluate_all(
        "els => els.filter(e => e.checkVisibility()"
        " && !(e.closest('li, .p-top, .turn, .who, button') || e.parentElement).innerText.trim())"
        ".map(e => e.outerHTML)")
    assert not unnamed
    page.click("#me-btn")
    for b in page.locator("#me-choices button").all():
        assert b.bounding_box()["height"] >= 44 and b.inner_text().strip()
    page.click("#me-choices button:has-text('benno')")
    page.wait_for_function("() => document.querySelector('#me-name').textContent === 'benno'")
    ratios = page.evaluate(CONTRAST, ".gap, .so-far, .player .extra, .player .meta > span,"
                                     " .rank-badge, .log-last, .log-more, .log-list .t,"
                                     " .stake .tag, .player .money, .player .nm")
    low = [r for r in ratios if r[2] < 4.5]
    assert ratios and not low, low
    # 200% text: the page still fits its width and no name is cut or broken up.
    page.evaluate("document.documentElement.style.fontSize = '200%'")
    page.wait_for_function("() => parseFloat(getComputedStyle(document.documentElement)"
                           ".fontSize) >= 30")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")
    names = page.evaluate(UNCUT, ".player .nm, .stake .nm, #me-name, .turn .who")
    assert len(names) >= 5
    cut = [n for n in names if n[1] + 1 < n[2] or n[3] > n[4] + 1]
    assert not cut, cut
    shot(page, f"200-{scheme}")
