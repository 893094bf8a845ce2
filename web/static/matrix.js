// Colour the head-to-head cells by win rate (red 0% .. white 50% .. green 100%) via the CSSOM,
// which the page's Content-Security-Policy allows (inline style attributes it does not).
"use strict";
document.querySelectorAll("#matrix td.cell").forEach(function (td) {
  var r = parseFloat(td.getAttribute("data-rate"));
  if (isNaN(r)) return;
  var t = Math.abs(r - 0.5) * 2;
  var hue = r >= 0.5 ? 130 : 0;
  td.style.backgroundColor = "hsl(" + hue + ", 60%, " + (97 - 32 * t).toFixed(0) + "%)";
});
