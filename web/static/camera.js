/* The camera page: the annotated live picture and what the tracker makes of it. */
"use strict";
(() => {
  const { esc, $ } = VT;
  const img = $("#cam");
  const start = () => { img.src = "/api/camera/stream?t=" + Date.now(); };
  // A stream the server closed (or refused: too many viewers) is retried after a pause.
  img.addEventListener("error", () => setTimeout(start, 3000));
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) img.src = ""; else start();
  });
  start();
  VT.keepAwake();
  // What the tracker makes of the tray (TurnTracker.state), said as the person watching it
  // would: "placing" over an empty tray read as a fault, when it means a placement not yet sure.
  const PHASE = {
    empty: "tray empty", rolling: "dice rolling", settled: "roll read",
    placing: "watching the move", placed: "move read", clearing: "tray being cleared",
  };
  VT.live(() => "/api/events", (s) => {
    const c = s.camera || {};
    const tiles = [["camera", c.state], ["frames per second", c.fps],
      ["tracker", PHASE[c.tracker] || c.tracker],
      ["source", c.source], ["to move", s.to_move || "—"], ["waiting for the table", (s.pending || []).length]];
    $("#stats").innerHTML = tiles.map(([k, v]) => `<div class="stat"><small>${esc(k)}</small><b>${esc(v ?? "—")}</b></div>`).join("") +
      (c.message ? `<div class="stat"><small>message</small><b class="small">${esc(c.message)}</b></div>` : "");
  });
})();
