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
  VT.live(() => "/api/events", (s) => {
    const c = s.camera || {};
    const tiles = [["camera", c.state], ["frames per second", c.fps], ["tracker", c.tracker],
      ["source", c.source], ["to move", s.to_move || "—"], ["waiting for the table", (s.pending || []).length]];
    $("#stats").innerHTML = tiles.map(([k, v]) => `<div class="stat"><small>${esc(k)}</small><b>${esc(v ?? "—")}</b></div>`).join("") +
      (c.message ? `<div class="stat"><small>message</small><b class="small">${esc(c.message)}</b></div>` : "");
  });
})();
