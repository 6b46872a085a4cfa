/* The scoreboard: everyone's phone (and the TV). Renders each state the table sends. */
"use strict";
(() => {
  const { esc, sw, die, money, colourOf, $ } = VT;
  const ME = "vt-me";
  let me = {};
  try { me = JSON.parse(localStorage.getItem(ME) || "{}") || {}; } catch (e) { me = {}; }
  let S = null;
  let prevDice = null;

  const url = () => "/api/events" + (me.name ? "?me=" + encodeURIComponent(me.name) : "");
  const conn = VT.live(url, render);
  VT.keepAwake();

  function saveMe(colour, name) {
    me = colour ? { colour, name } : {};
    localStorage.setItem(ME, JSON.stringify(me));
    conn.reopen();
  }

  const isNeutral = (s, name) => !(s.players || []).some((p) => p.name === name);
  const label = (s, name) => (isNeutral(s, name) ? "neutral" : name);
  const player = (s, name) => (s.players || []).find((p) => p.name === name);

  function render(s) {
    S = s;
    // Picked a colour on an earlier game: follow the colour, whoever holds it now.
    const mine = me.colour && s.players.find((p) => p.colour === me.colour);
    if (me.colour && (mine ? mine.name : "") !== (me.name || "")) {
      saveMe(mine ? me.colour : "", mine ? mine.name : "");
      if (!mine) me = {};
      return;
    }
    document.title = s.over ? "Game over · Vegas Table" : `Round ${s.round} · Vegas Table`;
    $("#round").innerHTML = s.over ? "<b>Game over</b>" : `Round <b>${s.round}</b> of ${s.rounds}`;
    const meP = player(s, s.me);
    $("#me-sw").className = "sw " + (meP ? VT.cc(meP.colour) : "c-x");
    $("#me-name").textContent = meP ? meP.name : "Me?";
    const done = s.over || !!(s.display && s.display.ended);
    $("#turn").hidden = done;
    $("#casinos").hidden = done;
    $("#casinos-h").hidden = done;
    renderTurn(s);
    renderPending(s);
    renderFinal(s);
    renderRoll(s);
    renderSummary(s);
    renderCasinos(s);
    renderPlayers(s);
    renderEarlier(s);
  }

  function renderTurn(s) {
    const el = $("#turn");
    const who = s.to_move ? player(s, s.to_move) : null;
    el.className = "turn card " + (who ? VT.cc(who.colour) : "");
    let title = "";
    let what = "";
    let side = "";
    if (s.over || (s.display && s.display.ended)) {
      const w = s.results ? s.results.winners : [];
      title = w.length ? `${w.map(esc).join(" & ")} ${w.length > 1 ? "win" : "wins"}` : "Game over";
      what = s.over ? "Game over" : "The host ended the game";
    } else if (s.phase === "deal") {
      title = `Round ${s.round}`;
      what = s.display && s.display.deal === "hand" ? "The money is being dealt" : "Dealing the money…";
    } else if (who) {
      title = esc(who.name);
      what = s.phase === "neutral" ? "rolls the neutral dice"
        : s.phase === "choose" || s.roll_held ? "is choosing a number" : "to roll";
      side = `<b>${who.dice_left}</b>${who.dice_left === 1 ? "die" : "dice"} left`;
    }
    el.innerHTML = `${who ? sw(who.colour, "lg") : ""}<div><div class="who">${title}</div>` +
      `<div class="what">${what}</div></div><div class="side">${side}</div>`;
  }

  function renderPending(s) {
    const el = $("#pending");
    const p = (s.pending || [])[0];
    el.hidden = !p;
    if (p) el.textContent = p.kind === "place" ? "Which number was taken? The table is asked."
      : "The camera is checking this roll with the table…";
  }

  function renderFinal(s) {
    const el = $("#final");
    const r = s.results;
    el.hidden = !r;
    if (!r) return;
    const rows = r.ranking.map((row) => {
      const p = player(s, row.player) || {};
      return `<li class="${row.place === 1 ? "first" : ""}"><span class="pl">${row.place}</span>` +
        `${sw(p.colour)}<span class="nm">${esc(row.player)}</span><span class="sc">${money(row.score, true)}</span></li>`;
    }).join("");
    el.innerHTML = `<h2>${s.over ? "Final ranking" : "Ranking when the game was ended"}</h2>` +
      `<ol class="rank">${rows}</ol><p class="why">${esc(r.explanation)}.${tieBelow(r)}</p>`;
  }

  /** Places below the top decided by the tie-break get the rule spelled out too. */
  function tieBelow(r) {
    const top = r.ranking[0] ? r.ranking[0].score : null;
    const scores = r.ranking.filter((x) => x.score !== top).map((x) => x.score);
    return new Set(scores).size < scores.length ? ` Equal money below: ${esc(r.tiebreak_rule)} decides.` : "";
  }

  function renderRoll(s) {
    const el = $("#roll");
    const photo = s.last_roll && s.last_roll.photo ? `/api/photo/${s.last_roll.photo.split("/").map(encodeURIComponent).join("/")}` : "";
    let head = "";
    let dice = "";
    const sorted = VT.byFace;
    if (s.roll && s.to_move) {
      head = `<b>${esc(s.to_move)}</b> rolled`;
      dice = sorted(s.roll).map((d) => die(d.value, d.colour, d.big ? "big" : "")).join("");
    } else if (s.roll_held && s.last_roll && s.to_move) {
      // Seen, but a die is below the line: the placement will read it (the photo is this roll).
      head = `<b>${esc(s.to_move)}</b> rolled <span class="muted">· one die unclear</span>`;
      dice = sorted(s.last_roll.dice).map((d) => {
        const unsure = d.value === null || d.confidence < 0.9;
        return die(unsure ? null : d.value, d.colour, (d.big ? "big " : "") + (unsure ? "hl" : ""));
      }).join("");
    } else if (s.last) {
      const l = s.last;
      head = l.neutral ? `<b>${esc(l.player)}</b> rolled the neutral dice`
        : l.passed ? `<b>${esc(l.player)}</b> passed` : `<b>${esc(l.player)}</b> placed the ${l.value}s`;
      dice = sorted(l.dice).map((d) => die(d.value, d.colour,
        (d.big ? "big " : "") + (l.value && d.value !== l.value ? "dim" : l.value ? "hl" : ""))).join("");
    }
    el.hidden = !head || s.over || !!(s.display && s.display.ended);
    if (el.hidden) return;
    el.className = "card roll" + (photo ? "" : " nophoto");
    el.innerHTML = (photo ? `<img class="photo" src="${esc(photo)}" alt="photo of the roll" loading="lazy">` : "") +
      `<div><div class="label">${head}</div><div class="dice">${dice}</div></div>`;
    const img = el.querySelector(".photo");
    if (img) img.addEventListener("click", () => { $("#photo-big").src = photo; $("#photo-dialog").showModal(); });
  }

  function paidList(s, casinos) {
    return casinos.map((c) => {
      const pays = c.payouts.map((p) => `<span class="who">${sw(colourOf(s, p.player))}${esc(label(s, p.player))} ${money(p.amount)}</span>`);
      const gone = c.cancelled.map((n) => `<span class="who"><s>${esc(label(s, n))}</s></span>`);
      const left = c.unclaimed.length ? `<span class="muted small">${c.unclaimed.map((v) => money(v)).join(" ")} unclaimed</span>` : "";
      return `<li>${die(c.casino, "", "c-house")}${pays.join("") || '<span class="muted small">nobody</span>'}` +
        `${gone.length ? '<span class="tag">tie</span>' + gone.join("") : ""}${left}</li>`;
    }).join("");
  }

  function renderSummary(s) {
    const el = $("#summary");
    const rr = s.round_results || [];
    const last = rr[rr.length - 1];
    const fresh = last && !s.over && s.casinos.every((c) => Object.keys(c.dice).length === 0);
    const show = last && (fresh || s.over) && last.casinos.length;
    el.hidden = !show;
    if (!show) return;
    const mineNow = s.me && last.money && last.money[s.me] !== undefined
      ? `<p class="muted small">You now have ${money(last.money[s.me], true)}.</p>` : "";
    el.innerHTML = `<h2>Round ${last.round} paid out</h2><ul class="paid">${paidList(s, last.casinos)}</ul>${mineNow}`;
  }

  function renderEarlier(s) {
    const el = $("#earlier");
    const rr = (s.round_results || []).filter((r) => r.casinos.length);
    el.innerHTML = rr.length ? `<details><summary>Payouts of earlier rounds</summary>` +
      rr.map((r) => `<h3 class="small">Round ${r.round}</h3><ul class="paid">${paidList(s, r.casinos)}</ul>`).join("") +
      "</details>" : "";
  }

  function renderCasinos(s) {
    const el = $("#casinos");
    const now = {};
    const html = s.casinos.map((c) => {
      const proj = Object.fromEntries(c.projected.map((p) => [p.player, p.amount]));
      const tied = new Set(c.tied);
      const names = Object.keys(c.weights || c.dice).sort((a, b) => (c.weights[b] - c.weights[a]) || (a > b ? 1 : -1));
      now[c.casino] = JSON.stringify(c.dice);
      const stakes = names.map((n) => {
        // A Biggy counts as two: show what decides the majority, and mark the Biggy.
        const nb = (c.big && c.big[n]) || 0;
        const big = nb ? `<i class="bigmark" title="${nb} Biggy, counts as two"></i>` : "";
        const status = tied.has(n) ? '<span class="tag">tie</span>'
          : proj[n] !== undefined ? `<span class="pay">+${money(proj[n])}</span>` : "";
        return `<li class="stake ${tied.has(n) ? "tied" : ""}">${sw(colourOf(s, n))}<span class="n">${(c.weights && c.weights[n]) || c.dice[n] || 0}</span>` +
          `${big}<span class="nm">${esc(label(s, n))}</span>${status}</li>`;
      }).join("");
      // Notes are paid high to low, one per ranked player: the first ones are taken.
      const notes = [...c.notes].sort((a, b) => b - a).map((v, i) =>
        `<span class="note ${i < c.projected.length ? "won" : ""}">${money(v)}</span>`).join("");
      const total = c.notes.reduce((a, b) => a + b, 0);
      return `<article class="casino" data-casino="${c.casino}"><header>${die(c.casino, "", "c-house")}` +
        `<span class="total">${total ? money(total) : ""}</span></header>` +
        `<div class="notes">${notes || '<span class="muted small">no money yet</span>'}</div>` +
        `<ul class="stakes">${stakes || '<li class="empty">no dice yet</li>'}</ul></article>`;
    }).join("");
    el.innerHTML = html;
    $("#casinos-h").innerHTML = s.edition === "royale"
      ? 'Casinos <span class="h-note"><i class="bigmark"></i> Biggy: counts as two dice</span>' : "Casinos";
    if (prevDice && prevDice.game === s.game_id) {
      for (const [k, v] of Object.entries(now)) {
        if (prevDice[k] !== v && v !== "{}") el.querySelector(`[data-casino="${k}"]`).classList.add("bump");
      }
    }
    prevDice = { ...now, game: s.game_id };
  }

  function renderPlayers(s) {
    const el = $("#players");
    const hidden = s.display && s.display.money_hidden;
    $("#money-note").textContent = hidden ? "money stays face down until the end" : "";
    const places = s.results ? Object.fromEntries(s.results.ranking.map((r) => [r.player, r.place])) : {};
    const order = [...s.players];
    if (s.results) order.sort((a, b) => places[a.name] - places[b.name]);
    el.innerHTML = order.map((p) => {
      const you = p.name === s.me ? '<span class="you">you</span>' : "";
      const turn = p.name === s.to_move && !s.over ? "turn-now" : "";
      const m = p.money === null ? '<span class="money hid" title="face down">●●●</span>'
        : `<span class="money">${money(p.money, true)}</span>`;
      const hand = Object.entries(p.hand || {}).map(([k, n]) =>
        `<span class="hand ${VT.cc(k.split(" ")[0])}">${"<i></i>".repeat(Math.min(n, 12))}</span>`).join("");
      const extras = [];
      if (s.edition === "royale") extras.push(`${p.chips} chip${p.chips === 1 ? "" : "s"}`);
      if (s.options && s.options.skip_rule === "B") extras.push(`${p.skip_cards} skip card${p.skip_cards === 1 ? "" : "s"}`);
      if (places[p.name]) extras.unshift(["1st", "2nd", "3rd"][places[p.name] - 1] || `${places[p.name]}th`);
      const notes = (p.notes || []).map((v) => `<span class="note">${money(v)}</span>`).join("");
      return `<div class="player ${VT.cc(p.colour)} ${turn}">${sw(p.colour)}<span class="nm">${esc(p.name)}${you}</span>${m}` +
        `<span class="meta">${s.over ? "" : p.dice_left ? `${hand}<span>${p.dice_left} ${p.dice_left === 1 ? "die" : "dice"}</span>` : "<span>no dice left</span>"}` +
        `${extras.map((x) => `<span>${esc(x)}</span>`).join("")}</span>` +
        `<span class="notes">${notes}</span></div>`;
    }).join("");
  }

  // A TV shows how to join; phones never load the picture.
  const tv = matchMedia("(min-width: 1100px)");
  const join = () => {
    if (!tv.matches || $("#join").innerHTML) return;
    $("#join").innerHTML = `<img src="/qr.svg" alt="QR code of this page" width="120" height="120">` +
      `<div><h2>Follow on your phone</h2><p class="muted small">${esc(location.origin)}/</p></div>`;
  };
  tv.addEventListener("change", join);
  join();

  // Picking "me": the colour on this phone, so it may show its own money when hidden.
  $("#me-btn").addEventListener("click", () => {
    if (!S) return;
    const box = $("#me-choices");
    box.innerHTML = S.players.map((p) => `<button class="btn" value="${esc(p.colour)}">${sw(p.colour)}${esc(p.name)}</button>`).join("") +
      '<button class="btn ghost" value="">Nobody, I am watching</button>';
    $("#me-dialog").showModal();
  });
  $("#me-choices").addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b || !S) return;
    e.preventDefault();
    const p = S.players.find((q) => q.colour === b.value);
    saveMe(p ? p.colour : "", p ? p.name : "");
    $("#me-dialog").close();
  });
})();
