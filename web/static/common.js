/* Shared by every page: the live connection, dice drawing, money, small UI helpers.
   Plain browser JavaScript, no build step and nothing from outside the Pi. */
"use strict";
const VT = (() => {
  const PIPS = {
    1: [[12, 12]], 2: [[7, 7], [17, 17]], 3: [[7, 7], [12, 12], [17, 17]],
    4: [[7, 7], [17, 7], [7, 17], [17, 17]], 5: [[7, 7], [17, 7], [12, 12], [7, 17], [17, 17]],
    6: [[7, 7], [7, 12], [7, 17], [17, 7], [17, 12], [17, 17]],
  };
  const KNOWN = new Set(["red", "blue", "green", "yellow", "purple", "orange", "pink", "black",
    "white", "gray", "grey", "brown", "teal"]);
  const COLOURS = ["red", "blue", "green", "yellow", "purple", "orange", "pink", "black", "white", "gray"];
  const MAP = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => MAP[c]);
  const cc = (colour) => "c-" + (KNOWN.has(colour) ? colour : "x");
  const $ = (sel, root = document) => root.querySelector(sel);

  /** One die as inline SVG: the value's pips in the die's colour ("?" when unread; value 0
      is a blank die, Royale's gray dice that have no pips at all). */
  function die(value, colour, extra = "") {
    const pips = (PIPS[value] || []).map(([x, y]) => `<circle class="p" cx="${x}" cy="${y}" r="2.3"/>`).join("");
    const unknown = PIPS[value] || value === 0 ? "" : '<text x="12" y="16.5" text-anchor="middle">?</text>';
    const label = `${PIPS[value] ? value : value === 0 ? "blank" : "unread"}${colour ? " " + colour : ""}`;
    return `<svg class="die ${cc(colour)} ${extra}" viewBox="0 0 24 24" role="img" aria-label="${esc(label)}">` +
      `<rect class="f" x="1" y="1" width="22" height="22" rx="5"/>${pips}${unknown}</svg>`;
  }
  /** Dice as a roll is read out: by value, unread ones (null) last. */
  const byFace = (dice) => [...dice].sort((a, b) => (a.value || 7) - (b.value || 7) || (a.colour > b.colour ? 1 : a.colour < b.colour ? -1 : 0));
  // A colour patch says its colour to a screen reader too: a colour alone tells nothing to
  // someone who cannot see it or tell it from its neighbour.
  const sw = (colour, extra = "") => `<span class="sw ${cc(colour)} ${extra}" role="img" aria-label="${esc(colour)}" title="${esc(colour)}"></span>`;

  /** "$60k" for a note, "$120,000" for a total; Custom's playing cards are small numbers. */
  function money(v, full = false) {
    if (v === null || v === undefined) return "—";
    if (!full && v >= 1000 && v % 1000 === 0) return `$${v / 1000}k`;
    return "$" + Number(v).toLocaleString("en-US");
  }

  /** Colour of a name in the casinos: a player's colour, or the neutral player's own name. */
  function colourOf(s, name) {
    const p = (s.players || []).find((q) => q.name === name);
    return p ? p.colour : name;
  }

  /** The banner on every page: what stops the table from working as it should is news for
      everyone at it, with the way back. A camera that is lost, closed or failing (dice can
      still be entered by hand on /table), a full storage (nothing is saved until space is
      freed), a damaged file set aside at start, and a profile that could not be used (the
      camera then reads with the built-in colours). */
  function banner(s) {
    const b = $("#banner");
    if (!b) return;
    const page = document.body.className;
    const lines = [];
    const cam = s.camera || {};
    const byHand = page.includes("page-table") ? "Enter the rolls by hand below."
      : '<a href="/table">Enter rolls by hand</a>';
    if (cam.state === "lost" || cam.state === "error" || cam.state === "closed") {
      const what = { lost: "Camera lost.", error: "Camera error.", closed: "Camera stopped." }[cam.state];
      lines.push(`<b>${what}</b> ${esc(cam.message || "")} ${byHand}`);
    }
    const st = s.storage || {};
    if (st.full) lines.push("<b>Storage full.</b> Nothing new can be saved, so moves are refused: free some space and play resumes by itself.");
    // The table's own notices have a message; what the rules tell (a tile's doings) is the
    // game log's, not news for the banner.
    for (const n of (s.notices || []).filter((x) => x.message)) {
      lines.push(`<b>Saved games.</b> ${esc(n.message)}` +
        (page.includes("page-table") ? ` <button class="btn ghost small" type="button" data-notice="${Number(n.id)}">OK</button>` : ""));
    }
    const c = s.calibration || {};
    if (c.error) {
      lines.push(`<b>Camera uncalibrated.</b> ${esc(c.error)} ` +
        (page.includes("page-calibrate") ? "" : '<a href="/calibrate">Calibrate</a>'));
    }
    const html = lines.map((l) => `<p>${l}</p>`).join("");
    b.hidden = !lines.length;
    if (b.innerHTML !== html) b.innerHTML = html;
  }
  document.addEventListener("click", async (e) => {
    const btn = e.target.closest && e.target.closest("[data-notice]");
    if (!btn) return;
    const r = await api("/api/notices/dismiss", { id: Number(btn.dataset.notice) });
    if (!r.ok) toast(r.data.error || "that did not work", true);
  });

  // The server ends each live stream after a while and the browser reopens it in about 2 s:
  // only a gap longer than that is news for the people at the table.
  const OFFLINE_AFTER_MS = 4000;

  /** Live state by Server-Sent Events; reconnects by itself and re-syncs on every (re)open.
      While it is down for longer than a blink, a banner in the header says so in words. */
  function live(url, onState) {
    let es = null;
    let timer = null;
    let backoff = 1000;
    let offlineTimer = null;
    let wasLive = false;
    const dot = $("#live");
    const offline = $("#offline");
    const say = (on) => {
      if (!offline) return;
      const text = on ? "" : (wasLive
        ? "Reconnecting… <span>The live scores stopped coming. This page catches up by itself when the table is back.</span>"
        : "Connecting to the table… <span>Is this phone on the table's Wi-Fi?</span>");
      if (offline.innerHTML !== text) offline.innerHTML = text;
    };
    const mark = (on) => {
      if (dot) {
        dot.classList.toggle("on", on);
        dot.querySelector(".live-text").textContent = on ? "live" : (wasLive ? "reconnecting" : "connecting");
        dot.title = on ? "live" : "reconnecting";
      }
      if (on) {
        wasLive = true;
        clearTimeout(offlineTimer);
        offlineTimer = null;
        say(true);
      } else if (offlineTimer === null) {
        offlineTimer = setTimeout(() => say(false), OFFLINE_AFTER_MS);
      }
    };
    mark(false);
    function open() {
      clearTimeout(timer);
      if (es) es.close();
      es = new EventSource(url());
      es.addEventListener("state", (e) => {
        backoff = 1000;
        mark(true);
        let s;
        try { s = JSON.parse(e.data); } catch (err) { return; }
        banner(s);
        onState(s);
      });
      es.onerror = () => {
        mark(false);
        if (es.readyState === EventSource.CLOSED) {
          timer = setTimeout(open, backoff);
          backoff = Math.min(backoff * 2, 15000);
        }
      };
    }
    // A phone that slept may hold a dead connection without knowing: start afresh.
    document.addEventListener("visibilitychange", () => { if (!document.hidden) open(); });
    window.addEventListener("online", open);
    window.addEventListener("pageshow", (e) => { if (e.persisted) open(); });
    open();
    return { reopen: open };
  }

  /** POST JSON to the API; resolves to {ok, status, data} and never throws. */
  async function api(path, body = {}) {
    try {
      const r = await fetch(path, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body), credentials: "same-origin",
      });
      let data = {};
      try { data = await r.json(); } catch (e) { /* not JSON */ }
      return { ok: r.ok, status: r.status, data };
    } catch (e) {
      return { ok: false, status: 0, data: { error: "the table cannot be reached" } };
    }
  }

  let toastTimer = null;
  function toast(msg, bad = false) {
    const t = $("#toast");
    if (!t) return;
    t.textContent = msg;
    t.classList.toggle("bad", bad);
    t.classList.add("show");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => t.classList.remove("show"), bad ? 4500 : 2200);
  }

  /** Keep the phone's screen on: the Wake Lock API where the page may use it, else a muted
      looping video (plain http on the table's network is not a "secure context"). */
  function keepAwake() {
    let lock = null;
    let video = null;
    async function ask() {
      if (document.hidden) return;
      if ("wakeLock" in navigator) {
        try {
          if (!lock || lock.released) lock = await navigator.wakeLock.request("screen");
          return;
        } catch (e) { /* refused: try the video below */ }
      }
      if (!video) {
        video = document.createElement("video");
        video.setAttribute("playsinline", "");
        video.muted = true;
        video.loop = true;
        video.className = "awake";
        video.src = document.body.dataset.awake || "/static/awake.webm";
        document.body.appendChild(video);
      }
      if (video.paused) video.play().catch(() => {});
    }
    document.addEventListener("visibilitychange", ask);
    document.addEventListener("click", ask, { passive: true });
    if ("wakeLock" in navigator) ask();
  }

  /** What the rules engine told about the game (Royale's tiles: draws, tokens, money), oldest
      first: the session keeps them apart from its own notices, which are the banner's. */
  const gameNotices = (s) => s.game_notices || (s.notices || []).filter((n) => n.kind);

  return { esc, cc, sw, die, gameNotices, byFace, money, colourOf, live, api, toast, keepAwake, $, COLOURS, KNOWN };
})();
