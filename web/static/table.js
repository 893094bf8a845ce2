// Client-side sorting of tables marked .sortable (click a header; again to reverse) and the
// name filter of the leaderboard. Cells carry their sort value in data-v; nothing is parsed
// from HTML and nothing is written as HTML.
"use strict";
(function () {
  function cellValue(row, index, type) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-v") : "";
    if (type === "num") { var n = parseFloat(raw); return isNaN(n) ? -Infinity : n; }
    return (raw || "").toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      th.classList.add("sort-key");
      th.tabIndex = 0;
      function sort() {
        var type = th.getAttribute("data-type") || "text";
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).filter(function (r) { return r.cells.length > 1; });
        rows.sort(function (a, b) {
          var x = cellValue(a, index, type), y = cellValue(b, index, type);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  });
  document.querySelectorAll("[data-filter-table]").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-filter-table"));
    if (!table) return;
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var name = row.querySelector("td.policy");
        if (!name) return;
        row.hidden = needle !== "" && (name.getAttribute("data-v") || "").toLowerCase().indexOf(needle) === -1;
      });
    });
  });
})();
