// The rating-over-time chart: an inline SVG drawn from the JSON island #chart-data, either
// [{x, y, lo, hi}, ...] or {points: [...], refs: [{label, y}], x_label}: a 95% band, the rating
// line, a dot per point, dashed reference lines (e.g. fixed opponents), and axes.
"use strict";
(function () {
  var svg = document.getElementById("rating-chart");
  var source = document.getElementById("chart-data");
  if (!svg || !source) return;
  var data = JSON.parse(source.textContent || "[]");
  var points = Array.isArray(data) ? data : (data.points || []);
  var refs = Array.isArray(data) ? [] : (data.refs || []);
  var xLabel = Array.isArray(data) ? "matches" : (data.x_label || "x");
  var NS = "http://www.w3.org/2000/svg";
  var W = 720, H = 260, left = 56, right = 16, top = 12, bottom = 32;
  function el(name, attrs, text) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) node.textContent = text;
    svg.appendChild(node);
    return node;
  }
  if (!points.length) {
    el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "chart-empty" }, points.length === 0 && !Array.isArray(data) ? "no rated checkpoint yet" : "no rating snapshots yet");
    return;
  }
  var xs = points.map(function (p) { return p.x; });
  var lows = points.map(function (p) { return Math.min(p.lo, p.y); }).concat(refs.map(function (r) { return r.y; }));
  var highs = points.map(function (p) { return Math.max(p.hi, p.y); }).concat(refs.map(function (r) { return r.y; }));
  var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
  var y0 = Math.min.apply(null, lows), y1 = Math.max.apply(null, highs);
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { y0 -= 1; y1 += 1; }
  var pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad;
  function sx(v) { return left + (v - x0) / (x1 - x0) * (W - left - right); }
  function sy(v) { return top + (1 - (v - y0) / (y1 - y0)) * (H - top - bottom); }
  function fmt(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1); }
  // gridlines and y labels
  for (var i = 0; i <= 4; i++) {
    var v = y0 + (y1 - y0) * i / 4;
    el("line", { x1: left, x2: W - right, y1: sy(v), y2: sy(v), "class": "grid" });
    el("text", { x: left - 6, y: sy(v) + 4, "text-anchor": "end", "class": "tick" }, fmt(v));
  }
  [x0, (x0 + x1) / 2, x1].forEach(function (v) {
    el("text", { x: sx(v), y: H - 10, "text-anchor": "middle", "class": "tick" }, String(Math.round(v)));
  });
  refs.forEach(function (r) {
    el("line", { x1: left, x2: W - right, y1: sy(r.y), y2: sy(r.y), "class": "ref" });
    el("text", { x: W - right - 4, y: sy(r.y) - 4, "text-anchor": "end", "class": "ref-label" }, r.label);
  });
  var band = points.map(function (p) { return sx(p.x).toFixed(1) + "," + sy(p.hi).toFixed(1); })
    .concat(points.slice().reverse().map(function (p) { return sx(p.x).toFixed(1) + "," + sy(p.lo).toFixed(1); }));
  el("polygon", { points: band.join(" "), "class": "band" });
  var d = points.map(function (p, k) { return (k ? "L" : "M") + sx(p.x).toFixed(1) + " " + sy(p.y).toFixed(1); }).join(" ");
  el("path", { d: d, "class": "line", "data-points": points.length });
  points.forEach(function (p) {
    var dot = el("circle", { cx: sx(p.x), cy: sy(p.y), r: 3, "class": "dot" });
    var title = document.createElementNS(NS, "title");
    title.textContent = (xLabel === "matches" ? "after " + p.x + " matches: " : xLabel + " " + p.x + ": ") + p.y.toFixed(2) + " [" + p.lo.toFixed(1) + ", " + p.hi.toFixed(1) + "]";
    dot.appendChild(title);
  });
})();
