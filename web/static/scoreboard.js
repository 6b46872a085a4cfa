/* The scoreboard: everyone's phone (and the TV). Renders each state the table sends. */
"use strict";
(() => {
  const { esc, sw, die, money, colourOf, $ } = VT;
  const ME = "vt-me";
  let me = {};
  try { me = JSON.parse(localStorage.getItem(ME) || "{}") || {}; } catch (e) { me = {}; }
  let S = null;
  let prevDice = null;
  let dismissed = "";  // the payout a tap put away: "game:round"
  let summaryRound = 0;  // the round whose payout is on screen above the log
  const PHOTO_WIDTHS = [160, 240, 320, 480, 640, 800, 960, 1280, 1600];

  const url = () => "/api/events" + (me.name ? "?me=" + encodeURIComponent(me.name) : "");
  const conn = VT.live(url, render);
  VT.keepAwake();

  function saveMe(colour, name) {
    me = colour ? { colour, name } : {};
    localStorage.setItem(ME, JSON.stringify(me));
    conn.reopen();
  }

  /** One money style on the whole page: "$80,000" on a note, in a total and in a gap. */
  const cash = (v) => money(v, true);
  const isNeutral = (s, name) => !(s.players || []).some((p) => p.name === name);
  // Royale's gray dice are blank: an imaginary player of their own, not the neutral dice.
  const label = (s, name) => (!isNeutral(s, name) ? name : name === "gray" ? "blank dice" : "neutral dice");
  const player = (s, name) => (s.players || []).find((p) => p.name === name);
  const ended = (s) => s.over || !!(s.display && s.display.ended);
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const ordinal = (n) => n + (n % 100 >= 11 && n % 100 <= 13 ? "th" : ["th", "st", "nd", "rd"][n % 10] || "th");
  /** "anna", "anna and benno", "anna, benno and carla". */
  const and = (xs) => (xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);
  const who = (s, name, pre = "") => `<span class="who">${pre}${sw(colourOf(s, name))}${esc(label(s, name))}</span>`;

  function render(s) {
    S = s;
    // Picked a colour on an earlier game: follow the colour, whoever holds it now.
    const mine = me.colour && s.players.find((p) => p.colour === me.colour);
    if (me.colour && (mine ? mine.name : "") !== (me.name || "")) {
      saveMe(mine ? me.colour : "", mine ? mine.name : "");
      if (!mine) me = {};
      return;
    }
    const done = ended(s);
    const head = s.over ? "Game over" : done ? "Game ended" : `Round ${s.round} of ${s.rounds}`;
    document.title = `${head} · Vegas Table`;
    $("#round").innerHTML = s.over ? "<b>Game over</b>" : done ? "<b>Game ended</b>"
      : `Round <b>${s.round}</b> of ${s.rounds}`;
    const meP = player(s, s.me);
    $("#me-sw").className = "sw " + (meP ? VT.cc(meP.colour) : "c-x");
    $("#me-name").textContent = meP ? meP.name : "Me?";
    $("#turn").hidden = done;
    $("#casinos").hidden = done;
    $("#casinos-h").hidden = done;
    renderTurn(s);
    renderDecision(s);
    renderPending(s);
    renderFinal(s);
    renderSummary(s);
    renderRoll(s);
    renderCasinos(s);
    renderPlayers(s);
    renderLog(s);
    renderEarlier(s);
  }

  function renderTurn(s) {
    const el = $("#turn");
    const mover = s.to_move ? player(s, s.to_move) : null;
    el.className = "turn card " + (mover ? VT.cc(mover.colour) : "");
    let title = "";
    let what = "";
    let side = "";
    if (s.phase === "deal") {
      title = `Round ${s.round}`;
      what = s.display && s.display.deal === "hand" ? "The money is being dealt" : "Dealing the money…";
    } else if (mover && s.phase === "tile" && tilePending(s)) {
      const tp = tilePending(s);
      title = esc(mover.name);
      what = tp.roll ? `throws the black dice for ${esc(tp.name)}`
        : `decides for ${esc(tp.name)}${tp.secret ? ", in secret" : ""}`;
    } else if (mover) {
      title = esc(mover.name);
      what = s.phase === "neutral" ? "rolls the neutral dice"
        : s.phase === "choose" || s.roll_held ? "is choosing a number" : "to roll";
      side = `<b>${mover.dice_left}</b>${mover.dice_left === 1 ? "die" : "dice"} left`;
    }
    el.innerHTML = `${mover ? sw(mover.colour, "lg") : ""}<div><div class="who">${title}</div>` +
      `<div class="what">${what}</div></div><div class="side">${side}</div>`;
  }

  // --- Royale's casino tiles --------------------------------------------------------------
  /** The sixteen faces: the name printed on each and what it does, in a line. */
  const FACES = {
    A1: ["Lucky Punch", "hold 1-3 tokens in secret; the next player guesses"],
    A2: ["Jackpot", "throw the black dice: a 7 or a double wins the jackpot"],
    B1: ["Prime Time", "the winner throws the black dice before payout"],
    B2: ["Fifty Fifty", "take the reward or bet higher or lower"],
    C1: ["High Five", "the fifth die here takes the token: $100,000"],
    C2: ["Bad Luck", "the fewest dice here pay $50,000"],
    D1: ["Pay Day", "$10,000 for each casino holding your dice"],
    D2: ["Power Play", "the clear majority takes the token"],
    E1: ["No Entry!", "close a casino and move on the reward track"],
    E2: ["Knockout!", "each opponent puts a die in the bar"],
    F1: ["Block It!", "put a cluster of blank dice in a casino"],
    F2: ["Handicap", "take a blank die for a reward"],
    G1: ["Black Box", "the winner picks one of two face-down piles"],
    G2: ["Double Down", "move dice onto the tile: paid like a casino"],
    H1: ["Nice Dice", "a die onto the tile's space of its number"],
    H2: ["My Choice", "throw the black dice and pick a result"],
  };
  const faceName = (code) => (FACES[code] || [code])[0];
  const tilePending = (s) => (s.tiles && s.tiles.pending && s.tiles.pending[0]) || null;
  /** The question without the tile's name in front: the card's heading says it. */
  const askText = (p) => (p.ask.startsWith(p.name + ": ") ? p.ask.slice(p.name.length + 2) : p.ask);

  /** A tile's decision: the question and its answers on the deciding player's own phone (a
      secret one only there), "Waiting: ..." on everyone else's. */
  function renderDecision(s) {
    const el = $("#decide");
    const p = tilePending(s);
    el.hidden = !p || ended(s);
    if (el.hidden) {
      el.dataset.key = "";
      return;
    }
    const mine = !!s.me && p.player === s.me;
    const key = JSON.stringify([s.game_id, s.seq, s.me, p]);
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    const pl = player(s, p.player);
    el.className = `card decide ${pl ? VT.cc(pl.colour) : ""}${mine ? " mine" : ""}${p.secret ? " secret" : ""}`;
    const head = `<h2><span class="tile-badge">${esc(p.name)}</span> <span class="at">casino ${p.casino}</span></h2>`;
    if (mine) {
      const answers = p.roll
        ? '<p class="throw">Throw the two black dice in the tray: the table reads them.</p>'
        : `<div class="answers">${p.choices.map((c, i) =>
          `<button class="btn answer" type="button" data-i="${i}">${esc(c.label)}</button>`).join("")}</div>`;
      el.innerHTML = head + (p.secret ? '<p class="secret-note"><b>Secret: only you see this.</b> ' +
        "Keep your screen to yourself; the others learn it when the tile says.</p>" : "") +
        `<p class="ask">${esc(askText(p))}</p>${answers}<p class="sent" aria-live="polite"></p>`;
      return;
    }
    const doing = p.roll ? "throws the black dice" : p.secret ? "decides in secret" : "decides";
    const claim = !s.me && pl ? `<p class="hint">${esc(p.player)}, is this your phone? Tap <b>Me?</b> ` +
      "above and pick your colour to answer here.</p>" : "";
    el.innerHTML = `<p class="waiting">Waiting: ${who(s, p.player)} ${doing} for ${esc(p.name)}</p>` +
      (p.secret ? "" : `<p class="ask">${esc(askText(p))}</p>`) + claim;
  }
  $("#decide").addEventListener("click", async (e) => {
    const b = e.target.closest(".answer");
    const el = $("#decide");
    const p = S && tilePending(S);
    const c = p && p.choices[Number(b && b.dataset.i)];
    if (!b || !c || b.disabled) return;
    const key = el.dataset.key;
    el.querySelectorAll(".answer").forEach((x) => { x.disabled = true; });
    b.classList.add("chosen");
    const said = el.querySelector(".sent");
    said.textContent = "Sending…";
    const answer = { player: S.me, tile: c.tile, choice: c.choice };
    if (c.value !== undefined && c.value !== null) answer.value = c.value;
    const r = await VT.api("/api/answer", answer);
    if (el.dataset.key !== key) return;  // the stream moved on already
    if (r.ok) {
      said.textContent = `Sent: ${c.label}. The table moves on…`;
      return;
    }
    VT.toast(r.data.error || "that did not work", true);
    el.dataset.key = "";
    renderDecision(S);
  });

  /** What a tile shows: its counters, tokens and dice, in words. */
  function tileFacts(s, t) {
    const out = [];
    const holder = (name, what) => (name ? `${what}: ${who(s, name)}` : `${what} on the tile`);
    if (t.tile === "A2") out.push(`Jackpot <b>${cash(t.counter)}</b>`);
    if (t.tile === "B2") {
      out.push(t.counter ? `Counter on <b>${cash(t.reward)}</b>` : "Counter at the start");
      if (t.last) out.push(`last throw ${t.last}`);
    }
    if (t.tile === "C1" || t.tile === "D2") out.push(holder(t.token, "Token"));
    if (t.tile === "E1") {
      out.push(t.closed ? `<b>Casino ${t.closed} closed</b>` : "No casino closed yet");
      const track = t.track || [];
      const next = t.counter < track.length ? track[t.counter] : undefined;
      const prize = (v) => (v === null ? "no reward" : typeof v === "number" ? cash(v)
        : v === "chip" ? "1 chip" : v === "chips2" ? "2 chips" : esc(v));
      out.push(`Reward track ${t.counter} of ${track.length}` +
        (next === undefined ? ", at the end" : `, next space: ${prize(next)}`));
    }
    if (t.tile === "E2") {
      const bar = Object.entries(t.bar || {}).filter(([, n]) => n);
      out.push(bar.length ? `In the bar: ${bar.map(([n, k]) => `${who(s, n)} ${k}`).join(", ")}` : "The bar is empty");
    }
    if (t.tile === "F1") {
      out.push(t.clusters && t.clusters.length ? `Blank dice left: clusters of ${and(t.clusters.map(String))}`
        : "No blank dice left");
    }
    if (t.tile === "F2") {
      const names = { chip: "1 chip", money: cash(30000), option: "turn or take back a die" };
      out.push("Pictures filled:");
      for (const [k, v] of Object.entries(t.pictures || {})) out.push(`${names[k] || esc(k)} <b>${v.filled}</b>/${v.of}`);
    }
    if (t.tile === "G1") out.push(t.piles ? `Piles of ${t.piles[0]} and ${t.piles[1]} tokens, face down` : "Six tokens on the tile");
    if (t.tile === "G2") {
      const on = Object.entries(t.dice || {});
      out.push(on.length ? `On the tile: ${on.map(([n, k]) => `${who(s, n)} ${k}`).join(", ")}` : "No dice on the tile");
    }
    if (t.tile === "H1") {
      const on = Object.entries(t.spaces || {});
      out.push(on.length ? `On its spaces: ${on.map(([v, d]) => die(Number(v), d.colour, d.big ? "big" : "")).join("")}`
        : "Its spaces are empty");
    }
    if (t.tile === "H2") out.push(t.golden ? `Golden space: ${who(s, t.golden)}` : "Golden space empty");
    return out;
  }

  function tileBox(s, t) {
    const p = tilePending(s);
    const asking = p && p.casino === t.casino && !ended(s);
    const facts = tileFacts(s, t).map((f) => `<li>${f}</li>`).join("");
    return `<div class="tile${asking ? " asking" : ""}" data-tile="${esc(t.tile)}"><div class="tile-top">` +
      `<span class="tile-badge">${esc(t.name || faceName(t.tile))}</span>` +
      `<span class="tile-does">${esc((FACES[t.tile] || ["", ""])[1])}</span></div>` +
      (facts ? `<ul class="tile-facts">${facts}</ul>` : "") + "</div>";
  }

  // --- what the tiles did, in words (the game log) ------------------------------------------
  const CHOSE = {
    keep: "said no", none: "took none", take: "took it", roll: "rolls as usual", guess: "guessed {v}",
    higher: "bet higher", lower: "bet lower", one: "placed the {v}", both: "placed both",
    move: "moved {v} dice onto the tile", move_biggy: "moved the Biggy and {v} dice onto the tile",
    die: "chose a small die", biggy: "chose the Biggy", cluster: "took the cluster of {v} blank dice",
    casino: "chose casino {v}", activate: "activated casino {v}'s tile", result: "chose {v}",
    rotate: "turned a die to {v}", rotate_biggy: "turned the Biggy to {v}",
    return: "took a die back from casino {v}", return_biggy: "took the Biggy back from casino {v}",
    power: "passed and put a die in casino {v}", power_biggy: "passed and put the Biggy in casino {v}",
    chip: "took 1 chip", money: `took ${cash(30000)}`, option: "took the turn-or-take-back",
    split: "split the tokens {v} + {r}", pile: "chose pile {v}",
  };
  const CHOSE_ON = {
    E1: { keep: "left the token where it is", casino: "closed casino {v}" },
    E2: { die: "put a small die in the bar", biggy: "put the Biggy in the bar" },
    F2: { take: "took a blank die from casino {v}", none: "took no blank die" },
    G2: { keep: "left the dice in the casino" },
    H1: { die: "put the {v} onto the tile", biggy: "put the Biggy ({v}) onto the tile", keep: "kept the dice" },
    B2: { take: "took the reward" },
  };
  const chose = (e) => ((CHOSE_ON[e.tile] || {})[e.choice] || CHOSE[e.choice] || `chose ${e.choice}${e.value == null ? "" : " " + e.value}`)
    .replace("{v}", e.value).replace("{r}", 6 - e.value);

  /** Money and chips a tile gave, said together: "2 chips and $40,000". */
  const gains = (ns) => and(ns.map((n) => (n.kind === "chips" ? plural(n.chips, "chip", "chips") : cash(n.paid))));

  /** The engine's notices as sentences: a tile's doing with the money it brought. */
  function noticeLines(s, notices) {
    const out = [];
    for (let i = 0; i < notices.length; i++) {
      const n = notices[i];
      const name = esc(n.name || faceName(n.tile));
      const p = n.player ? who(s, n.player) : "";
      if (n.kind !== "tile") {
        const what = n.kind === "bank" ? `gets ${cash(n.paid)} from the bank${n.paid < n.owed ? ` (it had no more; ${cash(n.owed)} was due)` : ""}`
          : n.kind === "chips" ? `gets ${plural(n.chips, "chip", "chips")}`
            : n.kind === "pays" ? `pays ${cash(Math.min(n.paid, n.owed))} into the bank${n.paid < n.owed ? " (all they had)" : ""}` : "";
        if (what) out.push(`${name}: ${p} ${what}`);
        continue;
      }
      // The money this doing brought follows it: the same tile's bank and chips notices.
      const won = [];
      while (i + 1 < notices.length && ["bank", "chips"].includes(notices[i + 1].kind) && notices[i + 1].tile === n.tile) {
        won.push(notices[++i]);
      }
      const to = won.length ? won[0].player : n.player;
      const gets = won.length ? `: ${who(s, to)} gets ${gains(won)}` : "";
      const th = (n.thrown || []).join(" and ");
      let line;
      if (n.did === "drawn") line = `${name} lies beside casino ${n.casino}`;
      else if (n.did === "jackpot") line = `${name}: ${p} threw ${th} and won ${cash(won.length ? won[0].paid : n.amount)} from the bank`;
      else if (n.did === "advance") line = `${name}: ${p} threw ${th}: no luck, the jackpot grows to ${cash(n.amount)}`;
      else if (n.did === "revealed" && "held" in n) {
        line = `${name}: ${who(s, n.guesser)} guessed ${n.guess}, ${p} held ${n.held}` +
          (n.right ? `: right, nothing for ${p}` : gets || `: ${p} gets nothing more`);
      } else if (n.did === "revealed") {
        line = `${name}: ${p} chose pile ${n.pile} (${plural(n.tokens, "token", "tokens")})` + (gets || "");
      } else if (n.did === "fist") line = `${name}: ${p} chose in secret; ${who(s, n.guesser)} guesses how many tokens`;
      else if (n.did === "split") line = `${name}: ${p} split the tokens ${(n.piles || []).join(" + ")} and hid the chips token`;
      else if (n.did === "closed") line = `${name}: ${p} closed casino ${n.casino_closed}${gets}`;
      else line = (n.text ? esc(n.text) : `${name}: ${esc(n.did)}`) + gets;
      out.push(line);
    }
    return out;
  }

  /** The engine's notices by the log entry of the action that made them (a notice's `seq`
      is that action's; a roll merged into its placement hands its notices on to it, and the
      next round's tiles are told on the payout line). Notices without a `seq` come back
      apart: those of the newest round, said on their own. */
  function noticesByEntry(s, log) {
    const by = new Map();
    const loose = [];
    const newest = log.length ? log[0].round : 0;
    for (const n of VT.gameNotices(s)) {
      if (!["tile", "bank", "chips", "pays"].includes(n.kind)) continue;
      if (typeof n.seq !== "number") {
        if (n.round === newest) loose.push(n);
        continue;
      }
      const at = log.filter((e) => e.seq >= n.seq);
      if (!at.length) continue;
      const low = Math.min(...at.map((e) => e.seq));
      const same = at.filter((x) => x.seq === low);
      const payout = same.find((x) => x.kind === "payout");
      const e = (payout && n.round > payout.round ? payout : same.find((x) => x.kind !== "payout")) || same[0];
      if (!by.has(e)) by.set(e, []);
      by.get(e).push(n);
    }
    return { by, loose };
  }

  function renderPending(s) {
    const el = $("#pending");
    const p = (s.pending || [])[0];
    el.hidden = !p || ended(s);
    if (!el.hidden) el.textContent = p.kind === "place" ? "Which number was taken? The table is asked."
      : "The camera is checking this roll with the table…";
  }

  /** What `score` adds to the money, said where the figure is: "incl. 2 unused chips = $20,000". */
  function extrasText(p) {
    const xs = (p && p.score_extras) || [];
    return xs.map((x) => `incl. ${plural(x.count, "unused " + x.what, "unused " + x.what + "s")} = ${cash(x.value)}`).join(", ");
  }

  function renderFinal(s) {
    const el = $("#final");
    const r = s.results;
    el.hidden = !r;
    if (!r) return;
    const w = r.winners || [];
    const title = w.length ? `${w.map(esc).join(" & ")} ${w.length > 1 ? "win" : "wins"}` : "Game over";
    const rows = r.ranking.map((row) => {
      const p = player(s, row.player) || {};
      const extra = extrasText(p);
      return `<li class="${row.place === 1 ? "first" : ""}"><span class="pl">${ordinal(row.place)}</span>` +
        `${sw(p.colour)}<span class="nm">${esc(row.player)}</span><span class="sc">${cash(row.score)}</span>` +
        `${extra ? `<small class="extra">${esc(extra)}</small>` : ""}</li>`;
    }).join("");
    el.innerHTML = `<h2>${s.over ? "Final ranking" : "Ranking when the game was ended"}</h2>` +
      `<p class="winner">${title}</p>` +
      `<ol class="rank">${rows}</ol><p class="why">${esc(r.explanation)}.${tieBelow(r)}</p>`;
  }

  /** Places below the top decided by the tie-break get the rule spelled out too. */
  function tieBelow(r) {
    const top = r.ranking[0] ? r.ranking[0].score : null;
    const scores = r.ranking.filter((x) => x.score !== top).map((x) => x.score);
    return new Set(scores).size < scores.length ? ` Equal money below: ${esc(r.tiebreak_rule)} decides.` : "";
  }

  const photoPath = (name) => `/api/photo/${name.split("/").map(encodeURIComponent).join("/")}`;
  /** A thumbnail twice as wide as it is shown (sharp on a phone's screen), no wider. */
  function thumbWidth(css) {
    const want = Math.ceil(css * 2);
    return PHOTO_WIDTHS.find((w) => w >= want) || PHOTO_WIDTHS[PHOTO_WIDTHS.length - 1];
  }

  function renderRoll(s) {
    const el = $("#roll");
    // The roll's own key: a photo name written again (a roll undone) is never an older picture.
    const photo = s.last_roll && s.last_roll.photo ? `${photoPath(s.last_roll.photo)}?k=` +
      encodeURIComponent(`${s.game_id}.${s.last_roll.frame ?? s.seq}`) : "";
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
        : l.passed ? `<b>${esc(l.player)}</b> skipped the turn` : `<b>${esc(l.player)}</b> placed the ${l.value}s`;
      dice = sorted(l.dice).map((d) => die(d.value, d.colour,
        (d.big ? "big " : "") + (l.value && d.value !== l.value ? "dim" : l.value ? "hl" : ""))).join("");
    }
    // While a payout is up, the round's last placement is old news (the log keeps it).
    el.hidden = !head || ended(s) || !$("#summary").hidden;
    if (el.hidden) return;
    el.className = "card roll" + (photo ? "" : " nophoto");
    const key = `${photo}|${head}|${dice}`;
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    el.innerHTML = (photo ? `<button class="photo-btn" type="button" aria-label="open the photo of the roll">` +
      `<img class="photo" alt="photo of the roll"></button>` : "") +
      `<div><div class="label">${head}</div><div class="dice">${dice}</div></div>`;
    const img = el.querySelector(".photo");
    if (img) {
      img.src = `${photo}&w=${thumbWidth(img.getBoundingClientRect().width || 112)}`;
      el.querySelector(".photo-btn").addEventListener("click", () => {
        $("#photo-big").src = photo;
        $("#photo-dialog").showModal();
      });
    }
  }

  /** One casino's payout in words: "Casino 3: anna $80,000, carla $30,000 (benno and dora tied, nothing)". */
  function payoutLine(s, c) {
    const pays = c.payouts.map((p) => `${who(s, p.player)} <b class="amt">${cash(p.amount)}</b>`);
    // The bracket stays with the name it opens on: "(" never ends a line.
    const tied = c.cancelled.length
      ? `${and(c.cancelled.map((n, i) => who(s, n, i || !pays.length ? "" : "(")))} tied, nothing${pays.length ? ")" : ""}` : "";
    const left = c.unclaimed.length
      ? `<span class="muted">${and(c.unclaimed.map(cash))} not won</span>` : "";
    const body = [pays.join(", "), tied].filter(Boolean).join(" ") ||
      (left ? "no dice here" : "nothing to pay");
    return `<li data-casino="${c.casino}"><span class="cn">Casino ${c.casino}:</span> ` +
      `<span class="pay-words">${body}${left ? (body ? "; " : "") + left : ""}</span></li>`;
  }
  const paidList = (s, casinos) => casinos.map((c) => payoutLine(s, c)).join("");

  /** Log entries since the newest payout (newest first): none means no roll has come yet. */
  function sincePayout(s) {
    const log = s.log || [];
    const i = log.findIndex((e) => e.kind === "payout");
    return i < 0 ? null : log.slice(0, i);
  }

  function renderSummary(s) {
    const el = $("#summary");
    const rr = s.round_results || [];
    const last = rr[rr.length - 1];
    const since = sincePayout(s);
    // The payout stays while notes are handed out: until the next round's first roll.
    const waiting = since !== null && since.every((e) => e.kind === "deal");
    const id = last ? `${s.game_id}:${last.round}` : "";
    const show = last && last.casinos.length && (s.over || (!ended(s) && waiting)) && dismissed !== id;
    el.hidden = !show;
    summaryRound = show ? last.round : 0;
    if (!show) return;
    const mineNow = s.me && last.money && last.money[s.me] !== undefined
      ? `<p class="muted small">You now have ${cash(last.money[s.me])}.</p>` : "";
    el.innerHTML = `<div class="sum-head"><h2>Round ${last.round} paid out</h2>` +
      (s.over ? "" : `<button class="btn ghost dismiss" type="button" data-id="${esc(id)}">OK, hide</button>`) +
      `</div><ul class="paid">${paidList(s, last.casinos)}</ul>${mineNow}`;
  }
  $("#summary").addEventListener("click", (e) => {
    const b = e.target.closest(".dismiss");
    if (!b) return;
    dismissed = b.dataset.id;
    if (S) render(S);
  });

  function renderEarlier(s) {
    const el = $("#earlier");
    const rr = (s.round_results || []).filter((r) => r.casinos.length);
    const open = el.querySelector("details") && el.querySelector("details").open;
    el.innerHTML = rr.length ? `<details${open ? " open" : ""}><summary>Payouts of earlier rounds</summary>` +
      rr.map((r) => `<h3 class="small">Round ${r.round}</h3><ul class="paid">${paidList(s, r.casinos)}</ul>`).join("") +
      "</details>" : "";
  }

  function renderCasinos(s) {
    const el = $("#casinos");
    const now = {};
    const tiles = (s.tiles && s.tiles.casinos) || [];
    // No Entry!'s token closes a casino: no die may enter or leave it.
    const closed = new Set(tiles.filter((t) => t.tile === "E1" && t.closed).map((t) => t.closed));
    const html = s.casinos.map((c) => {
      const proj = Object.fromEntries(c.projected.map((p) => [p.player, p.amount]));
      const tied = new Set(c.tied);
      const names = Object.keys(c.weights || c.dice).sort((a, b) => (c.weights[b] - c.weights[a]) || (a > b ? 1 : -1));
      now[c.casino] = JSON.stringify(c.dice);
      const stakes = names.map((n) => {
        // A Biggy counts as two: show what decides the majority, and mark the Biggy.
        const nb = (c.big && c.big[n]) || 0;
        const big = nb ? `<i class="bigmark" title="${nb} Biggy, counts as two"></i>` : "";
        const status = tied.has(n) ? '<span class="tag">tied</span>'
          : proj[n] !== undefined ? `<span class="pay">+${cash(proj[n])}</span>` : "";
        const count = (c.weights && c.weights[n]) || c.dice[n] || 0;
        const blank = n === "gray" && isNeutral(s, n);
        const mark = blank ? die(0, "gray", "blank") : sw(colourOf(s, n));
        return `<li class="stake ${tied.has(n) ? "tied" : ""}">${mark}<span class="n">${count}</span>` +
          `${big}<span class="nm">${blank && count === 1 ? "blank die" : esc(label(s, n))}</span>${status}</li>`;
      }).join("");
      // Notes are paid high to low, one per ranked player: the first ones are taken.
      const notes = [...c.notes].sort((a, b) => b - a).map((v, i) =>
        `<span class="note ${i < c.projected.length ? "won" : ""}">${cash(v)}</span>`).join("");
      const total = c.notes.reduce((a, b) => a + b, 0);
      const tile = tiles.find((t) => t.casino === c.casino);
      const shut = closed.has(c.casino) ? '<span class="closed-tag">closed</span>' : "";
      return `<article class="casino${shut ? " closed" : ""}${tile ? " has-tile" : ""}" data-casino="${c.casino}"><header>${die(c.casino, "", "c-house")}` +
        `<span class="cname">Casino ${c.casino}</span>${shut}<span class="total">${total ? cash(total) : ""}</span></header>` +
        (tile ? tileBox(s, tile) : "") +
        `<div class="notes">${notes || '<span class="muted small">no money yet</span>'}</div>` +
        `<ul class="stakes">${stakes || '<li class="empty">no dice yet</li>'}</ul></article>`;
    }).join("");
    el.innerHTML = html;
    const bank = s.tiles ? (s.tiles.bank || []).reduce((a, b) => a + b, 0) : null;
    $("#casinos-h").innerHTML = s.edition === "royale"
      ? 'Casinos <span class="h-note"><i class="bigmark"></i> Biggy: counts as two dice' +
        `${bank !== null ? ` · the bank holds ${cash(bank)}` : ""}</span>` : "Casinos";
    if (prevDice && prevDice.game === s.game_id) {
      for (const [k, v] of Object.entries(now)) {
        if (prevDice[k] !== v && v !== "{}") el.querySelector(`[data-casino="${k}"]`).classList.add("bump");
      }
    }
    prevDice = { ...now, game: s.game_id };
  }

  /** Places by the edition's score: the final ranking once there is one, else equal money
      shares a place. Null while the money is face down or nobody has won anything. */
  function standings(s) {
    if (s.results) {
      return Object.fromEntries(s.results.ranking.map((r) => [r.player, r.place]));
    }
    const scores = s.players.map((p) => p.score);
    if (scores.some((v) => v === null || v === undefined) || new Set(scores).size < 2) return null;
    return Object.fromEntries(s.players.map((p) => [p.name, 1 + scores.filter((v) => v > p.score).length]));
  }

  function renderPlayers(s) {
    const el = $("#players");
    const hidden = s.display && s.display.money_hidden;
    const done = ended(s);
    $("#money-note").textContent = hidden ? "money stays face down until the end" : "";
    const places = standings(s);
    const order = [...s.players];
    if (places) order.sort((a, b) => places[a.name] - places[b.name]);  // stable: seat order in a tie
    const shared = (n) => places && Object.values(places).filter((v) => v === n).length > 1;
    const leaders = places ? s.players.filter((p) => places[p.name] === 1) : [];
    const top = leaders.length ? leaders[0].score : 0;
    const second = places ? Math.max(...s.players.filter((p) => places[p.name] !== 1).map((p) => p.score)) : 0;
    const inRound = !done && s.phase !== "deal" && s.casinos.some((c) => Object.keys(c.dice).length);
    el.innerHTML = order.map((p) => {
      const place = places ? places[p.name] : 0;
      const you = p.name === s.me ? '<span class="you">you</span>' : "";
      const turn = p.name === s.to_move && !done ? "turn-now" : "";
      const m = p.score === null ? '<span class="money hid" title="face down">●●●<span class="sr"> hidden</span></span>'
        : `<span class="money">${cash(p.score)}</span>`;
      let rank = "";
      let gap = "";
      if (place) {
        const lead = place === 1;
        rank = `<span class="rank-badge${lead ? " lead" : ""}">${shared(place) ? "=" : ""}${ordinal(place)}</span>`;
        if (lead) {
          gap = leaders.length > 1 ? `<span class="gap lead">joint leader</span>`
            : `<span class="gap lead">leader${top > second ? `, ${cash(top - second)} ahead` : ""}</span>`;
        } else if (top > p.score) {
          const after = leaders.length > 1 ? "the leaders" : esc(leaders[0].name);
          gap = `<span class="gap">${cash(top - p.score)} behind ${after}</span>`;
        }
      }
      const hand = Object.entries(p.hand || {}).map(([k, n]) =>
        `<span class="hand ${VT.cc(k.split(" ")[0])}" aria-hidden="true">${"<i></i>".repeat(Math.min(n, 12))}</span>`).join("");
      const meta = [`<span class="colour">${esc(p.colour)} dice</span>`];
      if (!done) meta.push(p.dice_left ? `${hand}<span>${plural(p.dice_left, "die", "dice")} left</span>` : "<span>no dice left</span>");
      if (s.edition === "royale" && !p.chips) meta.push("<span>no chips left</span>");
      if (s.options && s.options.skip_rule === "B" && !p.skip_cards) meta.push("<span>no skip cards left</span>");
      const soFar = inRound ? `<span class="so-far">${p.round_so_far ? `+${cash(p.round_so_far)}` : "nothing"} ` +
        `this round so far</span>` : "";
      const extra = p.score !== null ? extrasText(p) : "";
      const notes = (p.notes || []).map((v) => `<span class="note">${cash(v)}</span>`).join("");
      return `<div class="player ${VT.cc(p.colour)} ${turn}${place === 1 ? " leader" : ""}" data-player="${esc(p.name)}">` +
        `<div class="p-top">${rank}${sw(p.colour)}<span class="nm">${esc(p.name)}${you}</span>${m}</div>` +
        `<div class="p-sub">${gap}${extra ? `<span class="extra">${esc(extra)}</span>` : ""}${soFar}</div>` +
        `<div class="meta">${meta.join("")}</div>` +
        (notes ? `<div class="notes">${notes}</div>` : "") + "</div>";
    }).join("");
  }

  /** The game log in words, newest first: rolls, placements, skips, payouts. */
  function logLine(s, e, notices = []) {
    const dice = (groups, value) => groups.flatMap((g) => g.values.map((v) => ({ v, colour: g.colour, big: g.big })))
      .sort((a, b) => (a.v || 7) - (b.v || 7))
      .map((d) => die(d.v, d.colour, (d.big ? "big " : "") + (value ? (d.v === value ? "hl" : "dim") : ""))).join("");
    const faces = (groups) => groups.flatMap((g) => g.values).sort((a, b) => (a || 7) - (b || 7))
      .map((v) => (v === null ? "?" : v)).join(" ");
    const p = e.player ? who(s, e.player) : "";
    let text = "";
    let pics = "";
    let extra = "";
    if (e.kind === "deal") {
      text = `Round ${e.round}: the money is dealt${e.by === "hand" ? " by hand" : ""}`;
    } else if (e.kind === "neutral") {
      text = `${p} rolled the neutral dice (${faces(e.dice)}): each goes to the casino of its number`;
      pics = dice(e.dice);
    } else if (e.kind === "roll") {
      text = `${p} rolled ${faces(e.dice)}${ended(s) ? "" : " and is choosing"}`;
      pics = dice(e.dice);
    } else if (e.kind === "place") {
      text = `${p} rolled ${faces(e.dice)} and placed ${e.count === 1 ? "one die" : `${e.count} dice`} on casino ${e.value}`;
      pics = dice(e.dice, e.value);
    } else if (e.kind === "pass") {
      const cost = { chip: "used a chip", "$1": "paid $1", "skip card": "used a skip card" }[e.cost];
      text = `${p} rolled ${faces(e.dice)} and skipped the turn${cost ? ` (${cost})` : ""}`;
      pics = dice(e.dice);
    } else if (e.kind === "tile") {
      // A secret choice is said only as made: the log never holds its value.
      text = e.hidden ? `${esc(faceName(e.tile))}: ${p} chose in secret`
        : `${esc(faceName(e.tile))}: ${p} ${esc(chose(e))}`;
    } else if (e.kind === "tile_roll") {
      text = `${p} threw the black dice (${faces(e.dice)})`;
      pics = dice(e.dice);
    } else if (e.kind === "payout") {
      const r = (s.round_results || []).find((x) => x.round === e.round);
      text = `<b>Round ${e.round} paid out</b>${e.round === summaryRound ? " (see above)" : ""}`;
      if (r && r.casinos.length && e.round !== summaryRound) extra = `<ul class="paid">${paidList(s, r.casinos)}</ul>`;
    }
    const did = noticeLines(s, notices);
    // A tile's own action is best said by what the tile made of it ("guessed 2, anna held 3").
    if (did.length && (e.kind === "tile" || e.kind === "tile_roll")) text = did.shift();
    const then = did.length ? `<span class="did">${did.map((l) => `<span>${l}</span>`).join("")}</span>` : "";
    return `<li class="log-${e.kind}" data-seq="${e.seq}"><span class="t">${text}</span>` +
      `${pics ? `<span class="dice">${pics}</span>` : ""}${then}${extra}</li>`;
  }

  const wide = matchMedia("(min-width: 720px)");
  function renderLog(s) {
    const el = $("#log");
    const log = s.log || [];
    el.hidden = !log.length;
    if (!log.length) return;
    if (!el.dataset.ready) {
      el.open = wide.matches;  // a phone starts with the log folded, the last action in view
      el.dataset.ready = "1";
    }
    const { by, loose } = noticesByEntry(s, log);
    const lines = log.map((e) => logLine(s, e, by.get(e) || []));
    // Notices that do not say which action made them: what the tiles did, newest first.
    const apart = noticeLines(s, loose).reverse().map((l) => `<li class="log-tile-did"><span class="t">${l}</span></li>`);
    const last = document.createElement("ul");
    last.innerHTML = apart[0] || lines[0];
    $("#log-last").textContent = last.querySelector(".t").textContent;
    $("#log-list").innerHTML = apart.join("") + lines.join("");
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
    box.innerHTML = S.players.map((p) => `<button class="btn" value="${esc(p.colour)}">${sw(p.colour)}` +
      `<span>${esc(p.name)} <span class="muted">(${esc(p.colour)})</span></span></button>`).join("") +
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
