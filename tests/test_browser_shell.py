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
from pathlib import Path
from typing import Any

import pytest

from scorekeeper import Deal, Place
from scorekeeper.simulate import players
from tests.browsing import LAPTOP, PHONE, PIN, Served, serve_table

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path("/tmp/shell")
SIZES = [pytest.param(PHONE, id="phone"), pytest.param(LAPTOP, id="laptop")]
# A real table: a turn (throw, count, decide, place) takes about 15 s, so about 4 rolls a
# minute. The test plays faster than that; what it measures is the bytes of each roll.
ROLLS_PER_MINUTE = 4
FIRST_LOAD_MAX = 100_000
MINUTE_MAX = 300_000





@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_table(tmp_path_factory.mktemp("shell")) as served:
        yield served


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
            and "ERR_" not in msg.text and "SERVICE UNAVAILABLE" not in msg.text
            and ERRORS.append(f"{page.url}: {msg.text}"))
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


# --- accessibility ---------------------------------------------------------------------------
CONTRAST_JS = """() => {
  // Every piece of visible text against the colour actually behind it (backgrounds with
  // alpha laid over their parents'), as WCAG 2 computes contrast.
  const parse = (s) => {
    let m = s.match(/rgba?\\(([^)]+)\\)/);
    if (m) { const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
             return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; }
    m = s.match(/color\\(srgb ([^)]+)\\)/);
    if (m) { const p = m[1].split(/[ /]+/).filter(Boolean).map(Number);
             return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1]; }
    return null;
  };
  const over = (top, under) =>
    [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => {
    const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const out = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const t = walker.currentNode;
    const el = t.parentElement;
    if (!t.textContent.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    // not text to read: hidden, drawn on a photo, or a control that is switched off
    const skip = "[hidden], svg, dialog:not([open]), option, .photo-wrap, button:disabled";
    if (el.closest(skip)) continue;
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    if (!r.width || !r.height || cs.visibility === "hidden") continue;
    let alpha = 1;
    for (let e = el; e; e = e.parentElement) alpha *= Number(getComputedStyle(e).opacity);
    if (alpha === 0) continue;
    const fg = parse(cs.color);
    if (!fg) continue;
    const bg = behind(el);
    const got = ratio(over([fg[0], fg[1], fg[2], fg[3] * alpha], bg), bg);
    const size = parseFloat(cs.fontSize);
    const large = size >= 24 || (Number(cs.fontWeight) >= 700 && size >= 18.66);
    const need = large ? 3 : 4.5;
    if (got < need - 0.005) {
      const what = `${el.tagName.toLowerCase()}.${String(el.className)}`;
      out.push(`${t.textContent.trim().slice(0, 30)} (${what}): ${got.toFixed(2)} < ${need}`);
    }
  }
  return out;
}"""

TARGETS_JS = """(sel) => [...document.querySelectorAll(sel)].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && !e.closest('[hidden]');
  }).map((e) => {
    const r = e.getBoundingClientRect();
    return [e.textContent.trim().slice(0, 20) || e.className, Math.round(r.width),
            Math.round(r.height)];
  })"""


def css_colours(scheme: str) -> dict[str, str]:
    import re

    css = (Path(__file__).resolve().parent.parent / "web" / "static" / "app.css").read_text()
    light = css[css.index(":root {"):css.index("@media (prefers-color-scheme: dark)")]
    dark = css[css.index("@media (prefers-color-scheme: dark)"):css.index("/* Dice colours")]
    out = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", light))
    if scheme == "dark":
        out.update(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", dark))
    return out


def contrast(a: str, b: str) -> float:
    def lum(hexa: str) -> float:
        h = hexa.lstrip("#")
        h = "".join(c * 2 for c in h) if len(h) == 3 else h
        rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    x, y = lum(a), lum(b)
    return (max(x, y) + 0.05) / (min(x, y) + 0.05)


# Which text colour the stylesheet sets on which background (WCAG AA: 4.5:1 for text).
TEXT_ON = [(fg, bg) for fg in ("text", "muted", "accent", "gold", "danger", "win")
           for bg in ("bg", "surface", "surface2")] + [
    ("on-accent", "accent"), ("on-gold", "gold"), ("on-danger", "danger"),
    ("note-fg", "note-bg"), ("warn-fg", "warn-bg"), ("bg", "text")]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_colour_of_the_stylesheet_reads_at_aa_contrast(scheme: str) -> None:
    colours = css_colours(scheme)
    low = {f"{fg} on {bg}": round(contrast(colours[fg], colours[bg]), 2) for fg, bg in TEXT_ON
           if contrast(colours[fg], colours[bg]) < 4.5}
    assert not low, low


def open_pages(page, served: Served) -> Iterator[str]:
    """The scoreboard, the camera page, and the host's pages as they open (the PIN form)."""
    for path, ready in (("/", ".casino .stake"), ("/camera", ".stat"), ("/calibrate", "#login"),
                        ("/table", "#login")):
        page.goto(served.url + path)
        page.wait_for_selector(ready)
        page.wait_for_selector("#live.on")
        yield path


def game_under_way(served: Served, seed: int = 11, rolls: int = 6) -> None:
    start_game(served, seed)
    rng = random.Random(seed)
    for _ in range(rolls):
        camera_roll(served, rng)
        place(served, rng)
    camera_roll(served, rng)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES)
