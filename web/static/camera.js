/* The camera page: the annotated live picture and what the table makes of the tray. */
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
  // The tray as the turn tracker sees it (TurnTracker.state), said as the person watching
  // it would: "placing" means dice left or moved and the move is not yet sure, not a fault.
  const TRAY = {
    empty: "Empty", rolling: "Dice rolling", settled: "Roll read: waiting for the move",
    placing: "Dice moving: waiting for them to settle", placed: "Move read",
    clearing: "Being cleared",
  };
  const CAMERA = {
    starting: "Starting", running: "Working", lost: "Lost", error: "Error", closed: "Stopped",
  };
  VT.live(() => "/api/events", (s) => {
    const c = s.camera || {};
    const asked = (s.pending || []).length;
    const fps = typeof c.fps === "number" ? `${Math.round(c.fps)} pictures a second` : "—";
    const tiles = [["The tray", TRAY[c.tracker] || c.tracker], ["Camera", CAMERA[c.state] || c.state],
      ["Speed", fps], ["Whose turn", s.to_move || "—"],
      ["Questions for the host", asked ? `${asked} waiting` : "none"], ["Picture from", c.source]];
    $("#stats").innerHTML = tiles.map(([k, v]) => `<div class="stat"><small>${esc(k)}</small><b>${esc(v ?? "—")}</b></div>`).join("") +
      (c.message && c.message !== c.state ? `<div class="stat wide"><small>Camera says</small><b class="small">${esc(c.message)}</b></div>` : "");
  });
})();
