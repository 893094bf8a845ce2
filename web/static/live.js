// Live view: poll /api/live every few seconds and rewrite the counts and tables with
// textContent only (names and seats come from users and models).
"use strict";
(function () {
  var box = document.getElementById("live-counts");
  if (!box) return;
  var league = box.getAttribute("data-league") || "";
  var POLL_MS = 3000;
  function cell(row, text, href) {
    var td = document.createElement("td");
    if (href) { var a = document.createElement("a"); a.href = href; a.textContent = text; td.appendChild(a); }
    else td.textContent = text;
    row.appendChild(td);
  }
  function fill(id, items, render) {
    var body = document.querySelector("#" + id + " tbody");
    var fresh = document.createElement("tbody");
    items.forEach(function (item) { var tr = document.createElement("tr"); render(tr, item); fresh.appendChild(tr); });
    body.parentNode.replaceChild(fresh, body);
  }
  function result(m) { return m.draw ? "draw" : (m.winners.length ? m.winners.join(", ") : m.status); }
  function when(v) { return v ? String(v).replace("T", " ").slice(0, 19) : "–"; }
  function update(data) {
    box.querySelectorAll("[data-status]").forEach(function (n) { n.textContent = String(data.counts[n.getAttribute("data-status")] || 0); });
    fill("live-standings", data.standings, function (tr, s) {
      cell(tr, String(s.rank)); cell(tr, s.policy); cell(tr, ((s.lo + s.hi) / 2).toFixed(2));  // TrueSkill mu: the number its interval belongs to
      cell(tr, "[" + s.lo.toFixed(1) + ", " + s.hi.toFixed(1) + "]"); cell(tr, String(s.games));
    });
    fill("live-running", data.running, function (tr, m) { cell(tr, String(m.id)); cell(tr, m.game_id); cell(tr, m.seats.join(" vs ")); cell(tr, when(m.started_at)); });
    fill("live-finished", data.finished, function (tr, m) { cell(tr, String(m.id), "/matches/" + m.id); cell(tr, m.game_id); cell(tr, m.seats.join(" vs ")); cell(tr, result(m)); });
    document.getElementById("live-updated").textContent = "updated " + new Date().toLocaleTimeString();
  }
  function poll() {
    fetch("/api/live?league=" + encodeURIComponent(league), { headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(update)
      .catch(function (e) { document.getElementById("live-updated").textContent = "update failed: " + e.message; })
      .finally(function () { setTimeout(poll, POLL_MS); });
  }
  setTimeout(poll, POLL_MS);
})();
