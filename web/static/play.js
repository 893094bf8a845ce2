// The Play page: start a game with POST /api/play, send moves with POST /api/play/ID/move, and draw
// each view the server answers. Everything from the game, the opponents and other visitors is
// written with textContent, never as HTML.
"use strict";
(function () {
  var setup = document.getElementById("play-setup");
  if (!setup) return;
  var $ = function (id) { return document.getElementById(id); };
  var game = $("play-game"), players = $("play-players"), seat = $("play-seat"), opponent = $("play-opponent");
  var spec = $("play-spec"), specLabel = $("play-spec-label"), nameInput = $("play-name");
  var area = $("play-area"), movesBox = $("play-moves"), typeForm = $("play-type"), moveInput = $("play-move");
  var MAX_BUTTONS = 400;  // more legal moves than this are typed, not clicked
  var current = null, busy = false;

  function option(select, value, label) {
    var o = document.createElement("option");
    o.value = String(value); o.textContent = label; select.appendChild(o);
  }
  function fillPlayers() {
    var chosen = game.options[game.selectedIndex];
    var min = Number(chosen.getAttribute("data-min")), max = Number(chosen.getAttribute("data-max"));
    players.textContent = "";
    for (var n = min; n <= max; n++) option(players, n, n === 1 ? "1 (solo)" : String(n));
    players.value = String(min <= 2 && 2 <= max ? 2 : min);
    fillSeats();
  }
  function fillSeats() {
    var n = Number(players.value);
    seat.textContent = "";
    for (var s = 0; s < n; s++) option(seat, s, "P" + s + (s === 0 ? " (moves first)" : ""));
    opponent.disabled = n === 1;
    if (spec) spec.disabled = n === 1;
  }
  function toggleSpec() {
    if (!specLabel) return;
    specLabel.hidden = !opponent.options[opponent.selectedIndex].hasAttribute("data-typed");
  }
  game.addEventListener("change", fillPlayers);
  players.addEventListener("change", fillSeats);
  opponent.addEventListener("change", toggleSpec);
  try { nameInput.value = localStorage.getItem("arena.play.name") || nameInput.value; } catch (e) { /* storage off */ }
  fillPlayers();
  toggleSpec();

  function show(el, text) { el.textContent = text || ""; el.hidden = !text; }

  function call(method, url, body) {
    var init = { method: method, headers: { Accept: "application/json" } };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(url, init).then(function (r) {
      if (r.status === 204) return null;
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (!r.ok) throw new Error(data.detail || ("HTTP " + r.status));
        return data;
      });
    });
  }

  function setBusy(on, label) {
    busy = on;
    movesBox.querySelectorAll("button").forEach(function (b) { b.disabled = on; });
    $("play-send").disabled = on;
    $("play-start").disabled = on;
    if (on) $("play-status").textContent = label;
  }

  function outcomeLine(v) {
    var o = v.outcome || {};
    var scores = (o.scores || []).map(function (s, i) { return v.players[i] + " " + s; }).join(", ");
    return (o.reason ? o.reason + ". " : "") + (scores ? "Scores: " + scores + "." : "");
  }

  function render(v) {
    current = v;
    area.hidden = false;
    setup.hidden = true;
    var others = v.players.filter(function (_, i) { return i !== v.seat; });
    $("play-title").textContent = v.game_id + " · " + v.name + " (P" + v.seat + ")" + (others.length ? " vs " + others.join(", ") : " · solo");
    $("play-meta").textContent = "seed " + v.seed + " · " + v.role + (v.solo ? " · a one-player game is not stored" : "");
    var text = $("play-text");
    text.textContent = v.text;
    text.scrollTop = text.scrollHeight;  // TextArena views grow: the newest part is at the end
    show($("play-cut"), v.text_cut ? "… " + v.text_cut + " earlier characters not shown" : "");
    $("play-rules").textContent = v.rules;
    show($("play-feedback"), v.feedback && !v.done ? "Rejected: " + v.feedback : "");
    movesBox.textContent = "";
    typeForm.hidden = true;
    var result = $("play-result"), replay = $("play-replay");
    if (v.done) {
      var head = v.result === "win" ? "You won" : v.result === "loss" ? "You lost" : v.result === "draw" ? "Draw"
        : v.status === "finished" ? "Game over" : "Game ended (" + v.status + ")";
      result.className = "result " + (v.result || "over");
      result.textContent = "";
      var strong = document.createElement("strong"); strong.textContent = head; result.appendChild(strong);
      result.appendChild(document.createTextNode(" " + outcomeLine(v)));
      result.hidden = false;
      $("play-status").textContent = v.match_id ? "Stored in league " + v.league + " as match " + v.match_id + "."
        : (v.store_error || (v.solo ? "" : "Not stored."));
      replay.hidden = !v.match_id;
      if (v.match_id) replay.href = "/matches/" + v.match_id;
      try { sessionStorage.removeItem("arena.play.id"); } catch (e) { /* storage off */ }
      return;
    }
    result.hidden = true;
    replay.hidden = true;
    $("play-status").textContent = (v.solo || v.player === v.seat ? "Your move" : "Move for P" + v.player)
      + " · turn " + (v.turn + 1) + (v.attempt ? " · attempt " + (v.attempt + 1) : "");
    if (v.legal_moves && v.legal_moves.length <= MAX_BUTTONS) {
      v.legal_moves.forEach(function (m) {
        var b = document.createElement("button");
        b.type = "button"; b.className = "btn move"; b.textContent = m;
        b.addEventListener("click", function () { send(m); });
        movesBox.appendChild(b);
      });
    } else {
      typeForm.hidden = false;
      moveInput.value = "";
      moveInput.focus();
    }
  }

  function logMove(move, v) {
    var li = document.createElement("li");
    li.textContent = move;
    if (v && v.feedback && v.attempt > 0 && !v.done) { li.className = "bad"; li.title = v.feedback; li.textContent = move + " (rejected)"; }
    $("play-log").appendChild(li);
  }

  function send(move) {
    if (busy || !current) return;
    setBusy(true, "Waiting for the opponent…");
    call("POST", "/api/play/" + encodeURIComponent(current.id) + "/move", { move: move })
      .then(function (v) { logMove(move, v); setBusy(false); render(v); })
      .catch(function (e) { setBusy(false); show($("play-feedback"), e.message); $("play-status").textContent = ""; });
  }

  typeForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (moveInput.value.trim()) send(moveInput.value);
  });
  moveInput.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); if (moveInput.value.trim()) send(moveInput.value); }
  });

  setup.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var typed = specLabel && !specLabel.hidden;
    var body = { game: game.value, name: nameInput.value, players: Number(players.value), seat: Number(seat.value),
                 opponent: Number(players.value) === 1 ? null : (typed ? spec.value : opponent.value) };
    try { localStorage.setItem("arena.play.name", nameInput.value); } catch (e) { /* storage off */ }
    show($("play-setup-error"), "");
    setBusy(true, "");
    $("play-start").textContent = "Starting…";
    call("POST", "/api/play", body)
      .then(function (v) {
        $("play-log").textContent = "";
        try { sessionStorage.setItem("arena.play.id", v.id); } catch (e) { /* storage off */ }
        render(v);
      })
      .catch(function (e) { show($("play-setup-error"), e.message); })
      .finally(function () { setBusy(false); $("play-start").textContent = "Start"; });
  });

  $("play-new").addEventListener("click", function () {
    if (current && !current.done) call("DELETE", "/api/play/" + encodeURIComponent(current.id)).catch(function () { /* already gone */ });
    try { sessionStorage.removeItem("arena.play.id"); } catch (e) { /* storage off */ }
    current = null;
    area.hidden = true;
    setup.hidden = false;
    show($("play-setup-error"), "");
  });

  // A reload resumes the game in play in this tab.
  var saved = null;
  try { saved = sessionStorage.getItem("arena.play.id"); } catch (e) { /* storage off */ }
  if (saved) {
    call("GET", "/api/play/" + encodeURIComponent(saved)).then(render).catch(function () {
      try { sessionStorage.removeItem("arena.play.id"); } catch (e) { /* storage off */ }
    });
  }
})();
