/* The host's page: set up games, deal, confirm what the camera doubts, enter rolls by hand,
   undo, end the game, and look back at every action. Needs the table PIN once. */
"use strict";
(() => {
  const { esc, sw, die, money, $, api, toast } = VT;
  let S = null;
  let tab = "play";
  let playKey = "";
  let draft = { key: "", roll: {}, deal: null, fix: {} };
  let histSeq = -1;

  // --- login ---------------------------------------------------------------------------
  function showHost(on) {
    $("#login").hidden = on;
    $("#host").hidden = !on;
    $("#dock").hidden = !on;
    if (on) setTimeout(() => { if (S) render(S); }, 0);
    else $("#pin").focus();
  }
  async function call(path, body) {
    const r = await api(path, body);
    if (r.status === 401) { showHost(false); toast("Enter the table PIN first", true); }
    else if (!r.ok) toast(r.data.error || `error ${r.status}`, true);
    return r;
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

  // --- tabs ----------------------------------------------------------------------------
  document.querySelectorAll(".tabs button").forEach((b) => b.addEventListener("click", () => setTab(b.dataset.tab)));
  function setTab(name) {
    tab = name;
    document.querySelectorAll(".tabs button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
    for (const t of ["play", "game", "history"]) $(`#tab-${t}`).hidden = t !== name;
    if (name === "history") loadHistory();
    if (name === "game" && S) renderGame(S);
    window.scrollTo(0, 0);
  }

  VT.live(() => "/api/events", (s) => { S = s; render(s); });

  const player = (s, name) => s.players.find((p) => p.name === name);
  const ended = (s) => s.display && s.display.ended;

  function render(s) {
    if ($("#host").hidden) return;
    if (draft.key !== `${s.game_id}/${s.seq}`) {
      draft = { key: `${s.game_id}/${s.seq}`, roll: {}, deal: null, fix: {} };
    }
    const key = JSON.stringify([s.game_id, s.seq, s.phase, s.pending, s.display, s.legal, s.expected_roll, s.over, s.last_roll && s.last_roll.photo, s.roll_held]);
    if (key !== playKey) { playKey = key; renderPlay(s); }
    renderStatus(s);
    if (tab === "game") renderGameCurrent(s);
    if (tab === "history" && s.seq !== histSeq) loadHistory();
  }

  function renderStatus(s) {
    const who = s.to_move ? player(s, s.to_move) : null;
    const el = $("#status");
    el.className = "card status " + (who ? VT.cc(who.colour) : "");
    const what = s.over ? "Game over" : ended(s) ? "Ended by the host"
      : s.phase === "deal" ? "money to deal"
        : s.phase === "neutral" ? "rolls the neutral dice" : s.phase === "choose" || s.roll_held ? "places a number" : "rolls next";
    el.innerHTML = `${who ? sw(who.colour, "lg") : ""}<div><div class="who">${who ? esc(who.name) : `Round ${s.round} of ${s.rounds}`}</div>` +
      `<div class="what">${esc(what)} · action ${s.seq}</div></div>`;
  }

  // --- play tab ------------------------------------------------------------------------
  function renderPlay(s) {
    $("#pending").innerHTML = (s.pending || []).map((p) => pendingCard(s, p)).join("");
    $("#pending").querySelectorAll("img[data-boxes]").forEach(placeBoxes);
    let html = "";
    if (s.over) {
      html = `<div class="card task"><h2>Game over</h2><p>${esc(s.results ? s.results.explanation : "")}.</p>` +
        `<button class="btn primary wide" data-act="goto-game">Set up the next game</button></div>`;
    } else if (ended(s)) {
      html = `<div class="card task"><h2>The game was ended</h2><p class="muted">The scoreboard shows the ranking as it stood.</p>` +
        `<div class="row"><button class="btn" data-act="reopen">Reopen it</button>` +
        `<button class="btn primary" data-act="goto-game">New game</button></div></div>`;
    } else if (s.phase === "deal") {
      html = dealCard(s);
    } else if ((s.pending || []).length) {
      html = "";  // the question above comes first; undo is still there below
    } else if (s.roll_held && s.last_roll) {
      html = heldCard(s);
    } else if (s.phase === "neutral" || s.phase === "roll") {
      html = rollCard(s);
    } else if (s.phase === "choose") {
      html = chooseCard(s);
    }
    $("#play").innerHTML = html;
  }

  function photoUrl(name) { return "/api/photo/" + name.split("/").map(encodeURIComponent).join("/"); }

  function pendingCard(s, p) {
    const who = s.to_move || "the player";
    const fix = draft.fix[p.id] || (draft.fix[p.id] = { dice: p.dice.map((d) => ({ colour: d.colour, value: d.value, big: !!d.big, conf: d.confidence, bbox: d.bbox })), sel: -1 });
    const photo = p.photo ? `<div class="photo-wrap"><img src="${esc(photoUrl(p.photo))}" alt="the roll in question" data-boxes="${p.id}"></div>` : "";
    let body = "";
    if (p.kind === "place") {
      body = `<h2>Which number did ${esc(who)} take?</h2><div class="bigs">` +
        p.candidates.map((v) => `<button class="btn bigbtn" data-act="confirm-value" data-id="${p.id}" data-v="${v}">${die(v, colourFor(s))}${v}</button>`).join("") + "</div>";
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
    return `<div class="card confirm" data-pending="${p.id}">${photo}<p class="muted">${esc(p.message)}</p>${body}</div>`;
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
    const cols = [...new Set([...s.players.map((p) => p.colour), ...(s.expected_roll || []).map((e) => e.colour), "white", "gray", d.colour])];
    return `<div class="editor"><div class="row">${[1, 2, 3, 4, 5, 6].map((v) =>
      `<button class="chipbtn ${d.value === v ? "sel" : ""}" data-act="set-v" data-id="${id}" data-v="${v}" aria-label="value ${v}">${die(v, d.colour)}</button>`).join("")}</div>` +
      `<div class="row">${cols.map((c) => `<button class="chipbtn ${d.colour === c ? "sel" : ""}" data-act="set-c" data-id="${id}" data-c="${esc(c)}" aria-label="${esc(c)}">${sw(c)}</button>`).join("")}</div>` +
      `<div class="row"><label class="switch"><input type="checkbox" data-act="set-big" data-id="${id}" ${d.big ? "checked" : ""}><span>Biggy</span></label>` +
      `<button class="btn danger" data-act="rm-die" data-id="${id}">Remove die</button></div></div>`;
  }

  function placeBoxes(img) {
    const id = Number(img.dataset.boxes);
    const draw = () => {
      const fix = draft.fix[id];
      if (!fix || !img.naturalWidth) return;
      img.parentElement.querySelectorAll(".box").forEach((b) => b.remove());
      fix.dice.forEach((d, i) => {
        if (!d.bbox) return;
        const [x0, y0, x1, y1] = d.bbox;
        const b = document.createElement("button");
        b.className = "box" + ((d.conf ?? 1) >= 0.9 && d.value ? " ok" : "") + (i === fix.sel ? " sel" : "");
        b.dataset.act = "sel"; b.dataset.id = id; b.dataset.i = i;
        b.style.left = `${(100 * x0) / img.naturalWidth}%`;
        b.style.top = `${(100 * y0) / img.naturalHeight}%`;
        b.style.width = `${(100 * (x1 - x0)) / img.naturalWidth}%`;
        b.style.height = `${(100 * (y1 - y0)) / img.naturalHeight}%`;
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
    let html = `<div class="card task"><h2>Money for round ${s.round}</h2>` +
      `<button class="btn primary wide" data-act="deal-app">Let the app deal</button>`;
    if (!d.open) {
      return html + `<p class="center"><button class="btn ghost" data-act="deal-open">Or enter the ${pairs ? "cards" : "notes"} we dealt</button></p></div>`;
    }
    html += `<p class="muted small">Tap a casino, then the ${pairs ? "cards" : "notes"} on it (tap one again to take it off). ` +
      `${pairs ? "Two cards per casino." : "Each casino gets notes until it holds $50,000."}</p><div class="dealrows">` +
      d.casinos.map((notes, i) => `<div class="dealrow ${i === d.active ? "on" : ""}" data-act="deal-row" data-i="${i}">${die(i + 1, "", "c-house")}` +
        `<span class="notes">${notes.map((v, j) => `<span class="note" data-act="deal-rm" data-i="${i}" data-j="${j}">${money(v)}</span>`).join("") || '<span class="muted small">empty</span>'}</span>` +
        `<span class="sum">${notes.length ? money(notes.reduce((a, b) => a + b, 0)) : ""}</span></div>`).join("") +
      `</div><div class="keys">${values.map((v) => `<button class="btn" data-act="deal-add" data-v="${v}">${money(v)}</button>`).join("")}</div>` +
      `<p></p><button class="btn primary wide" data-act="deal-hand">Enter this deal</button></div>`;
    return html;
  }

  function rollCard(s) {
    const who = s.to_move || "";
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
    const title = s.phase === "neutral" ? `${esc(who)} rolls the neutral dice` : `Enter ${esc(who)}'s roll`;
    return `<div class="card task"><h2>${title}</h2><p class="muted small">When the camera cannot see the tray: count the dice by value.</p>${html}` +
      `<p></p><button class="btn primary wide" data-act="roll" ${total === need && need ? "" : "disabled"}>Enter roll (${total}/${need})</button></div>`;
  }

  /** The camera saw the roll but one die is unclear; the placement will most often tell. */
  function heldCard(s) {
    const who = s.to_move || "the player";
    const dice = s.last_roll.dice || [];
    const photo = s.last_roll.photo ? `<div class="photo-wrap"><img src="${esc(photoUrl(s.last_roll.photo))}" alt="the roll"></div>` : "";
    const shown = VT.byFace(dice).map((d) => {
      const unsure = d.value === null || d.confidence < 0.9;
      return die(unsure ? null : d.value, d.colour, (d.big ? "big " : "") + (unsure ? "hl" : ""));
    }).join("");
    return `<div class="card task confirm">${photo}<h2>${esc(who)} rolled</h2><div class="dice">${shown}</div>` +
      `<p>The camera is not sure of a die (?). Place the dice as usual: the dice that leave the tray will tell.</p>` +
      `<button class="btn wide" data-act="check-roll">Check the dice now</button></div>`;
  }

  function chooseCard(s) {
    const who = s.to_move || "";
    const roll = s.roll || [];
    const col = colourFor(s);
    const places = s.legal.filter((a) => a.type === "place");
    const canPass = s.legal.some((a) => a.type === "pass");
    const passLabel = s.edition === "royale" ? "Pass: use a chip" : "Skip this turn";
    const photo = s.last_roll && s.last_roll.photo
      ? `<div class="photo-wrap"><img src="${esc(photoUrl(s.last_roll.photo))}" alt="the roll"></div>` : "";
    return `<div class="card task confirm">${photo}<h2>Which number does ${esc(who)} place?</h2>` +
      `<div class="dice">${VT.byFace(roll).map((d) => die(d.value, d.colour, d.big ? "big" : "")).join("")}</div>` +
      `<div class="bigs">${places.map((a) => {
        const n = roll.filter((d) => d.value === a.value).length;
        return `<button class="btn bigbtn" data-act="place" data-v="${a.value}">${die(a.value, col)}<span>${a.value}</span><small>${n} ${n === 1 ? "die" : "dice"}</small></button>`;
      }).join("")}${canPass ? `<button class="btn bigbtn pass" data-act="pass">${esc(passLabel)}</button>` : ""}</div>` +
      `<p class="muted small">Rolled wrong? Undo takes the roll back.</p></div>`;
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
      case "place": if ((await call("/api/action", { type: "place", value: v })).ok) toast(`Placed the ${v}s`); return;
      case "pass": if ((await call("/api/action", { type: "pass" })).ok) toast("Passed"); return;
      case "confirm-value": if ((await call("/api/confirm", { id, value: v })).ok) toast("Confirmed"); return;
      case "confirm-cand": {
        const i = unsureIndex(fix.dice);
        if (i >= 0) fix.dice[i].value = v;
        await sendDice(id, fix);
        return;
      }
      case "confirm-dice": await sendDice(id, fix); return;
      case "dismiss": if ((await call("/api/confirm", { id, dismiss: true })).ok) toast("Ignored"); return;
      case "sel": fix.sel = fix.sel === Number(b.dataset.i) ? -1 : Number(b.dataset.i); rerender(); return;
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
    if (bad >= 0) { toast(`Die ${bad + 1} has no value yet: tap it and pick one`, true); fix.sel = bad; playKey = ""; render(S); return; }
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
    if (!window.confirm("Make a new table PIN? Every other phone logged in to the controls is logged out.")) return;
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

  function renderGameCurrent(s) {
    const titles = { classic: "Classic (2012)", custom: "Custom Edition", royale: "Royale (2019)" };
    const d = s.display || {};
    $("#current").innerHTML = `<h2>This game</h2><dl class="kv"><dt>Edition</dt><dd>${esc(titles[s.edition] || s.edition)}</dd>` +
      `<dt>Round</dt><dd>${s.round} of ${s.rounds}</dd><dt>Players</dt><dd>${s.players.map((p) => `${sw(p.colour)} ${esc(p.name)}`).join(", ")}</dd></dl>` +
      `<label class="switch"><input type="checkbox" id="cur-hide" ${d.hide_money ? "checked" : ""}><span>Hide money on the scoreboard until the end</span></label>` +
      `<fieldset class="seg"><legend>Money for the next rounds</legend>` +
      `<label><input type="radio" name="cur-deal" value="app" ${d.deal !== "hand" ? "checked" : ""}><span>App deals</span></label>` +
      `<label><input type="radio" name="cur-deal" value="hand" ${d.deal === "hand" ? "checked" : ""}><span>Entered by hand</span></label></fieldset>` +
      (s.over ? "" : d.ended ? '<button class="btn wide" id="cur-reopen">Reopen the game</button>'
        : '<button class="btn danger wide" id="cur-end">End the game now</button>');
    $("#cur-hide").addEventListener("change", async (e) => {
      if ((await call("/api/display", { hide_money: e.target.checked })).ok) toast(e.target.checked ? "Money hidden" : "Money shown");
    });
    document.querySelectorAll("input[name=cur-deal]").forEach((r) => r.addEventListener("change", async (e) => {
      if ((await call("/api/display", { deal: e.target.value })).ok) toast("Saved");
    }));
    const end = $("#cur-end");
    if (end) end.addEventListener("click", async () => {
      if (!confirm("End this game now? The scoreboard will show the ranking as it stands.")) return;
      if ((await call("/api/end", { ended: true })).ok) toast("Game ended");
    });
    const re = $("#cur-reopen");
    if (re) re.addEventListener("click", async () => { if ((await call("/api/end", { ended: false })).ok) toast("Game reopened"); });
  }

  const edition = () => document.querySelector("input[name=edition]:checked").value;
  function renderOptions() {
    const ed = edition();
    const box = $("#options");
    if (ed === "classic") {
      box.innerHTML = '<label class="switch"><input type="checkbox" id="opt-neutral"><span>Neutral white dice (2–4 players)</span></label>';
    } else if (ed === "custom") {
      box.innerHTML = '<label class="field">Skip rule<select id="opt-skip"><option value="none">No skipping</option>' +
        '<option value="A">A: pay $1 to skip</option><option value="B">B: skip cards</option></select></label>' +
        '<label class="field">Skips per player and round<input id="opt-limit" type="number" min="1" inputmode="numeric" placeholder="no limit"></label>' +
        '<label class="field">Rounds<input id="opt-rounds" type="number" min="1" max="10" inputmode="numeric" placeholder="4, or 3 with a skip rule"></label>';
    } else {
      box.innerHTML = '<p class="muted small">Basic game: 3 rounds, one Biggy die per player, two chips each round.</p>';
    }
  }
  document.querySelectorAll("input[name=edition]").forEach((r) => r.addEventListener("change", renderOptions));

  function setupPlayers(rows, start) {
    const box = $("#players-edit");
    box.innerHTML = "";
    rows.forEach((r, i) => addRow(r, i === start));
    if (start < 0 && box.firstElementChild) box.firstElementChild.querySelector(".star").classList.add("on");
  }
  function addRow(r = {}, starts = false) {
    const box = $("#players-edit");
    const used = [...box.querySelectorAll("select")].map((s) => s.value);
    const colour = r.colour || VT.COLOURS.find((c) => !used.includes(c)) || "red";
    const div = document.createElement("div");
    div.className = "prow";
    div.innerHTML = `<button type="button" class="star ${starts ? "on" : ""}" aria-label="start player">★</button>` +
      `<input class="pname" type="text" maxlength="20" placeholder="Name" value="${esc(r.name || "")}" aria-label="player name">` +
      `<span class="colsel">${sw(colour)}<select class="pcolour" aria-label="dice colour">${VT.COLOURS.map((c) => `<option ${c === colour ? "selected" : ""}>${c}</option>`).join("")}</select></span>` +
      '<button type="button" class="rm" aria-label="remove player">✕</button>';
    box.appendChild(div);
  }
  $("#add-player").addEventListener("click", () => { if ($("#players-edit").children.length < 8) addRow(); });
  $("#players-edit").addEventListener("click", (e) => {
    const row = e.target.closest(".prow");
    if (!row) return;
    if (e.target.closest(".star")) {
      document.querySelectorAll("#players-edit .star").forEach((s) => s.classList.toggle("on", s.closest(".prow") === row));
    } else if (e.target.closest(".rm") && $("#players-edit").children.length > 2) {
      const wasStart = row.querySelector(".star.on");
      row.remove();
      if (wasStart) $("#players-edit .star").classList.add("on");
    }
  });
  $("#players-edit").addEventListener("change", (e) => {
    if (e.target.classList.contains("pcolour")) e.target.previousElementSibling.className = "sw " + VT.cc(e.target.value);
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
    const body = { edition: ed, players, options, start_player: start,
      deal: document.querySelector("input[name=deal]:checked").value, hide_money: $("#hide-money").checked };
    const empty = players.findIndex((p) => !p.name);
    if (empty >= 0) { $("#setup-err").textContent = `Player ${empty + 1} needs a name`; return; }
    const r = await api("/api/game", body);
    if (r.status === 401) { showHost(false); return; }
    $("#setup-err").textContent = r.ok ? "" : (r.data.error || "that did not work");
    if (r.ok) { toast("New game started"); setTab("play"); }
  });

  // --- history -------------------------------------------------------------------------
  async function loadHistory() {
    if (!S) return;
    histSeq = S.seq;
    let data;
    try {
      const r = await fetch("/api/history", { credentials: "same-origin" });
      data = await r.json();
      if (!r.ok) { $("#history").innerHTML = `<li>${esc(data.error || "cannot load the history")}</li>`; return; }
    } catch (e) { return; }
    const items = data.entries.slice().reverse().map((a) => {
      const dice = a.type === "roll" ? `<div class="dice">${VT.byFace(a.dice).map((d) => die(d.value, d.colour, d.big ? "big" : "")).join("")}</div>` : "";
      const notes = a.type === "deal" && a.casinos ? `<div class="notes">${a.casinos.map((c, i) => `<span class="note">${i + 1}: ${c.map((v) => money(v)).join(" + ")}</span>`).join("")}</div>` : "";
      const img = a.photo ? `<img src="${esc(photoUrl(a.photo))}" alt="photo of the roll" loading="lazy" data-big="${esc(photoUrl(a.photo))}">` : "<span></span>";
      return `<li class="${a.round_end ? "end" : ""}"><div><div class="m">#${a.seq} · round ${a.round}${a.colour ? " · " + sw(a.colour) : ""}</div>` +
        `<div class="t">${esc(a.text)}</div>${dice}${notes}</div>${img}</li>`;
    }).join("");
    $("#history").innerHTML = items || '<li class="muted">Nothing happened yet.</li>';
  }
  $("#history").addEventListener("click", (e) => {
    const img = e.target.closest("img[data-big]");
    if (img) window.open(img.dataset.big, "_blank", "noopener");
  });
})();
