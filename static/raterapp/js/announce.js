// The pages' live regions (role=status / aria-live): one way to say something in them.
//
// `announcer(node, options)` answers `say(text, {error, sticky})`. Options: `errorClass`, the
// class an error turns on; `clearAfterMs`, how long a non-sticky text stays; `repeat`, empty the
// region first and write a moment later, so that the same text twice is announced twice.

const REPEAT_DELAY_MS = 30;

export function announcer(node, { errorClass = "", clearAfterMs = 0, repeat = false } = {}) {
  let timer = 0;
  return (text, { error = false, sticky = false } = {}) => {
    if (!node) return;
    window.clearTimeout(timer);
    if (errorClass) node.classList.toggle(errorClass, error);
    if (repeat) {
      node.textContent = "";
      timer = window.setTimeout(() => {
        node.textContent = text;
      }, REPEAT_DELAY_MS);
      return;
    }
    node.textContent = text;
    if (clearAfterMs && !sticky) {
      timer = window.setTimeout(() => {
        node.textContent = "";
      }, clearAfterMs);
    }
  };
}
