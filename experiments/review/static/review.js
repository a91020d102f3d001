// The review page's behaviour. Reads only data-* attributes and form values; never writes markup
// (no innerHTML): case text is generated and adversarial, and the server escapes it once, in the template.
(function () {
  "use strict";
  var root = document.getElementById("case");
  if (!root) return;
  var caseId = root.dataset.caseId;
  var prevUrl = root.dataset.prev;
  var nextUrl = root.dataset.next;
  var note = document.getElementById("note");
  var statusLine = document.getElementById("save-status");
  var saving = false;
  var showRemoved = document.getElementById("show-removed");

  function setShowRemoved(on) {
    document.body.classList.toggle("show-removed", on);
    if (showRemoved) showRemoved.checked = on;
    try { window.localStorage.setItem("reeval.showRemoved", on ? "1" : "0"); } catch (e) { /* private mode */ }
  }
  var stored = null;
  try { stored = window.localStorage.getItem("reeval.showRemoved"); } catch (e) { /* private mode */ }
  setShowRemoved(stored === "1");
  if (showRemoved) showRemoved.addEventListener("change", function () { setShowRemoved(showRemoved.checked); });

  function say(text) {
    statusLine.textContent = text;
  }

  function save(verdict) {
    if (saving) return;
    saving = true;
    say("saving " + verdict + "…");
    fetch("/api/verdict", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: caseId, verdict: verdict, note: note.value })
    }).then(function (response) {
      if (!response.ok) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          saving = false;
          say("NOT saved (" + response.status + "): " + (body.error || response.statusText));
        });
      }
      // The server now renders this case with the judge's verdict revealed.
      window.location.reload();
    }).catch(function (error) {
      saving = false;
      say("NOT saved: " + error);
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target === note) {
      if (event.key === "Escape") {
        note.blur();
        event.preventDefault();
      }
      return;
    }
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
    switch (event.key) {
      case "v": save("valid"); break;
      case "i": save("invalid"); break;
      case "u": save("unsure"); break;
      case "n": note.focus(); break;
      case "d": setShowRemoved(!document.body.classList.contains("show-removed")); break;
      case "ArrowLeft": if (prevUrl) window.location.assign(prevUrl); break;
      case "ArrowRight": if (nextUrl) window.location.assign(nextUrl); break;
      default: return;
    }
    event.preventDefault();
  });

  var buttons = document.querySelectorAll("button[data-verdict]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", function (event) {
      save(event.currentTarget.dataset.verdict);
    });
  }
})();
