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
// The answer is never stale without saying so. Every edit of the scenario form counts up an
// edit number and marks the answer region pending; each /answer request carries the number
// (X-Edit-Seq) and the server echoes it with X-Answer-State. Only an "ok" answer to the latest
// edit clears the mark; problems (or a refused request) for the latest edit mark it stale.
(function () {
  var seq = 0;
  var NOTES = {
    pending: "recomputing: the answer below is for an earlier version of the scenario",
    stale: "stale: the scenario has problems (listed beside the fields); the answer below is for an earlier version"
  };
  function mark(state) {
    var a = document.getElementById("answer"), n = document.getElementById("answer-note");
    if (a) a.setAttribute("data-state", state);
    if (n) { n.textContent = NOTES[state] || ""; n.className = state; }
  }
  function edited(ev) {
    var el = ev.target;
    if (!el.closest || !el.closest("#scenario")) return;
    // a change event after the input events that set this value (or as a focused field is
    // swapped out) is no new edit
    if (ev.type === "change" && el.__ctValue === el.value) return;
    el.__ctValue = el.value;
    seq += 1;
    mark("pending");
  }
  // capture phase: counted before htmx (listening on the field itself) sends the request
  document.addEventListener("input", edited, true);
  document.addEventListener("change", edited, true);
  document.addEventListener("htmx:configRequest", function (ev) {
    if (ev.detail.path === "/answer") ev.detail.headers["X-Edit-Seq"] = String(seq);
  });
  document.addEventListener("htmx:afterRequest", function (ev) {
    var xhr = ev.detail.xhr;
    if (!xhr || ev.detail.requestConfig.path !== "/answer") return;
    if (xhr.status >= 400) { mark("stale"); return; }
    if (xhr.status === 0 || xhr.getResponseHeader("X-Edit-Seq") !== String(seq)) return;
    mark(xhr.getResponseHeader("X-Answer-State") === "ok" ? "ok" : "stale");
  });
})();