def test_text_on_the_pages_reads_at_aa_contrast(served: Served, browser, size, scheme) -> None:
    game_under_way(served)
    ctx, page = page_at(browser, size, scheme)
    low: dict[str, list[str]] = {}
    for path in open_pages(page, served):
        page.screenshot(path=str(SHOTS / f"{path.strip('/') or 'scoreboard'}-{scheme}-"
                                          f"{size_name(size)}.png"), full_page=True)
        got = page.evaluate(CONTRAST_JS)
        if got:
            low[path] = got
    assert not low, low
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_everything_in_the_header_is_a_44px_target(served: Served, browser, size) -> None:
    game_under_way(served, seed=12, rolls=1)
    ctx, page = page_at(browser, size)
    small: dict[str, list] = {}
    for path in open_pages(page, served):
        targets = page.evaluate(TARGETS_JS, "header a, header button, header input, "
                                            "header select, main .btn")
        assert targets, path
        if any(w < 44 or h < 44 for _, w, h in targets):
            small[path] = [t for t in targets if t[1] < 44 or t[2] < 44]
    # the calibration page's colour chips, once unlocked
    page.goto(served.url + "/calibrate")
    page.fill("#pin", PIN)
    page.click("#login-form button")
    page.wait_for_selector(".cal-chip")
    chips = page.evaluate(TARGETS_JS, ".cal-chip, #cal .btn")
    if any(w < 44 or h < 44 for _, w, h in chips):
        small["/calibrate chips"] = chips
    # the host page's tabs
    page.goto(served.url + "/table")
    page.wait_for_selector("#host:not([hidden]) .tabs button")
    tabs = page.evaluate(TARGETS_JS, ".tabs button, header a")
    if any(w < 44 or h < 44 for _, w, h in tabs):
        small["/table tabs"] = tabs
    assert not small, small
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_keyboard_focus_is_always_visible(served: Served, browser, size) -> None:
    ctx, page = page_at(browser, size)
    page.goto(served.url + "/camera")
    page.wait_for_selector("#live.on")
    seen = []
    for _ in range(3):  # the brand, then the page's links
        page.keyboard.press("Tab")
        seen.append(page.evaluate("""() => { const e = document.activeElement;
            const s = getComputedStyle(e);
            return [e.textContent.trim(), s.outlineStyle, parseFloat(s.outlineWidth)]; }"""))
    assert all(style != "none" and width >= 2 for _, style, width in seen), seen
    assert [t for t, _, _ in seen][1:] == ["Table", "Calibrate"]
    ctx.close()


def large_text(ctx, page, scale: float = 2.0) -> None:
    """The reader's own text size set to 200%, as in the phone's or browser's settings."""
    cdp = ctx.new_cdp_session(page)
    cdp.send("Page.enable")
    cdp.send("Page.setFontSizes", {"fontSizes": {"standard": int(16 * scale),
                                                 "fixed": int(13 * scale)}})


OVERFLOW_JS = """() => {
  const w = document.documentElement.clientWidth;
  const bar = document.querySelector('header.bar');
  const out = [];
  const sw = document.documentElement.scrollWidth;
  if (sw > w + 1) out.push('page is wider than the screen: ' + sw);
  if (bar.scrollWidth > bar.clientWidth + 1) out.push('header overflows');
  for (const e of bar.querySelectorAll('a, button, .round, .live, .brand span, #me-name')) {
    const r = e.getBoundingClientRect();
    if (!r.width) continue;
    if (r.right > w + 1 || r.left < -1) out.push('off screen: ' + e.textContent.trim());
    const clips = getComputedStyle(e).overflow === 'hidden';
    if (clips && e.scrollWidth > e.clientWidth + 1) out.push('cut: ' + e.textContent.trim());
  }
  return out;
}"""


@pytest.mark.parametrize("size", SIZES)
def test_the_header_still_works_at_200_percent_text(served: Served, browser, size) -> None:
    game_under_way(served, seed=13, rolls=1)
    ctx, page = page_at(browser, size)
    large_text(ctx, page)
    problems: dict[str, list[str]] = {}
    for path in open_pages(page, served):
        assert page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)") >= 31
        if path == "/":  # this phone is carla's: her name in the header, whole
            page.click("#me-btn")
            page.click("#me-choices button:has-text('carla')")
            page.wait_for_function("() => document.querySelector('#me-name').textContent"
                                   " === 'carla'")
        page.screenshot(path=str(SHOTS / f"{path.strip('/') or 'scoreboard'}-200pct-"
                                          f"{size_name(size)}.png"))
        got = page.evaluate(OVERFLOW_JS)
        if got:
            problems[path] = got
        # the header leaves most of the screen to the page
        bar = page.locator("header.bar").bounding_box()
        assert bar["height"] <= size["height"] * 0.4, (path, bar)
    assert not problems, problems
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_phone_that_loses_the_table_says_so_in_words(served: Served, browser, size) -> None:
    game_under_way(served, seed=14, rolls=1)
    ctx, page = page_at(browser, size)
    page.goto(served.url + "/")
    page.wait_for_selector("#live.on")
    status = page.locator("#offline")
    assert status.get_attribute("role") == "status"
    assert status.get_attribute("aria-live") == "polite"
    assert not status.is_visible()
    settings = served.app.extensions["settings"]
    ctx.route("**/api/events*", lambda route: route.abort())  # the Wi-Fi is gone
    settings.stream_max = 0.2  # and with it the stream this phone had open
    try:
        page.wait_for_function("() => document.querySelector('#offline').textContent"
                               ".startsWith('Reconnecting')", timeout=20000)
        assert status.is_visible()
        page.screenshot(path=str(SHOTS / f"reconnecting-{size_name(size)}.png"))
        box = status.bounding_box()
        assert box["y"] + box["height"] <= size["height"]  # in the header, on screen
        # still in sight further down the page
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        box = status.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], box
    finally:
        settings.stream_max = 600.0
        ctx.unroute("**/api/events*")
    page.wait_for_selector("#live.on", timeout=20000)
    page.wait_for_function("() => document.querySelector('#offline').textContent === ''")
    assert not status.is_visible()
    ctx.close()
