// The judging screen's keyboard and timing. Without this script the page is a
// plain form with every question shown and a "Save and next" button.
(function () {
  "use strict";

  // Active time on the current document: the clock stops while the tab is hidden.
  let activeMs = 0;
  let since = null;
  function startClock() {
    activeMs = 0;
    since = document.hidden ? null : performance.now();
  }
  function pauseClock() {
    if (since !== null) {
      activeMs += performance.now() - since;
      since = null;
    }
  }
  function resumeClock() {
    if (since === null && !document.hidden) since = performance.now();
  }
  function activeSeconds() {
    pauseClock();
    resumeClock();
    return activeMs / 1000;
  }
  document.addEventListener("visibilitychange", () => (document.hidden ? pauseClock() : resumeClock()));

  const judgeForm = () => document.querySelector("[data-judge-form]");
  const keymap = () => document.getElementById("keymap");

  function relevance(form) {
    const chosen = form.querySelector('input[name="relevance"]:checked');
    return chosen ? parseInt(chosen.value, 10) : null;
  }

  // Aspects asked only when relevant open once relevance > 0. Closed questions'
  // inputs are disabled, so they are not sent and the server stores "not asked".
  function syncAspects(form) {
    const rel = relevance(form);
    form.querySelectorAll('fieldset[data-when="relevant"]').forEach((fieldset) => {
      const open = rel !== null && rel > 0;
      fieldset.toggleAttribute("data-closed", !open);
      fieldset.querySelectorAll("input").forEach((input) => (input.disabled = !open));
    });
  }

  function complete(form) {
    if (relevance(form) === null) return false;
    return [...form.querySelectorAll("fieldset.question:not([data-closed])")].every((fieldset) =>
      fieldset.querySelector("input:checked"),
    );
  }

  function submitWhenComplete(form) {
    if (!complete(form)) return;
    form.querySelector('input[name="seconds"]').value = activeSeconds().toFixed(3);
    form.requestSubmit();
  }

  function choose(key) {
    const form = judgeForm();
    if (!form) return false;
    const input = [...form.querySelectorAll("input[data-key]")].find(
      (candidate) => candidate.dataset.key.toLowerCase() === key && !candidate.disabled,
    );
    if (!input) return false;
    input.checked = true;
    syncAspects(form);
    submitWhenComplete(form);
    return true;
  }

  function toggleKeymap() {
    const dialog = keymap();
    if (!dialog) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

  // "/" opens the note and "!" the cannot-judge form; Esc leaves either for the keys.
  function openAndFocus(details, selector) {
    if (!details) return false;
    details.open = true;
    const field = details.querySelector(selector);
    if (field) field.focus();
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const field = event.target.closest && event.target.closest("input[type=text], textarea, select");
    if (field) {
      if (event.key === "Escape") field.blur();
      if (event.key === "Enter" && field.matches("[data-cannot-reason]")) {
        event.preventDefault();
        field.form.requestSubmit();
      }
      return;
    }
    const key = event.key.toLowerCase();
    if (key === "/" && openAndFocus(document.querySelector(".note-box"), "textarea")) {
      event.preventDefault();
    } else if (key === "!" && openAndFocus(document.querySelector("[data-cannot-judge]"), "select")) {
      event.preventDefault();
    } else if (key === "?") {
      event.preventDefault();
      toggleKeymap();
    } else if (keymap() && keymap().open) {
      return; // the dialog handles Escape itself
    } else if (key === "u") {
      const undo = document.querySelector("[data-undo]");
      if (undo) {
        event.preventDefault();
        undo.closest("form").requestSubmit();
      }
    } else if (choose(key)) {
      event.preventDefault();
    }
  });

  document.addEventListener("change", (event) => {
    const form = event.target.closest && event.target.closest("[data-judge-form]");
    if (!form) return;
    syncAspects(form);
    submitWhenComplete(form);
  });

  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("[data-keymap-open]")) toggleKeymap();
  });

  // A new document: on first load, and each time htmx swaps the panel in.
  function onDocumentShown() {
    const form = judgeForm();
    if (form) syncAspects(form);
    startClock();
    window.scrollTo(0, 0);
    // Marks this panel as wired up (htmx has processed it), for tests.
    const panel = document.getElementById("judge");
    if (panel) panel.dataset.ready = "true";
  }
  document.addEventListener("DOMContentLoaded", onDocumentShown);
  document.addEventListener("htmx:load", (event) => {
    if (event.target.id === "judge") onDocumentShown();
  });
})();
