// clustertwin serve: sortable tables (click a header; again to reverse). Works on tables that
// htmx swaps in later, through one listener on the document. Cells sort by data-value when set.
(function () {
  function cellValue(row, i) {
    var c = row.cells[i];
    if (!c) return "";
    var v = c.getAttribute("data-value");
    if (v === null) v = c.textContent.trim();
    var n = parseFloat(v);
    return (v !== "" && !isNaN(n) && isFinite(v)) ? n : v.toLowerCase();
  }
  document.addEventListener("click", function (ev) {
    var th = ev.target.closest ? ev.target.closest("table.sortable th") : null;
    if (!th) return;
    var table = th.closest("table"), body = table.tBodies[0];
    if (!body) return;
    var i = th.cellIndex, asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, i), y = cellValue(b, i);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
})();
// A request the server refused (4xx/5xx JSON: busy, too slow, too large) is said in the
// problems box instead of failing silently (htmx swaps only 2xx answers).
document.addEventListener("htmx:responseError", function (ev) {
  var box = document.getElementById("problems") || document.getElementById("sweep-status");
  if (!box) return;
  var msg = "the server refused the request (" + ev.detail.xhr.status + ")";
  try { msg = JSON.parse(ev.detail.xhr.responseText).error || msg; } catch (e) { /* not JSON */ }
  var div = document.createElement("div");
  div.className = "err";
  div.textContent = msg;
  box.replaceChildren(div);
});
