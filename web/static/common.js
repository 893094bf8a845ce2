// Shared bits: selects and radios marked data-autosubmit submit their form on change.
"use strict";
document.querySelectorAll("[data-autosubmit]").forEach(function (el) {
  el.addEventListener("change", function () { if (el.form) el.form.submit(); });
});
