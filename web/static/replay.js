// Match replay: step through the server-rendered turns without reloading. The URL follows the
// step (?turn=N#turn-N) so every step can be shared; #turn-N alone also works on arrival.
"use strict";
(function () {
  var controls = document.getElementById("controls");
  if (!controls) return;
  var count = parseInt(controls.getAttribute("data-count"), 10);
  var current = parseInt(controls.getAttribute("data-current"), 10);
  var position = document.getElementById("position");
  var playButton = document.getElementById("play");
  var speed = document.getElementById("speed");
  var timer = null;
  function clamp(n) { return Math.max(1, Math.min(count, n)); }
  function show(step, push) {
    step = clamp(step);
    document.querySelectorAll("section.turn").forEach(function (s) {
      s.hidden = parseInt(s.getAttribute("data-step"), 10) !== step;
    });
    current = step;
    position.textContent = "step " + step + " / " + count;
    document.getElementById("prev").setAttribute("href", "?turn=" + clamp(step - 1));
    document.getElementById("next").setAttribute("href", "?turn=" + clamp(step + 1));
    if (push) {
      var url = new URL(window.location.href);
      url.searchParams.set("turn", String(step));
      url.hash = "turn-" + step;
      history.replaceState(null, "", url.toString());
    }
  }
  function playing(on) {  // the two labels are in the page: their icons need no emoji font
    playButton.querySelector(".when-stopped").hidden = on;
    playButton.querySelector(".when-playing").hidden = !on;
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } playing(false); }
  function go(step) { return function (e) { e.preventDefault(); stop(); show(step(), true); }; }
  document.getElementById("first").addEventListener("click", go(function () { return 1; }));
  document.getElementById("prev").addEventListener("click", go(function () { return current - 1; }));
  document.getElementById("next").addEventListener("click", go(function () { return current + 1; }));
  document.getElementById("last").addEventListener("click", go(function () { return count; }));
  playButton.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (current >= count) show(1, true);
    playing(true);
    timer = setInterval(function () {
      if (current >= count) { stop(); return; }
      show(current + 1, true);
    }, parseInt(speed.value, 10) || 700);
  });
  document.addEventListener("keydown", function (e) {
    if (e.target && /input|select|textarea/i.test(e.target.tagName)) return;
    if (e.key === "ArrowLeft") { stop(); show(current - 1, true); }
    if (e.key === "ArrowRight") { stop(); show(current + 1, true); }
  });
  var m = /^#turn-(\d+)$/.exec(window.location.hash);
  if (m) show(parseInt(m[1], 10), false);
})();
