// The track page: refuse an upload over the server's limit before sending it (the server
// refuses it too, with 413; a browser still sending a large body may not show that answer).
(function () {
  "use strict";
  var form = document.getElementById("track-form");
  if (!form) { return; }
  form.addEventListener("submit", function (ev) {
    var max = Number(form.getAttribute("data-max-bytes"));
    var total = 0;
    form.querySelectorAll("input[type=file]").forEach(function (input) {
      Array.prototype.forEach.call(input.files, function (f) { total += f.size; });
    });
    var msg = document.getElementById("track-too-large");
    if (total > max) {
      ev.preventDefault();
      msg.textContent = "The files are " + total.toLocaleString("en") + " bytes; this page takes at most " +
        max.toLocaleString("en") + ". Read them with the command line instead (see above).";
    } else {
      msg.textContent = "";
    }
  });
}());
