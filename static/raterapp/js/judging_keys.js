// Keys on the judging page, and the queue that keeps them: an answer or an undo typed while
// the page cannot take it yet (the next pair is still on its way, an undo is running) waits
// and is applied, in order, as soon as it can be: a verdict to the next pair shown. No key
// is dropped; a long queue (a key held down is ignored anyway) stops at MAX_WAITING.

const VERDICT_KEYS = { 1: "equivalent", e: "equivalent", 2: "not_equivalent", n: "not_equivalent", 3: "unsure", u: "unsure" };
const VERDICT_CODES = { Digit1: "equivalent", Numpad1: "equivalent", Digit2: "not_equivalent", Numpad2: "not_equivalent", Digit3: "unsure", Numpad3: "unsure" };
const COMMANDS = { Backspace: "undo", f: "report", h: "guidelines", c: "comment", p: "pictures" };
const MAX_WAITING = 20;

/** Whether the key goes to a text field rather than to the page. */
function isTyping(target) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  return target.tagName === "INPUT" && !["radio", "checkbox", "button", "submit", "reset"].includes(target.type);
}

/** The page's action for a key press: {verdict} or {command}, or null. */
function actionOfKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return null;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const verdict = VERDICT_KEYS[key] || VERDICT_CODES[event.code];
  if (verdict) return { verdict };
  return COMMANDS[key] ? { command: COMMANDS[key] } : null;
}

/**
 * Actions that wait their turn. `canRun(action)` says whether the page can take `action`
 * now, `run(action)` takes it; `drain()` runs the waiting ones that can run, in order (call
 * it whenever the page's state changes). `drop(keep)` forgets those `keep` refuses.
 */
export function actionQueue({ canRun, run, onChange }) {
  const waiting = [];
  let draining = false;
  const changed = () => onChange && onChange(waiting.length);
  const queue = {
    get size() {
      return waiting.length;
    },
    push(action) {
      if (!waiting.length && !draining && canRun(action)) {
        run(action);
        return;
      }
      if (waiting.length < MAX_WAITING) waiting.push(action);
      changed();
      queue.drain();
    },
    drain() {
      if (draining) return; // a run that shows the next pair drains again: the loop below goes on
      draining = true;
      try {
        while (waiting.length && canRun(waiting[0])) run(waiting.shift());
      } finally {
        draining = false;
      }
      changed();
    },
    drop(keep) {
      const kept = waiting.filter(keep);
      waiting.splice(0, waiting.length, ...kept);
      changed();
    },
  };
  return queue;
}

/**
 * Keys for the page: while `dialog` (the pictures) is open only P (and its own Escape) count;
 * while `form` (the report) is open the form has them; in a text field they are text (Esc
 * leaves it); otherwise each key's action goes to `onAction`.
 */
export function listenToKeys({ dialog, form, onAction }) {
  document.addEventListener("keydown", (event) => {
    if (dialog.isOpen()) {
      if (actionOfKey(event)?.command === "pictures") dialog.close();
      return;
    }
    if (form.isOpen()) {
      form.onKey(event);
      return;
    }
    if (isTyping(event.target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        event.target.blur();
      }
      return;
    }
    const action = actionOfKey(event);
    if (!action) return;
    event.preventDefault();
    onAction(action);
  });
}
