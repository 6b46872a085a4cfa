/* The calibration page: live view with the tray outline, the guide's instruction, each
   step's result and advice, the colours as learned, and one button to save. Needs the PIN. */
"use strict";
(() => {
  const { esc, $, api, toast, COLOURS } = VT;
  let S = null;             // the latest /api/calibration status
  let chosen = null;        // colours picked for the next run, in drop order
  let touched = false;      // the host changed them: a new game then keeps their choice
  let game = null;          // the latest table state (players, edition, options)
  let taps = [];            // corners tapped on the picture, image pixels
  let timer = null;
  let busy = false;

  // --- login ---------------------------------------------------------------------------
  function showPage(on) {
    $("#login").hidden = on;
    $("#cal").hidden = !on;
    if (on) { startView(); poll(); } else $("#pin").focus();
  }
  $("#login-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await api("/api/login", { pin: $("#pin").value });
    $("#login-err").textContent = r.ok ? "" : (r.data.error || "that did not work");
    if (r.ok) { $("#pin").value = ""; showPage(true); }
  });
  fetch("/api/whoami", { credentials: "same-origin" }).then((r) => r.json())
    .then((w) => showPage(!!w.host)).catch(() => showPage(false));

  async function call(path, body) {
    if (busy) return null;
    busy = true;
    const r = await api(path, body);
    busy = false;
    if (r.status === 401) { showPage(false); toast("Enter the table PIN first", true); return null; }
    if (!r.ok) { toast(r.data.error || `error ${r.status}`, true); return null; }
    render(r.data);
    return r.data;
  }

  // --- live picture ----------------------------------------------------------------------
  const img = $("#cam");
  function startView() { img.src = "/api/camera/stream?t=" + Date.now(); }
  img.addEventListener("error", () => setTimeout(startView, 3000));
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) { img.src = ""; clearTimeout(timer); } else if (!$("#cal").hidden) { startView(); poll(); }
  });
  $("#view").addEventListener("click", (e) => {
    if (!S || S.step !== "corners" || !S.image_size) return;
    const r = img.getBoundingClientRect();
    const [w, h] = S.image_size;
    if (taps.length >= 4) taps = [];
    taps.push([Math.round((e.clientX - r.left) / r.width * w), Math.round((e.clientY - r.top) / r.height * h)]);
    render(S);
  });

  function overlay(s) {
    const svg = $("#overlay");
    const [w, h] = s.image_size || [960, 720];
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    const lw = Math.max(2, w / 300);
    let out = "";
    if (s.corners && s.step !== "corners") {
      out += `<polygon class="tray" points="${s.corners.map((p) => p.join(",")).join(" ")}" stroke-width="${lw}"/>`;
    }
    if (s.step === "corners") {
      if (taps.length > 1) out += `<polyline class="taps" points="${taps.map((p) => p.join(",")).join(" ")}${taps.length === 4 ? " " + taps[0].join(",") : ""}" stroke-width="${lw}"/>`;
      out += taps.map((p, i) => `<circle class="tap" cx="${p[0]}" cy="${p[1]}" r="${lw * 4}"/><text x="${p[0] + lw * 5}" y="${p[1] - lw * 5}" font-size="${lw * 12}">${i + 1}</text>`).join("");
    }
    svg.innerHTML = out;
  }

  // --- rendering -------------------------------------------------------------------------
  const STEP_NAMES = { camera: "Camera", tray: "Tray", brightness: "Brightness", glare: "Glare",
    shadows: "Shadows", uniformity: "Even light", flicker: "Flicker", "empty tray": "Empty tray",
    colours: "Colours" };
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    const a = Math.abs(v);
    if (a < 0.005) return "0";
    if (a < 1) return v.toFixed(2);
    return a >= 100 ? String(Math.round(v)) : String(Number(Number(v).toPrecision(2)));
  }
  const pct = (v) => {
    const p = 100 * v;
    return `${p >= 0.05 && p < 1 ? p.toFixed(1) : Math.round(p)}%`;
  };
  // What each step measured, in words and units. The limits are the guide's own
  // (calibration/light.py, calibration/colours.py), said so the host knows how far off it is.
  const READING = {
    camera: (v) => v > 0 ? `exposure ${fmt(v)} ms per picture` : "",
    tray: (v, r) => /by hand/.test(r.advice || "") ? "" : `${pct(v)} of the tray's outline found`,
    brightness: (v) => `${Math.round(v)} on a scale of 0 (black) to 100 (white); 25 to 92 is fine`,
    glare: (v) => `${pct(v)} of the floor dazzles the camera; up to 1% is fine`,
    shadows: (v) => `${pct(v)} of the floor in deep shadow; up to 15% is fine`,
    uniformity: (v) => `the darkest part of the floor gets ${pct(v)} of the light of the brightest; 60% or more is fine`,
    flicker: (v) => `the light changes ${pct(v)} from one picture to the next; up to 3% is fine`,
    "empty tray": (v) => `${Math.round(v)} thing(s) taken for dice in the empty tray`,
    colours: (v) => Number.isFinite(v) ? `the two closest colours are ${fmt(v)} times as far apart as each colour varies; 3 or more is fine` : "",
  };
  function reading(r) {
    const v = r.value;
    if (v === null || v === undefined || Number.isNaN(v)) return "";
    const say = READING[r.name];
    return say ? say(v, r) : fmt(v);
  }

  /** The dice colours of the game at the table, as the table gives them (`default_colours`):
      the players' in seat order, then the neutral white if this game plays neutral dice, then
      the black dice Royale's tiles throw. Only those are asked for, since a colour learned for
      no die only makes the others easier to confuse. */
  function gameColours() { return (S && S.default_colours) || []; }
  const gameKey = (s) => JSON.stringify([s.edition, s.options, (s.players || []).map((p) => p.colour)]);
  function pickDefaults() {
    if (touched || !S || !S.default_colours) return;
    chosen = [...S.default_colours];
  }
  /** What the setup says of the sets no player owns, in the table's words. */
  function extraSets() {
    const notes = (S && S.colour_notes) || {};
    const say = { white: "The neutral white dice count as a colour too." };
    return gameColours().filter((c) => notes[c]).map((c) => say[c] ||
      `${c[0].toUpperCase()}${c.slice(1)} is ${notes[c]}: no player's dice, but a set of its own to drop.`).join(" ");
  }

  const ordinal = (n) => ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"][n - 1] || `number ${n}`;

  function render(s) {
    S = s;
    const active = s.active;
    const idle = !active && s.step !== "saved";
    $("#cal-current").innerHTML = s.calibrated ? `In use: <b>${esc(s.profile)}</b>` :
      "In use: none (the camera reads with its built-in colours)";
    overlay(s);
    // the instruction
    const ins = s.instruction || {};
    let now = "";
    if (active) {
      now = `<div class="cal-do cal-${esc(ins.kind)}">${ins.colour ? VT.sw(ins.colour, "lg") : ""}<div><b>${esc(ins.text)}</b><small>${esc(s.progress || "")}</small></div></div>`;
      if (s.step === "corners") now += `<p class="small muted">Tapped ${taps.length} of 4: go round the floor's corners in order.</p>`;
    } else if (s.step === "saved") {
      now = `<div class="cal-do cal-saved"><div><b>Saved: the camera reads with ${esc(s.saved || s.profile)}</b><small>You can calibrate again whenever the light changes.</small></div></div>`;
    } else {
      now = '<div class="cal-do"><div><b>Point the camera at the empty tray, under the lamp you will play with.</b><small>Then pick the dice colours below and start.</small></div></div>';
    }
    $("#now").innerHTML = now;
    // buttons for the step
    const acts = [];
    if (active && s.step === "corners") {
      acts.push(`<button class="btn primary" id="use-corners" ${taps.length === 4 ? "" : "disabled"}>Use these corners</button>`);
      acts.push('<button class="btn" id="clear-corners">Clear</button>');
    }
    if (active && s.step === "colours") acts.push(`<button class="btn" id="skip">No ${esc(ins.colour || "")} dice here</button>`);
    if (active) acts.push('<button class="btn danger ghost" id="cancel">Cancel</button>');
    if (s.step === "saved") acts.push('<button class="btn" id="again">Calibrate again</button>');
    $("#actions").innerHTML = acts.join("");
    const on = (id, fn) => { const b = $("#" + id); if (b) b.addEventListener("click", fn); };
    on("use-corners", async () => { const r = await call("/api/calibration/corners", { corners: taps }); if (r) taps = []; });
    on("clear-corners", () => { taps = []; render(S); });
    on("skip", () => call("/api/calibration/skip"));
    on("cancel", () => call("/api/calibration/cancel"));
    on("again", () => { $("#setup").hidden = false; $("#setup").scrollIntoView({ behavior: "smooth" }); });
    // colour choice before a run
    $("#setup").hidden = !idle && !(s.step === "saved" && !$("#setup").hidden);
    pickDefaults();
    const ready = chosen !== null;
    $("#setup-note").textContent = !ready ? "Reading the game at the table…" :
      "Tap the colours of the dice at this table, in the order the sets will be dropped in. " +
      (extraSets() || "This game plays without the neutral white dice, so they are not asked for.");
    const mine = chosen || [];
    const first = gameColours();
    const all = [...first, ...COLOURS.filter((c) => !first.includes(c))];
    $("#chips").innerHTML = all.map((c) => {
      const i = mine.indexOf(c);
      const label = i >= 0 ? `${c}, dropped ${ordinal(i + 1)}` : c;
      return `<button type="button" class="chipbtn cal-chip ${i >= 0 ? "sel" : ""}" data-c="${esc(c)}" aria-pressed="${i >= 0}" aria-label="${esc(label)}">${VT.sw(c)}<span>${esc(c)}</span>${i >= 0 ? `<i aria-hidden="true">${i + 1}</i>` : ""}</button>`;
    }).join("");
    document.querySelectorAll(".cal-chip").forEach((b) => b.addEventListener("click", () => {
      const c = b.dataset.c;
      touched = true;
      const now = chosen || [];
      chosen = now.includes(c) ? now.filter((x) => x !== c) : [...now, c];
      render(S);
    }));
    $("#start").disabled = !chosen || chosen.length === 0;
    // results
    const steps = s.steps || [];
    $("#results").hidden = steps.length === 0 && !(s.colours || []).length;
    $("#steps").innerHTML = steps.map((r) => `<li class="${r.passed ? "ok" : "bad"}"><span class="mark" aria-label="${r.passed ? "passed" : "failed"}">${r.passed ? "✓" : "!"}</span><div><b>${esc(STEP_NAMES[r.name] || r.name)}</b><span class="small"> · ${esc(r.advice)}</span>${reading(r) ? `<small class="cal-reading">${esc(reading(r))}</small>` : ""}</div></li>`).join("");
    $("#swatches").innerHTML = (s.colours || []).map((c) => `<div class="cal-sw"><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${esc(c.swatch)}"/></svg><div><b>${esc(c.name)}</b><small>${c.n} dice seen</small><small>colour varies by ${fmt(c.spread)}\u00a0ΔE</small></div></div>`).join("") +
      (s.skipped || []).map((c) => `<div class="cal-sw skipped"><div><b>${esc(c)}</b><small>skipped</small></div></div>`).join("");
    $("#swatch-legend").hidden = !(s.colours || []).length;
    // verdict and save
    const v = $("#verdict");
    if (s.step === "review") {
      v.hidden = false;
      v.innerHTML = (s.ready ? '<p class="cal-ready">Reading will be reliable with this calibration.</p>' :
        `<p class="cal-warn">Reading may not be reliable. To change:</p><ul class="cal-problems">${s.problems.map((p) => `<li>${esc(p)}</li>`).join("")}</ul>`) +
        `<button class="btn primary wide" id="save" ${s.can_save ? "" : "disabled"}>Save calibration</button>`;
      on("save", () => call("/api/calibration/save"));
    } else v.hidden = true;
  }

  $("#start").addEventListener("click", async () => {
    taps = [];
    const r = await call("/api/calibration/start", { colours: chosen });
    if (r) $("#setup").hidden = true;
  });

  async function poll() {
    clearTimeout(timer);
    if (document.hidden) return;
    try {
      const r = await fetch("/api/calibration", { credentials: "same-origin" });
      if (r.ok) render(await r.json());
    } catch (e) { /* the table is unreachable for a moment: try again */ }
    timer = setTimeout(poll, S && S.active ? 500 : 3000);
  }
  VT.keepAwake();
  VT.live(() => "/api/events", (s) => {  // the game's colours, the connection dot, the banner
    const was = game ? gameKey(game) : null;
    game = s;
    if (gameKey(s) !== was) poll();  // another game: the table's colours for it
  });
})();
