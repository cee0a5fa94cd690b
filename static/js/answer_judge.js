// The answer judging screen's keys and timing. Each key of a label (s/p/n for
// nuggets, f/p/n for citations) labels the first nugget or citation that has
// none; once every one has a label the answer is saved and the next follows.
// Without this script the page is a plain form with a "Save and next" button.
(function () {
  "use strict";

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
  document.addEventListener("visibilitychange", () => (document.hidden ? pauseClock() : resumeClock()));

  const form = () => document.querySelector("[data-items-form]");
  const items = (f) => [...f.querySelectorAll("fieldset[data-item]")];
  const chosen = (fieldset) => fieldset.querySelector("input:checked");
  const chosenOrder = [];
  // A page pre-filled by a machine (data-prefilled) starts with every label chosen:
  // there a cursor walks the nuggets, each key confirming or changing the one it is
  // on, and the answer is saved after the last (never on a click alone).
  const prefilled = (f) => f.hasAttribute("data-prefilled");
  let cursorForm = null;
  let cursor = 0;
  function cursorOf(f) {
    if (cursorForm !== f) {
      cursorForm = f;
      cursor = 0;
    }
    return cursor;
  }

  function markCurrent(f) {
    const next = prefilled(f)
      ? items(f)[cursorOf(f)]
      : items(f).find((fieldset) => !chosen(fieldset));
    items(f).forEach((fieldset) => fieldset.classList.toggle("current", fieldset === next));
  }

  function submitWhenComplete(f, byKey) {
    if (!items(f).length || !items(f).every(chosen)) return;
    if (prefilled(f) && !(byKey && cursorOf(f) >= items(f).length)) return;
    pauseClock();
    f.querySelector('input[name="seconds"]').value = (activeMs / 1000).toFixed(3);
    f.requestSubmit();
  }

  function choose(key) {
    const f = form();
    if (!f) return false;
    const fieldset = prefilled(f)
      ? items(f)[cursorOf(f)]
      : items(f).find((candidate) => !chosen(candidate));
    if (!fieldset) return false;
    const input = [...fieldset.querySelectorAll("input[data-key]")].find((i) => i.dataset.key === key);
    if (!input) return false;
    input.checked = true;
    chosenOrder.push(fieldset);
    if (prefilled(f)) cursor += 1;
    markCurrent(f);
    submitWhenComplete(f, true);
    return true;
  }

  function clearLast() {
    const f = form();
    if (f && prefilled(f)) {
      // Pre-filled: step the cursor back (the label stays, to be confirmed again).
      if (cursorOf(f) === 0) return false;
      cursor -= 1;
      markCurrent(f);
      return true;
    }
    const fieldset = chosenOrder.pop() || (f && items(f).filter(chosen).pop());
    if (!fieldset || !chosen(fieldset)) return false;
    chosen(fieldset).checked = false;
    markCurrent(f);
    return true;
  }

  function toggleKeymap() {
    const dialog = document.getElementById("keymap");
    if (!dialog) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

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
    const dialog = document.getElementById("keymap");
    if (key === "?") {
      event.preventDefault();
      toggleKeymap();
    } else if (dialog && dialog.open) {
      return;
    } else if (key === "/" && openAndFocus(document.querySelector(".note-box"), "textarea")) {
      event.preventDefault();
    } else if (key === "!" && openAndFocus(document.querySelector("[data-cannot-judge]"), "select")) {
      event.preventDefault();
    } else if (key === "backspace" && clearLast()) {
      event.preventDefault();
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
    const f = event.target.closest && event.target.closest("[data-items-form]");
    if (!f) return;
    markCurrent(f);
    submitWhenComplete(f);
  });

  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("[data-keymap-open]")) toggleKeymap();
  });

  function onAnswerShown() {
    chosenOrder.length = 0;
    const f = form();
    if (f) markCurrent(f);
    startClock();
    window.scrollTo(0, 0);
    const panel = document.getElementById("judge");
    if (panel) panel.dataset.ready = "true";
  }
  document.addEventListener("DOMContentLoaded", onAnswerShown);
  document.addEventListener("htmx:load", (event) => {
    if (event.target.id === "judge") onAnswerShown();
  });
})();
