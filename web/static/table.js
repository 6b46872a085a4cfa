/* The host's page: set up games, deal, confirm what the camera doubts, enter rolls by hand,
   undo, end the game, keep saved games, and look back at every action. Needs the table PIN
   once. */
"use strict";
(() => {
  const { esc, sw, die, money, $, api, toast } = VT;
  let S = null;
  let tab = "play";
  let playKey = "";
  let draft = { key: "", roll: {}, deal: null, fix: {} };
  let histSeq = -1;
  let histGame = null;  // a saved game whose history the History tab shows, else the current one
  let editions = null;  // the rules' limits per edition (/api/editions)
  const dollars = (v) => money(v, true);

  // --- login ---------------------------------------------------------------------------
  function showHost(on) {
    $("#login").hidden = on;
    $("#host").hidden = !on;
    $("#dock").hidden = !on;
    if (on) setTimeout(() => { if (S) render(S); if (tab === "game") loadGames(); }, 0);
    else $("#pin").focus();
  }
  async function call(path, body, method = "POST") {
    const r = method === "POST" ? await api(path, body) : await send(path, body, method);
    if (r.status === 401) { showHost(false); toast("Enter the table PIN first", true); }
    else if (!r.ok) toast(r.data.error || `error ${r.status}`, true);
    return r;
  }
  async function send(path, body, method) {
    try {
      const r = await fetch(path, { method, headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body || {}), credentials: "same-origin" });
      let data = {};
      try { data = await r.json(); } catch (e) { /* not JSON */ }
      return { ok: r.ok, status: r.status, data };
    } catch (e) {
      return { ok: false, status: 0, data: { error: "the table cannot be reached" } };
    }
  }
  async function getJson(path) {
    try {
      const r = await fetch(path, { credentials: "same-origin" });
      const data = await r.json();
      if (r.status === 401) showHost(false);
      return { ok: r.ok, status: r.status, data };
    } catch (e) {
      return { ok: false, status: 0, data: { error: "the table cannot be reached" } };
    }
  }
  $("#login-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await api("/api/login", { pin: $("#pin").value });
    $("#login-err").textContent = r.ok ? "" : (r.data.error || "that did not work");
    if (r.ok) { $("#pin").value = ""; showHost(true); }
  });
  $("#logout").addEventListener("click", async () => { await api("/api/logout"); showHost(false); });
  fetch("/api/whoami", { credentials: "same-origin" }).then((r) => r.json())
    .then((w) => showHost(!!w.host)).catch(() => showHost(false));

  // Nothing of the page may stay under the fixed Undo/Scoreboard bar: the page ends with
  // room as tall as the bar.
  const dock = $("#dock");
  const fitDock = () => document.body.style.setProperty("--dock-h", `${Math.ceil(dock.getBoundingClientRect().height)}px`);
  if (window.ResizeObserver) new ResizeObserver(fitDock).observe(dock);
  window.addEventListener("resize", fitDock);

  // --- a question that waits for an answer (in place of the browser's confirm) ---------
  function ask(title, text, ok, danger = false) {
    const d = $("#ask");
    $("#ask-title").textContent = title;
    $("#ask-text").textContent = text;
    const yes = $("#ask-ok");
    yes.textContent = ok;
    yes.className = "btn wide " + (danger ? "danger" : "primary");
    d.returnValue = "";
    d.showModal();
    return new Promise((resolve) => {
      d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    });
  }

  // --- photos: small where they are small, the whole photo on a tap ----------------------
  const WIDTHS = [80, 160, 240, 320, 480, 640, 800, 960, 1280, 1600];
  /** The photo's address at the width that fills `css` pixels on this screen; `key` names the
      roll a live photo belongs to (a photo of a roll that was then ignored can be replaced). */
  function photoUrl(name, css = 0, key = "") {
    let url = "/api/photo/" + name.split("/").map(encodeURIComponent).join("/");
    const q = [];
    if (css) {
      const want = css * (window.devicePixelRatio || 1);
      q.push("w=" + (WIDTHS.find((w) => w >= want) || WIDTHS[WIDTHS.length - 1]));
    }
    if (key) q.push("k=" + encodeURIComponent(key));
    return q.length ? `${url}?${q.join("&")}` : url;
  }
  const mainWidth = () => Math.min(window.innerWidth, 1600) * (window.innerWidth >= 1000 ? 0.5 : 1);
  function showPhoto(src) {
    $("#photo-full").src = src;
    $("#photo-view").showModal();
  }
  $("#photo-view").addEventListener("click", () => $("#photo-view").close());
  document.addEventListener("click", (e) => {
    const el = e.target.closest && e.target.closest("[data-full]");
    if (el) { e.preventDefault(); showPhoto(el.dataset.full); }
  });

  // --- tabs ----------------------------------------------------------------------------
  document.querySelectorAll(".tabs button").forEach((b) => b.addEventListener("click", () => {
    if (b.dataset.tab === "history") histGame = null;  // the tab itself shows the game at the table
    setTab(b.dataset.tab);
  }));
  function setTab(name) {
    tab = name;
    document.querySelectorAll(".tabs button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
    for (const t of ["play", "game", "history"]) $(`#tab-${t}`).hidden = t !== name;
    if (name === "history") loadHistory();
    if (name === "game" && S) { renderGame(S); loadGames(); }
    window.scrollTo(0, 0);
  }

  VT.live(() => "/api/events", (s) => {
    const switched = S && S.game_id !== s.game_id;
    S = s;
    render(s);
    if (switched && tab === "game") loadGames();
  });

  const player = (s, name) => s.players.find((p) => p.name === name);
  const ended = (s) => s.display && s.display.ended;
  const names = (list) => list.length < 2 ? list.join("") : `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;

  function render(s) {
    if ($("#host").hidden) return;
    if (draft.key !== `${s.game_id}/${s.seq}`) {
      draft = { key: `${s.game_id}/${s.seq}`, roll: {}, deal: null, fix: {} };
    }
    const key = JSON.stringify([s.game_id, s.seq, s.phase, s.pending, s.display, s.legal, s.expected_roll, s.over, s.last_roll && s.last_roll.photo, s.roll_held, s.tiles]);
    if (key !== playKey) { playKey = key; renderPlay(s); }
    renderStatus(s);
    if (tab === "game") renderGameCurrent(s);
    if (tab === "history" && !histGame && s.seq !== histSeq) loadHistory();
  }

  /** Who leads the standings as this page may see them ("" when it cannot tell). */
  function leadLine(s) {
    const rank = (s.results && s.results.ranking) || (s.results_now && s.results_now.ranking);
    if (!rank || !rank.length) return "";
    const top = rank.filter((r) => r.place === 1);
    const who = names(top.map((r) => r.player));
    const score = top[0].score;
    if (s.over) return `Won by ${who}` + (score == null ? "" : ` with ${dollars(score)}`);
    if (score == null) return "";
    if (top.length === rank.length) return score ? `Everyone has ${dollars(score)}` : "No money won yet";
    return `${who} ${top.length === 1 ? "leads" : "lead"} with ${dollars(score)}`;
  }

  function renderStatus(s) {
    const done = s.over || ended(s);
    const who = !done && s.to_move ? player(s, s.to_move) : null;
    const el = $("#status");
    el.className = "card status " + (who ? VT.cc(who.colour) : done ? "done" : "");
    let title; let what;
    if (s.over) { title = "Game over"; what = leadLine(s) || "The scoreboard shows the final ranking"; }
    else if (ended(s)) { title = "Game ended by the host"; what = leadLine(s) || "The scoreboard shows the ranking as it stood"; }
    else {
      title = who ? who.name : `Round ${s.round} of ${s.rounds}`;
      const t = tilePending(s);
      what = (s.phase === "deal" ? "Money to deal" : s.phase === "neutral" ? "rolls the neutral dice"
        : t ? (t.roll ? `throws the black dice for ${t.name}` : `decides for ${t.name}`)
          : s.phase === "choose" || s.roll_held ? "places a number" : "rolls next") +
        (who ? ` · round ${s.round} of ${s.rounds}` : "");
    }
    el.innerHTML = `${who ? sw(who.colour, "lg") : ""}<div><div class="who">${esc(title)}</div>` +
      `<div class="what">${esc(what)}</div></div>`;
  }

  // --- play tab ------------------------------------------------------------------------
  function renderPlay(s) {
    const open = s.over || ended(s) ? [] : (s.pending || []);
    $("#pending").innerHTML = open.map((p) => pendingCard(s, p)).join("");
    $("#pending").querySelectorAll("img[data-boxes]").forEach(placeBoxes);
    let html = "";
    if (s.over) {
      html = `<div class="card task final"><h2>Game over</h2>${ranking(s, s.results)}<p>${esc(s.results ? s.results.explanation : "")}.</p>` +
        `<button class="btn primary wide" data-act="goto-game">Set up the next game</button></div>`;
    } else if (ended(s)) {
      html = `<div class="card task"><h2>The game was ended</h2>${ranking(s, s.results_now)}<p class="muted">The scoreboard shows the ranking as it stood.</p>` +
        `<div class="row"><button class="btn" data-act="reopen">Reopen it</button>` +
        `<button class="btn primary" data-act="goto-game">New game</button></div></div>`;
    } else if (s.phase === "deal") {
      html = dealCard(s);
    } else if (open.length) {
      html = "";  // the question above comes first; undo is still there below
    } else if (s.roll_held && s.last_roll) {
      html = heldCard(s);
    } else if (s.phase === "neutral" || s.phase === "roll") {
      html = rollCard(s);
    } else if (s.phase === "choose") {
      html = chooseCard(s);
    } else if (s.phase === "tile") {
      html = tileCard(s);
    }
    $("#play").innerHTML = html;
    $("#casinos").innerHTML = s.tiles ? casinosCard(s) : "";
  }

  /** The ranking as it stands, first place first (nothing while the money is hidden). */
  function ranking(s, results) {
    const rank = (results && results.ranking) || [];
    if (!rank.length || rank.some((r) => r.score == null)) return "";
    return `<ol class="rank">${rank.map((r) => {
      const p = player(s, r.player) || {};
      return `<li class="${r.place === 1 ? "first" : ""}"><span class="pl">${r.place}</span>${sw(p.colour)}<span class="nm">${esc(r.player)}</span><span class="sc">${dollars(r.score)}</span></li>`;
    }).join("")}</ol>`;
  }

  function rollPhoto(s, alt) {
    const r = s.last_roll;
    if (!r || !r.photo) return "";
    const key = `${s.game_id}.${r.frame ?? s.seq}`;
    return `<div class="photo-wrap"><img src="${esc(photoUrl(r.photo, mainWidth(), key))}" alt="${esc(alt)}" data-full="${esc(photoUrl(r.photo, 0, key))}"></div>`;
  }

  function pendingCard(s, p) {
    const who = s.to_move || "the player";
    const fix = draft.fix[p.id] || (draft.fix[p.id] = { dice: p.dice.map((d) => ({ colour: d.colour, value: d.value, big: !!d.big, conf: d.confidence, bbox: d.bbox })), sel: -1, open: false });
    const key = `${s.game_id}.${s.seq}.${p.id}`;
    // The whole photo: the boxes on it are in the camera picture's own pixels.
    const photo = p.photo ? `<div class="photo-wrap"><img src="${esc(photoUrl(p.photo, 0, key))}" alt="the roll in question" data-boxes="${p.id}"></div>` : "";
    let body = "";
    if (p.kind === "place") {
      const answers = p.answers || p.candidates.map((v) => ({ do: "value", value: v, label: `${v}` }));
      body = `<h2>Which number did ${esc(who)} take?</h2><div class="bigs">` +
        answers.map((a, i) => a.do === "value"
          ? `<button class="btn bigbtn ${i === 0 ? "primary" : ""}" data-act="confirm-value" data-id="${p.id}" data-v="${a.value}">${die(a.value, colourFor(s))}<span>${esc(a.label)}</span></button>`
          : answerButton(p, a, i)).join("") + "</div>";
    } else if (p.answers) {
      const unsure = unsureIndex(fix.dice);
      const cands = p.candidates.length && unsure >= 0 && !fix.open
        ? `<p><b>The doubtful die shows:</b></p><div class="bigs">` + p.candidates.map((v) =>
          `<button class="btn bigbtn" data-act="confirm-cand" data-id="${p.id}" data-v="${v}">${die(v, fix.dice[unsure].colour)}${v}</button>`).join("") + "</div>" : "";
      const mover = s.to_move;
      const whose = p.player
        ? `<p class="whose">${sw(p.colour)}<span>${p.player === mover || !mover ? "The roll shows" : `It is ${esc(mover)}'s turn, but the roll shows`} <b>${esc(p.player)}</b>'s ${esc(p.colour)} dice.</span></p>`
        : p.colour ? `<p class="whose">${sw(p.colour)}<span>The roll shows ${esc(p.colour)} dice.</span></p>` : "";
      const dice = `<div class="editdice">${fix.dice.map((d, i) => `<button data-act="sel" data-id="${p.id}" data-i="${i}" class="${i === fix.sel ? "sel" : ""}" aria-label="die ${i + 1}">${die(d.value, d.colour, d.big ? "big" : "")}</button>`).join("")}` +
        (fix.open ? `<button class="btn ghost" data-act="add-die" data-id="${p.id}">+ die</button>` : "") + "</div>";
      const answers = fix.open
        ? (fix.sel >= 0 ? dieEditor(s, p.id, fix.dice[fix.sel]) : '<p class="muted small">Tap a die (here or on the photo) to change its value or colour.</p>') +
          `<button class="btn primary wide" data-act="confirm-dice" data-id="${p.id}">Confirm these ${fix.dice.length} dice</button>` +
          `<button class="btn ghost wide" data-act="uncorrect" data-id="${p.id}">Back</button>`
        : `<div class="answers">${p.answers.map((a, i) => answerButton(p, a, cands ? i + 1 : i)).join("")}</div>`;
      const title = p.player && mover && p.player !== mover ? `Is this ${esc(mover)}'s roll?` : `Check ${esc(who)}'s roll`;
      body = `<h2>${title}</h2>${whose}${cands}${dice}${answers}`;
    } else {
      const unsure = unsureIndex(fix.dice);
      const cands = p.candidates.length && unsure >= 0
        ? `<p><b>The doubtful die shows:</b></p><div class="bigs">` + p.candidates.map((v) =>
          `<button class="btn bigbtn" data-act="confirm-cand" data-id="${p.id}" data-v="${v}">${die(v, fix.dice[unsure].colour)}${v}</button>`).join("") + "</div>" : "";
      body = `<h2>Check ${esc(who)}'s roll</h2>${cands}<p class="muted small">Tap a die (here or on the photo) to correct its value or colour.</p>` +
        `<div class="editdice">${fix.dice.map((d, i) => `<button data-act="sel" data-id="${p.id}" data-i="${i}" class="${i === fix.sel ? "sel" : ""}" aria-label="die ${i + 1}">${die(d.value, d.colour, d.big ? "big" : "")}</button>`).join("")}` +
        `<button class="btn ghost" data-act="add-die" data-id="${p.id}">+ die</button></div>` +
        (fix.sel >= 0 ? dieEditor(s, p.id, fix.dice[fix.sel]) : "") +
        `<button class="btn primary wide" data-act="confirm-dice" data-id="${p.id}">Confirm these ${fix.dice.length} dice</button>` +
        `<button class="btn ghost wide" data-act="dismiss" data-id="${p.id}">That was no roll: ignore it</button>`;
    }
    return `<div class="card confirm" data-pending="${p.id}">${photo}<div class="side"><p class="muted">${esc(p.message)}</p>${body}</div></div>`;
  }

  /** One of the answers the rules accept, the first one the primary button. */
  function answerButton(p, a, i) {
    const cls = `btn wide ${i === 0 ? "primary" : a.do === "dismiss" ? "ghost" : ""}`;
    const acts = { confirm: "confirm-read", correct: "correct", dismiss: "dismiss", value: "confirm-value" };
    return `<button class="${cls}" data-act="${acts[a.do] || "correct"}" data-id="${p.id}"${a.do === "value" ? ` data-v="${a.value}"` : ""}>${esc(a.label)}</button>`;
  }

  function unsureIndex(dice) {
    let best = -1;
    dice.forEach((d, i) => {
      const c = d.value === null || d.value === undefined ? -1 : (d.conf ?? 1);
      if (c < 0.9 && (best < 0 || c < (dice[best].value == null ? -1 : dice[best].conf ?? 1))) best = i;
    });
    return best;
  }

  function colourFor(s) {
    const p = s.to_move ? player(s, s.to_move) : null;
    return p ? p.colour : "white";
  }

  function dieEditor(s, id, d) {
    const cols = [...new Set([...s.players.map((p) => p.colour), ...(s.expected_roll || []).map((e) => e.colour),
      ...(editionInfo(s.edition).reserved_colours || ["white"]), d.colour])];
    const biggy = editionInfo(s.edition).biggy ?? s.edition === "royale";
    return `<div class="editor"><div class="row">${[1, 2, 3, 4, 5, 6].map((v) =>
      `<button class="chipbtn ${d.value === v ? "sel" : ""}" data-act="set-v" data-id="${id}" data-v="${v}" aria-label="value ${v}">${die(v, d.colour)}</button>`).join("")}</div>` +
      `<div class="row">${cols.map((c) => `<button class="chipbtn named ${d.colour === c ? "sel" : ""}" data-act="set-c" data-id="${id}" data-c="${esc(c)}">${sw(c)}<span>${esc(c)}</span></button>`).join("")}</div>` +
      `<div class="row">${biggy ? `<label class="switch"><input type="checkbox" data-act="set-big" data-id="${id}" ${d.big ? "checked" : ""}><span>Biggy</span></label>` : ""}` +
      `<button class="btn danger" data-act="rm-die" data-id="${id}">Remove die</button></div></div>`;
  }

  function placeBoxes(img) {
    const id = Number(img.dataset.boxes);
    const draw = () => {
      const fix = draft.fix[id];
      if (!fix || !img.naturalWidth) return;
      img.parentElement.querySelectorAll(".box").forEach((b) => b.remove());
      const W = img.naturalWidth;
      const H = img.naturalHeight;
      fix.dice.forEach((d, i) => {
        if (!d.bbox) return;
        const [x0, y0, x1, y1] = d.bbox;
        const b = document.createElement("button");
        b.className = "box" + ((d.conf ?? 1) >= 0.9 && d.value ? " ok" : "") + (i === fix.sel ? " sel" : "");
        b.dataset.act = "sel"; b.dataset.id = id; b.dataset.i = i;
        b.style.left = `${(100 * x0) / W}%`;
        b.style.top = `${(100 * y0) / H}%`;
        b.style.width = `${(100 * (x1 - x0)) / W}%`;
        b.style.height = `${(100 * (y1 - y0)) / H}%`;
        b.setAttribute("aria-label", `die ${i + 1} on the photo`);
        const t = document.createElement("span");
        t.textContent = `${d.value ?? "?"} ${d.colour}`;
        b.appendChild(t);
        img.parentElement.appendChild(b);
      });
    };
    if (img.complete) draw(); else img.addEventListener("load", draw);
  }

  function dealCard(s) {
    const values = s.money_values || [];
    const d = draft.deal || (draft.deal = { casinos: [[], [], [], [], [], []], active: 0, open: false });
    const pairs = s.edition !== "classic";
    let html = `<div class="card task deal ${d.open ? "open" : ""}"><h2>Money for round ${s.round}</h2>` +
      `<button class="btn primary wide" data-act="deal-app">Let the app deal</button>`;
    if (!d.open) {
      return html + `<p class="center"><button class="btn ghost" data-act="deal-open">Or enter the ${pairs ? "cards" : "notes"} we dealt</button></p></div>`;
    }
    html += `<p class="muted small">Tap a casino, then the ${pairs ? "cards" : "notes"} on it (tap one again to take it off). ` +
      `${pairs ? "Two cards per casino." : "Each casino gets notes until it holds $50,000."}</p><div class="dealrows">` +
      d.casinos.map((notes, i) => `<div class="dealrow ${i === d.active ? "on" : ""}" data-act="deal-row" data-i="${i}">${die(i + 1, "", "c-house")}` +
        `<span class="notes">${notes.map((v, j) => `<span class="note" data-act="deal-rm" data-i="${i}" data-j="${j}">${dollars(v)}</span>`).join("") || '<span class="muted small">empty</span>'}</span>` +
        `<span class="sum">${notes.length ? dollars(notes.reduce((a, b) => a + b, 0)) : ""}</span></div>`).join("") +
      `</div><div class="keys">${values.map((v) => `<button class="btn" data-act="deal-add" data-v="${v}">${dollars(v)}</button>`).join("")}</div>` +
      `<button class="btn primary wide deal-enter" data-act="deal-hand">Enter this deal</button></div>`;
    return html;
  }

  /** A stepper per value for each group of dice the rules expect: the roll entered by hand. */
  function rollSteppers(s) {
    const groups = s.expected_roll || [];
    let total = 0;
    let need = 0;
    const html = groups.map((g) => {
      const k = g.colour + (g.big ? " big" : "");
      const counts = draft.roll[k] || (draft.roll[k] = [0, 0, 0, 0, 0, 0]);
      const have = counts.reduce((a, b) => a + b, 0);
      total += have; need += g.count;
      return `<div class="group"><header>${sw(g.colour)}${esc(g.colour)}${g.big ? " Biggy" : ""} dice<span class="cnt ${have === g.count ? "ok" : ""}">${have} / ${g.count}</span></header>` +
        `<div class="steppers">${counts.map((n, i) => `<div class="stepper ${n ? "has" : ""}">` +
          `<button data-act="dec" data-k="${esc(k)}" data-v="${i + 1}" aria-label="one ${i + 1} less" ${n ? "" : "disabled"}>−</button>` +
          `<span class="mid">${die(i + 1, g.colour, g.big ? "big" : "")}<b>${n}</b></span>` +
          `<button data-act="inc" data-k="${esc(k)}" data-v="${i + 1}" aria-label="one ${i + 1} more" ${have < g.count ? "" : "disabled"}>+</button></div>`).join("")}</div></div>`;
    }).join("");
    return { html, total, need };
  }

  function rollCard(s) {
    const who = s.to_move || "";
    const { html, total, need } = rollSteppers(s);
    const title = s.phase === "neutral" ? `${esc(who)} rolls the neutral dice` : `Enter ${esc(who)}'s roll`;
    return `<div class="card task byhand"><h2>${title}</h2><p class="muted small">When the camera cannot see the tray: count the dice by value.</p>${html}` +
      `<p></p><button class="btn primary wide" data-act="roll" ${total === need && need ? "" : "disabled"}>Enter roll (${total}/${need})</button></div>`;
  }

  /** The camera saw the roll but one die is unclear; the placement will most often tell. */
  function heldCard(s) {
    const who = s.to_move || "the player";
    const dice = s.last_roll.dice || [];
    const shown = VT.byFace(dice).map((d) => {
      const unsure = d.value === null || d.confidence < 0.9;
      return die(unsure ? null : d.value, d.colour, (d.big ? "big " : "") + (unsure ? "hl" : ""));
    }).join("");
    return `<div class="card task confirm">${rollPhoto(s, "the roll")}<div class="side"><h2>${esc(who)} rolled</h2><div class="dice">${shown}</div>` +
      `<p>The camera is not sure of a die (?). Place the dice as usual: the dice that leave the tray will tell.</p>` +
      `<button class="btn wide" data-act="check-roll">Check the dice now</button></div></div>`;
  }

  /** What passing is called in this game, and what it costs. */
  function passLabel(s) {
    if (s.edition === "royale") return ["Pass: use a chip", "a chip kept is worth $10,000 at the end"];
    const rule = (s.options || {}).skip_rule;
    if (rule === "A") return ["Skip this turn", "costs $1"];
    if (rule === "B") return ["Skip this turn", "costs a skip card (A, J, Q or K)"];
    return ["Skip this turn", ""];
  }

  function chooseCard(s) {
    const who = s.to_move || "";
    const roll = s.roll || [];
    const col = colourFor(s);
    const places = s.legal.filter((a) => a.type === "place");
    const canPass = s.legal.some((a) => a.type === "pass");
    return `<div class="card task confirm">${rollPhoto(s, "the roll")}<div class="side"><h2>Which number does ${esc(who)} place?</h2>` +
      `<div class="dice">${VT.byFace(roll).map((d) => die(d.value, d.colour, d.big ? "big" : "")).join("")}</div>` +
      `<div class="bigs">${places.map((a) => {
        const n = roll.filter((d) => d.value === a.value).length;
        return `<button class="btn bigbtn" data-act="place" data-v="${a.value}">${die(a.value, col)}<span>${a.value}</span><small>${n} ${n === 1 ? "die" : "dice"}</small></button>`;
      }).join("")}${canPass ? `<button class="btn bigbtn pass" data-act="pass"><span>${esc(passLabel(s)[0])}</span><small>${esc(passLabel(s)[1])}</small></button>` : ""}</div>` +
      `<p class="muted small">Rolled wrong? Undo takes the roll back.</p></div></div>`;
  }

  // --- Royale's casino tiles ---------------------------------------------------------------
  /** The tile decision the game waits for, or null. */
  const tilePending = (s) => (s.tiles && s.tiles.pending && s.tiles.pending[0]) || null;

  /** A tile's decision: whose it is, the question in the tile's words and a button per
      choice; a secret choice is made on the player's own phone; a throw of the black dice
      is read by the camera or entered here. */
  function tileCard(s) {
    const t = tilePending(s);
    if (!t) return "";
    const p = player(s, t.player) || { colour: "", name: t.player };
    let body;
    if (t.roll) {
      const { html, total, need } = rollSteppers(s);
      body = `<p class="muted small">The camera reads the two black dice once they lie still in the tray, or enter them here.</p>${html}` +
        `<button class="btn primary wide" data-act="roll" ${total === need && need ? "" : "disabled"}>Enter the black dice (${total}/${need})</button>`;
    } else if (t.secret) {
      body = `<p class="secret" role="status">${sw(p.colour)}<span><b>${esc(t.player)}</b> chooses on their own phone: open the scoreboard, tap <b>Me?</b> and pick <b>${esc(p.colour)}</b>.</span></p>` +
        '<p class="muted small">The choice is secret, so the table\'s controls do not offer it.</p>';
    } else {
      body = `<div class="choices">${t.choices.map((c, i) =>
        `<button class="btn tilebtn" data-act="tile" data-i="${i}">${esc(c.label)}</button>`).join("")}</div>`;
    }
    return `<div class="card task tile-ask ${VT.cc(p.colour)}" data-tile="${esc(t.tile)}" data-seq="${s.seq}">` +
      `<p class="tile-tag">${die(t.casino, "", "c-house")}<span>Casino ${t.casino} · <b>${esc(t.name)}</b></span></p>` +
      `<p class="whose">${sw(p.colour)}<span><b>${esc(t.player)}</b>'s decision</span></p>` +
      `<h2 class="ask">${esc(t.ask)}</h2>${body}</div>`;
  }

  /** What a face's counters and tokens show now, in a few words (from its view fields). */
  function tileFacts(s, t) {
    const who = (name) => {
      const p = player(s, name);
      return p ? `${sw(p.colour)}${esc(name)}` : esc(name);
    };
    const byName = (m) => Object.entries(m || {}).filter(([, n]) => n).map(([nm, n]) => `${who(nm)} ${n}`).join(", ");
    const out = [];
    switch (t.tile) {
      case "A2": out.push(`Jackpot ${dollars(t.counter)}`); break;
      case "B2":
        if (t.counter) out.push(`counter on ${dollars(t.reward)}`);
        if (t.last) out.push(`last throw ${t.last}`);
        break;
      case "C1": case "D2": out.push(t.token ? `token: ${who(t.token)}` : "token on the tile"); break;
      case "E1":
        out.push(t.closed ? `closes casino ${t.closed}` : "token on the tile");
        out.push(`track ${t.counter} of ${(t.track || []).length}`);
        break;
      case "E2": out.push(byName(t.bar) ? `bar: ${byName(t.bar)}` : "bar empty"); break;
      case "F1": out.push((t.clusters || []).length ? `blank dice: ${t.clusters.join(" · ")}` : "no blank dice left"); break;
      case "F2": {
        const words = { chip: "1 chip", money: "$30,000", option: "turn/take back" };
        out.push(Object.entries(t.pictures || {}).map(([k, v]) => `${words[k] || k} ${v.filled}/${v.of}`).join(" · "));
        break;
      }
      case "G1": out.push(t.piles ? `piles ${t.piles.join(" + ")}` : "6 tokens"); break;
      case "G2": out.push(byName(t.dice) ? `on the tile: ${byName(t.dice)}` : "no dice on the tile"); break;
      case "H1": {
        const sp = Object.entries(t.spaces || {});
        out.push(sp.length ? sp.map(([v, d]) => `${die(Number(v), d.colour, d.big ? "big" : "")}`).join("") : "spaces empty");
        break;
      }
      case "H2": out.push(t.golden ? `golden space: ${who(t.golden)}` : "golden space empty"); break;
      default:
    }
    return out.filter(Boolean).map((f) => `<span>${f}</span>`).join("");
  }

  /** The casinos with their notes, dice and tiles, compactly (a tiles game only). */
  function casinosCard(s) {
    const tiles = Object.fromEntries((s.tiles.casinos || []).map((t) => [t.casino, t]));
    const closedBy = Object.fromEntries((s.tiles.casinos || []).filter((t) => t.closed).map((t) => [t.closed, t]));
    const colourOf = (owner) => (player(s, owner) || {}).colour || owner;
    const rows = (s.casinos || []).map((c) => {
      const t = tiles[c.casino];
      const shut = closedBy[c.casino];
      const dice = Object.entries(c.weights || c.dice || {}).map(([o, n]) =>
        `<span class="own">${sw(colourOf(o))}<span class="vh">${esc(o)}: </span>${n}</span>`).join("");
      const notes = (c.notes || []).map((v) => `<span class="note">${dollars(v)}</span>`).join("");
      const tile = t ? `<div class="ctile" data-tile="${esc(t.tile)}"><b>${esc(t.name)}</b>${tileFacts(s, t)}</div>` : "";
      return `<li class="hcasino ${shut ? "closed" : ""}" data-casino="${c.casino}">${die(c.casino, "", "c-house")}` +
        `<div class="cbody"><div class="cline"><span class="notes">${notes}</span><span class="cdice">${dice || '<span class="muted small">no dice</span>'}</span></div>` +
        `${shut ? `<div class="shut">Closed by ${esc(shut.name)}: no die in or out</div>` : ""}${tile}</div></li>`;
    }).join("");
    const bank = s.tiles.bank || [];
    return `<div class="card casinos-card"><h2>Casinos and tiles</h2><ul class="hcasinos">${rows}</ul>` +
      `<p class="small muted">Bank: ${dollars(bank.reduce((a, b) => a + b, 0))} in ${bank.length} ${bank.length === 1 ? "card" : "cards"}</p></div>`;
  }

  // One handler for every button of the play tab.
  $("#tab-play").addEventListener("click", async (e) => {
    const b = e.target.closest("[data-act]");
    if (!b || !S) return;
    const act = b.dataset.act;
    const id = Number(b.dataset.id);
    const fix = draft.fix[id];
    const v = Number(b.dataset.v);
    const rerender = () => { playKey = ""; render(S); };
    switch (act) {
      case "goto-game": setTab("game"); return;
      case "reopen": if ((await call("/api/end", { ended: false })).ok) toast("Game reopened"); return;
      case "deal-app": if ((await call("/api/action", { type: "deal" })).ok) toast("Money dealt"); return;
      case "deal-open": draft.deal.open = true; rerender(); return;
      case "deal-row": if (e.target.closest("[data-act=deal-rm]")) return; draft.deal.active = Number(b.dataset.i); rerender(); return;
      case "deal-rm": draft.deal.casinos[Number(b.dataset.i)].splice(Number(b.dataset.j), 1); draft.deal.active = Number(b.dataset.i); rerender(); return;
      case "deal-add": {
        const d = draft.deal;
        const row = d.casinos[d.active];
        row.push(v);
        row.sort((a, c) => c - a);
        const full = S.edition === "classic" ? row.reduce((a, c) => a + c, 0) >= 50000 : row.length >= 2;
        if (full && d.active < 5) d.active += 1;
        rerender();
        return;
      }
      case "deal-hand": if ((await call("/api/action", { type: "deal", casinos: draft.deal.casinos })).ok) toast("Deal entered"); return;
      case "inc": case "dec": {
        const counts = draft.roll[b.dataset.k];
        counts[v - 1] = Math.max(0, counts[v - 1] + (act === "inc" ? 1 : -1));
        rerender();
        return;
      }
      case "roll": {
        const dice = [];
        for (const [k, counts] of Object.entries(draft.roll)) {
          const [colour, big] = k.split(" ");
          counts.forEach((n, i) => { for (let j = 0; j < n; j++) dice.push({ colour, value: i + 1, big: big === "big" }); });
        }
        if ((await call("/api/action", { type: "roll", dice })).ok) toast("Roll entered");
        return;
      }
      case "check-roll": await call("/api/roll/check", {}); return;
      case "tile": {
        const t = tilePending(S);
        const c = t && t.choices[Number(b.dataset.i)];
        if (!c) return;
        const body = { type: "tile", tile: c.tile, choice: c.choice, player: t.player };
        if (c.value !== undefined && c.value !== null) body.value = c.value;
        if ((await call("/api/action", body)).ok) toast(`${t.name}: ${c.label}`);
        return;
      }
      case "place": if ((await call("/api/action", { type: "place", value: v })).ok) toast(`Placed the ${v}s`); return;
      case "pass": if ((await call("/api/action", { type: "pass" })).ok) toast("Passed"); return;
      case "confirm-value": if ((await call("/api/confirm", { id, value: v })).ok) toast("Confirmed"); return;
      case "confirm-read": if ((await call("/api/confirm", { id })).ok) toast("Roll confirmed"); return;
      case "confirm-cand": {
        const i = unsureIndex(fix.dice);
        if (i >= 0) fix.dice[i].value = v;
        await sendDice(id, fix);
        return;
      }
      case "confirm-dice": await sendDice(id, fix); return;
      case "correct": fix.open = true; if (fix.sel < 0) fix.sel = Math.max(0, unsureIndex(fix.dice)); rerender(); return;
      case "uncorrect": fix.open = false; fix.sel = -1; rerender(); return;
      case "dismiss": if ((await call("/api/confirm", { id, dismiss: true })).ok) toast("Ignored"); return;
      case "sel": {
        const i = Number(b.dataset.i);
        fix.open = true;
        fix.sel = fix.sel === i ? -1 : i;
        rerender();
        return;
      }
      case "set-v": fix.dice[fix.sel].value = v; fix.dice[fix.sel].conf = 1; rerender(); return;
      case "set-c": fix.dice[fix.sel].colour = b.dataset.c; rerender(); return;
      case "rm-die": fix.dice.splice(fix.sel, 1); fix.sel = -1; rerender(); return;
      case "add-die": fix.dice.push({ colour: colourFor(S), value: 1, big: false, conf: 1 }); fix.sel = fix.dice.length - 1; rerender(); return;
      default:
    }
  });
  $("#tab-play").addEventListener("change", (e) => {
    const b = e.target.closest("[data-act=set-big]");
    if (!b) return;
    const fix = draft.fix[Number(b.dataset.id)];
    fix.dice[fix.sel].big = b.checked;
  });

  async function sendDice(id, fix) {
    const bad = fix.dice.findIndex((d) => !d.value);
    if (bad >= 0) { toast(`Die ${bad + 1} has no value yet: tap it and pick one`, true); fix.sel = bad; fix.open = true; playKey = ""; render(S); return; }
    const dice = fix.dice.map((d) => ({ colour: d.colour, value: d.value, big: !!d.big }));
    if ((await call("/api/confirm", { id, dice })).ok) toast("Roll confirmed");
  }

  $("#undo").addEventListener("click", async () => {
    const r = await call("/api/undo", {});
    if (r.ok) {
      const u = r.data.undone || {};
      toast(u.type === "place" ? `Undone: placing the ${u.value}s` : u.type === "roll" ? "Undone: the roll" : `Undone: ${u.type}`);
    }
  });

  // --- game tab ------------------------------------------------------------------------
  $("#invite-url").textContent = location.origin + "/";
  async function renderPin() {
    let w = {};
    try { w = await (await fetch("/api/whoami", { credentials: "same-origin" })).json(); } catch (e) { return; }
    if (!w.host) return;
    const t = w.wrong_pins || {};
    const mins = Math.round((t.window_s || 600) / 60);
    $("#pin-tries").textContent = t.recent
      ? `${t.recent} wrong PIN ${t.recent === 1 ? "try" : "tries"} in the last ${mins} minutes, from ${t.addresses} ${t.addresses === 1 ? "address" : "addresses"} (last from ${t.last_from}, ${t.last_ago_s} s ago).` +
        (t.locked_s ? ` Logins are slowed down: next try in ${t.locked_s} s.` : "")
      : "No wrong PIN tries lately.";
    $("#renew-pin").hidden = !!w.pin_fixed;
    if (w.pin_fixed) $("#pin-line").textContent = "This table's PIN is fixed by its settings (--pin or $VEGAS_TABLE_PIN).";
    if (w.pin_problem) $("#pin-line").textContent = w.pin_problem;
  }
  $("#renew-pin").addEventListener("click", async () => {
    if (!await ask("Make a new table PIN?", "Every other phone logged in to the controls is logged out.", "Make a new PIN")) return;
    const r = await call("/api/pin/new", {});
    if (!r.ok) return;
    const el = $("#pin-new");
    el.textContent = `New PIN: ${r.data.pin}`;
    el.hidden = false;
    renderPin();
  });

  function renderGame(s) {
    renderGameCurrent(s);
    renderPin();
    const c = s.calibration || {};
    $("#calib-line").textContent = c.error ? `Uncalibrated: ${c.error}` :
      (c.calibrated ? `Calibrated (${c.profile}).` : "Not calibrated yet: the camera reads with built-in colours.");
    if (!$("#players-edit").children.length) {
      const rows = s.players.map((p) => ({ name: p.name, colour: p.colour }));
      setupPlayers(rows, 0);
      renderOptions();
    }
  }

  const TITLES = { classic: "Classic (2012)", custom: "Custom Edition", royale: "Royale (2019)" };
  function renderGameCurrent(s) {
    const d = s.display || {};
    const html = `<h2>This game</h2><dl class="kv"><dt>Edition</dt><dd>${esc(TITLES[s.edition] || s.edition)}</dd>` +
      `<dt>Round</dt><dd>${s.over ? "Game over" : d.ended ? `Ended in round ${s.round} of ${s.rounds}` : `${s.round} of ${s.rounds}`}</dd>` +
      `<dt>Players</dt><dd class="plist">${s.players.map((p) => `<span>${sw(p.colour)} ${esc(p.name)}</span>`).join("")}</dd></dl>` +
      `<label class="switch"><input type="checkbox" id="cur-hide" ${d.hide_money ? "checked" : ""}><span>Hide money on the scoreboard until the end</span></label>` +
      `<fieldset class="seg"><legend>Money for the next rounds</legend>` +
      `<label><input type="radio" name="cur-deal" value="app" ${d.deal !== "hand" ? "checked" : ""}><span>App deals</span></label>` +
      `<label><input type="radio" name="cur-deal" value="hand" ${d.deal === "hand" ? "checked" : ""}><span>Entered by hand</span></label></fieldset>` +
      (s.over ? "" : d.ended ? '<button class="btn wide" id="cur-reopen">Reopen the game</button>'
        : '<button class="btn danger wide" id="cur-end">End the game now</button>');
    const box = $("#current");
    if (box.dataset.html === html) return;
    box.dataset.html = html;
    box.innerHTML = html;
    $("#cur-hide").addEventListener("change", async (e) => {
      if ((await call("/api/display", { hide_money: e.target.checked })).ok) toast(e.target.checked ? "Money hidden" : "Money shown");
    });
    document.querySelectorAll("input[name=cur-deal]").forEach((r) => r.addEventListener("change", async (e) => {
      if ((await call("/api/display", { deal: e.target.value })).ok) toast("Saved");
    }));
    const end = $("#cur-end");
    if (end) end.addEventListener("click", async () => {
      if (!await ask("End this game now?", "The scoreboard will show the ranking as it stands. You can reopen it later.", "End the game", true)) return;
      if ((await call("/api/end", { ended: true })).ok) toast("Game ended");
    });
    const re = $("#cur-reopen");
    if (re) re.addEventListener("click", async () => { if ((await call("/api/end", { ended: false })).ok) toast("Game reopened"); });
  }

  // --- saved games -----------------------------------------------------------------------
  let games = [];
  function when(iso) {
    const t = new Date(iso);
    if (Number.isNaN(t.getTime())) return "";
    const mins = Math.round((Date.now() - t.getTime()) / 60000);
    const clock = t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (mins < 1) return "just now";
    if (mins < 60) return `${mins} min ago`;
    const today = new Date();
    if (t.toDateString() === today.toDateString()) return `today ${clock}`;
    const y = new Date(today.getTime() - 864e5);
    if (t.toDateString() === y.toDateString()) return `yesterday ${clock}`;
    return `${t.toLocaleDateString([], { day: "numeric", month: "short", year: t.getFullYear() === today.getFullYear() ? undefined : "numeric" })} ${clock}`;
  }
  /** "anna leads with $140,000", for a saved game as the host sees it. */
  function standing(g) {
    if (g.over) return `Game over: won by ${names(g.winners || [])}`;
    const lead = !g.leaders.length ? "no money won yet"
      : g.leaders.length === g.players.length ? `everyone has ${dollars(g.lead_money)}`
        : `${names(g.leaders)} ${g.leaders.length === 1 ? "leads" : "lead"} with ${dollars(g.lead_money)}`;
    return (g.ended ? "Ended by the host: " : "") + lead;
  }
  const roundOf = (g) => g.over ? "finished" : `Round ${g.round}${g.rounds ? ` of ${g.rounds}` : ""}`;
  const ednTitle = (g) => TITLES[g.edition] || g.title || g.edition;

  async function loadGames() {
    const r = await getJson("/api/games");
    if (!r.ok) { $("#games").innerHTML = `<li class="muted">${esc(r.data.error || "cannot load the saved games")}</li>`; return; }
    games = r.data.games;
    $("#games").innerHTML = games.map((g) => `<li class="game ${g.current ? "current" : ""}" data-game="${esc(g.game_id)}">` +
      `<div class="g-head"><b>${esc(ednTitle(g))}</b><span>${esc(roundOf(g))}</span><span class="muted">${esc(when(g.updated))}</span>${g.current ? '<span class="tag now">Playing now</span>' : ""}</div>` +
      `<div class="plist">${g.players.map((p) => `<span>${sw(p.colour)} ${esc(p.name)} <span class="muted">${dollars(p.money)}</span></span>`).join("")}</div>` +
      `<div class="g-lead">${esc(standing(g))}</div>` +
      `<div class="row">${!g.current && !g.over ? `<button class="btn primary" data-g="resume">Resume</button>` : ""}` +
      `<button class="btn" data-g="view">View</button>` +
      `${g.current ? "" : `<button class="btn danger" data-g="delete">Delete</button>`}</div></li>`).join("") ||
      '<li class="muted">No saved games yet.</li>';
  }
  $("#games").addEventListener("click", async (e) => {
    const b = e.target.closest("[data-g]");
    if (!b) return;
    const gid = b.closest("[data-game]").dataset.game;
    const g = games.find((x) => x.game_id === gid);
    if (!g) return;
    const label = `${ednTitle(g)}, ${names(g.players.map((p) => p.name))} (${roundOf(g).toLowerCase()})`;
    if (b.dataset.g === "view") { histGame = gid; setTab("history"); return; }
    if (b.dataset.g === "resume") {
      const cur = games.find((x) => x.current);
      const lost = cur && !cur.over && cur.seq ? ` The game being played (${roundOf(cur)}, ${standing(cur)}) stays saved.` : "";
      if (!await ask("Resume this game?", `${label}.${lost}`, "Resume")) return;
      const r = await call(`/api/games/${encodeURIComponent(gid)}/resume`, {});
      if (r.ok) { toast("Game resumed"); setTab("play"); }
      return;
    }
    if (b.dataset.g === "delete") {
      if (!await ask("Delete this game?", `${label}: its history and photos are deleted for good.`, "Delete", true)) return;
      const r = await call(`/api/games/${encodeURIComponent(gid)}`, {}, "DELETE");
      if (r.ok) toast("Game deleted");
      loadGames();
    }
  });

  // --- setting up a game -----------------------------------------------------------------
  const edition = () => document.querySelector("input[name=edition]:checked").value;
  getJson("/api/editions").then((r) => { if (r.ok) { editions = r.data.editions; renderOptions(); } });
  function editionInfo(key) { return (editions && editions[key]) || {}; }
  /** The player count and colours the chosen edition and its options allow. */
  function limitsNow() {
    const ed = edition();
    const info = editionInfo(ed);
    const neutral = ed === "classic" && $("#opt-neutral") && $("#opt-neutral").checked && info.neutral;
    const tiles = ed === "royale" && tilesChosen() && info.tiles;
    return { max: (neutral ? info.neutral.max_players : info.max_players) || 10, min: info.min_players || 2,
      reserved: (neutral ? info.neutral.reserved_colours : tiles ? info.tiles.reserved_colours : info.reserved_colours) || [],
      why: neutral ? "Classic with the neutral dice" : `${{ classic: "Classic", custom: "The Custom Edition", royale: "Royale" }[ed]}` };
  }
  function checkPlayers() {
    const n = $("#players-edit").children.length;
    const lim = limitsNow();
    const full = n >= lim.max;
    $("#add-player").disabled = full;
    const note = $("#players-note");
    note.textContent = n > lim.max ? `${lim.why} is for ${lim.min} to ${lim.max} players: remove ${n - lim.max}.`
      : full ? `${lim.why} is for ${lim.min} to ${lim.max} players.` : "";
    note.classList.toggle("err", n > lim.max);
    document.querySelectorAll("#players-edit .pcolour").forEach((sel) => {
      [...sel.options].forEach((o) => { o.disabled = lim.reserved.includes(o.value); });
      const warn = lim.reserved.includes(sel.value);
      sel.closest(".prow").classList.toggle("bad", warn);
    });
    const taken = [...document.querySelectorAll("#players-edit .pcolour")].filter((s) => lim.reserved.includes(s.value)).map((s) => s.value);
    if (taken.length && n <= lim.max) {
      note.textContent = [...new Set(taken)].map((c) => `The ${c} dice are ${RESERVED_AS[c] || "the neutral dice"} in this game`).join("; ") +
        ": choose another colour.";
      note.classList.add("err");
    }
  }

  function renderOptions() {
    const ed = edition();
    const box = $("#options");
    const key = ed + (editions ? "+" : "");
    if (box.dataset.ed !== key) {
      box.dataset.ed = key;
      if (ed === "classic") {
        box.innerHTML = `<label class="switch"><input type="checkbox" id="opt-neutral"><span>Neutral white dice (2–${(editionInfo("classic").neutral || {}).max_players || 4} players)</span></label>`;
      } else if (ed === "custom") {
        box.innerHTML = '<label class="field">Skip rule<select id="opt-skip"><option value="none">No skipping</option>' +
          '<option value="A">A: pay $1 to skip a turn</option><option value="B">B: give up a skip card (A, J, Q, K) to skip</option></select></label>' +
          '<label class="field">Skips per player and round<input id="opt-limit" type="number" min="1" inputmode="numeric" placeholder="no limit"></label>' +
          '<label class="field">Rounds<input id="opt-rounds" type="number" min="1" max="10" inputmode="numeric" placeholder="4, or 3 with a skip rule"></label>';
      } else {
        const most = (editionInfo("royale").tiles || {}).max || 6;
        const counts = [1, 2, 4, 5, 6].filter((n) => n <= most);
        box.innerHTML = '<p class="muted small">3 rounds, one Biggy die per player, two chips each round (a chip kept is worth $10,000 at the end).</p>' +
          '<label class="field">Casino tiles<select id="opt-tiles"><option value="3" selected>3 per round: the main game</option>' +
          '<option value="0">Off: the basic game</option>' +
          counts.map((n) => `<option value="${n}">${n} per round (variant)</option>`).join("") + "</select></label>" +
          '<label class="field" id="opt-used-field">Used tiles<select id="opt-used"><option value="repeat" selected>Repeat: all back in the draw</option>' +
          '<option value="aside">Set aside: each tile once a game</option>' +
          '<option value="other_face">Other face only: a tile comes back turned</option></select></label>' +
          '<p class="small tiles-note" id="tiles-note">With the tiles, the two <b>black</b> dice are extra dice the tiles throw: they are no player\'s dice, so nobody may pick black. ' +
          'The nine <b>gray</b> dice are the blank dice the tiles put in the casinos.</p>';
      }
    }
    if (ed === "royale" && $("#opt-tiles")) {
      $("#opt-used-field").hidden = !tilesChosen();
      $("#tiles-note").hidden = !tilesChosen();
    }
    checkPlayers();
  }
  /** The tiles per round the set-up form asks for (0: the basic game). */
  const tilesChosen = () => ($("#opt-tiles") ? Number($("#opt-tiles").value) : 0);
  const RESERVED_AS = { black: "the tiles' two extra dice", gray: "the blank dice", white: "the neutral dice" };
  document.querySelectorAll("input[name=edition]").forEach((r) => r.addEventListener("change", renderOptions));
  $("#options").addEventListener("change", renderOptions);

  function setupPlayers(rows, start) {
    const box = $("#players-edit");
    box.innerHTML = "";
    rows.forEach((r, i) => addRow(r, i === start));
    if (start < 0 && box.firstElementChild) box.firstElementChild.querySelector(".star").classList.add("on");
    checkPlayers();
  }
  function addRow(r = {}, starts = false) {
    const box = $("#players-edit");
    const used = [...box.querySelectorAll("select")].map((s) => s.value);
    const reserved = limitsNow().reserved;
    const colour = r.colour || VT.COLOURS.find((c) => !used.includes(c) && !reserved.includes(c)) || "red";
    const div = document.createElement("div");
    div.className = "prow";
    div.innerHTML = `<button type="button" class="star ${starts ? "on" : ""}" aria-label="start player">★</button>` +
      `<input class="pname" type="text" maxlength="20" placeholder="Name" value="${esc(r.name || "")}" aria-label="player name">` +
      `<span class="colsel">${sw(colour)}<select class="pcolour" aria-label="dice colour">${VT.COLOURS.map((c) => `<option ${c === colour ? "selected" : ""}>${c}</option>`).join("")}</select></span>` +
      '<button type="button" class="rm" aria-label="remove player">✕</button>';
    box.appendChild(div);
  }
  $("#add-player").addEventListener("click", () => {
    if ($("#players-edit").children.length < limitsNow().max) addRow();
    checkPlayers();
  });
  $("#players-edit").addEventListener("click", (e) => {
    const row = e.target.closest(".prow");
    if (!row) return;
    if (e.target.closest(".star")) {
      document.querySelectorAll("#players-edit .star").forEach((s) => s.classList.toggle("on", s.closest(".prow") === row));
    } else if (e.target.closest(".rm") && $("#players-edit").children.length > limitsNow().min) {
      const wasStart = row.querySelector(".star.on");
      row.remove();
      if (wasStart) $("#players-edit .star").classList.add("on");
      checkPlayers();
    }
  });
  $("#players-edit").addEventListener("change", (e) => {
    if (e.target.classList.contains("pcolour")) e.target.previousElementSibling.className = "sw " + VT.cc(e.target.value);
    checkPlayers();
  });

  $("#setup").addEventListener("submit", async (e) => {
    e.preventDefault();
    const rows = [...document.querySelectorAll("#players-edit .prow")];
    const players = rows.map((r) => ({ name: r.querySelector(".pname").value.trim(), colour: r.querySelector(".pcolour").value }));
    const start = Math.max(0, rows.findIndex((r) => r.querySelector(".star.on")));
    const ed = edition();
    const options = {};
    if (ed === "classic") options.neutral_dice = $("#opt-neutral").checked;
    if (ed === "custom") {
      options.skip_rule = $("#opt-skip").value;
      if ($("#opt-limit").value) options.skip_limit = Number($("#opt-limit").value);
      if ($("#opt-rounds").value) options.rounds = Number($("#opt-rounds").value);
    }
    if (ed === "royale") {
      options.tiles = tilesChosen() || false;
      if (options.tiles) options.used_tiles = $("#opt-used").value;
    }
    const body = { edition: ed, players, options, start_player: start,
      deal: document.querySelector("input[name=deal]:checked").value, hide_money: $("#hide-money").checked };
    const empty = players.findIndex((p) => !p.name);
    if (empty >= 0) { $("#setup-err").textContent = `Player ${empty + 1} needs a name`; return; }
    if (S && !S.over && S.seq > (S.display && S.display.deal === "hand" ? 0 : 1)) {
      const r = await getJson("/api/games");
      const cur = r.ok ? r.data.games.find((g) => g.current) : null;
      const what = cur ? `${roundOf(cur)}, ${standing(cur)}` : `Round ${S.round} of ${S.rounds}`;
      if (!await ask("Start a new game?", `Game in progress: ${what}. It stays saved and can be resumed.`, "Start the new game")) return;
    }
    const r = await api("/api/game", body);
    if (r.status === 401) { showHost(false); return; }
    $("#setup-err").textContent = r.ok ? "" : (r.data.error || "that did not work");
    if (r.ok) { toast("New game started"); setTab("play"); }
  });

  // --- history -------------------------------------------------------------------------
  async function loadHistory() {
    if (!S) return;
    const gid = histGame;
    if (!gid) histSeq = S.seq;
    const r = await getJson(gid ? `/api/games/${encodeURIComponent(gid)}/history` : "/api/history");
    if (gid !== histGame) return;
    const head = $("#hist-head");
    head.hidden = !gid;
    if (!r.ok) {
      $("#history").innerHTML = `<li>${esc(r.data.error || "cannot load the history")}</li>`;
      return;
    }
    const data = r.data;
    if (gid && data.game) {
      const g = data.game;
      $("#hist-title").textContent = `${ednTitle(g)} · ${names(g.players.map((p) => p.name))}`;
      $("#hist-sub").textContent = `${roundOf(g)} · ${when(g.updated)} · ${standing(g)}`;
    }
    // One line per turn (the roll and what its player did with it), the newest first.
    const turns = [];
    for (const a of data.entries) {
      const last = turns[turns.length - 1];
      if (last && a.turn && last.turn === a.turn && a.type !== "roll") {
        last.text += `, then ${a.text.replace(`${a.player} `, "")}`;
        last.round_end = last.round_end || a.round_end;
      } else turns.push({ ...a });
    }
    const items = turns.reverse().map((a) => {
      const dice = a.type === "roll" ? `<div class="dice">${VT.byFace(a.dice).map((d) => die(d.value, d.colour, d.big ? "big" : "")).join("")}</div>` : "";
      const notes = a.type === "deal" && a.casinos ? `<div class="notes">${a.casinos.map((c, i) => `<span class="note">${i + 1}: ${c.map((v) => dollars(v)).join(" + ")}</span>`).join("")}</div>` : "";
      const img = a.photo ? `<button type="button" class="thumb" data-full="${esc(photoUrl(a.photo))}" aria-label="the photo of this roll, full size"><img src="${esc(photoUrl(a.photo, 96))}" alt="photo of the roll" loading="lazy" width="96" height="72"></button>` : "<span></span>";
      const meta = [`Round ${a.round}`, a.turn ? `turn ${a.turn}` : "the deal"];
      const who = a.player ? ` · ${sw(a.colour)}<span>${esc(a.player)}</span>` : "";
      return `<li class="${a.round_end ? "end" : ""}"><div><div class="m">${meta.join(" · ")}${who}</div>` +
        `<div class="t">${esc(a.text)}</div>${dice}${notes}</div>${img}</li>`;
    }).join("");
    $("#history").innerHTML = items || '<li class="muted">Nothing happened yet.</li>';
  }
  $("#hist-back").addEventListener("click", () => { histGame = null; histSeq = -1; setTab("game"); });
})();
