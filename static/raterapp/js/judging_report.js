// The judging page's "report a broken pair" form: F opens it, ↑ ↓ choose a reason, Enter
// sends it, Esc cancels and gives the focus back to the button that opened it.

/**
 * Wire the form; `onSend({reason, note})` reports the pair on screen, `onClosed()` is told
 * when the form closes without a report (keys that waited for it may run).
 */
export function reportForm(form, opener, { onSend, onClosed }) {
  const api = {
    isOpen: () => !form.hidden,
    open() {
      form.hidden = false;
      opener.setAttribute("aria-expanded", "true");
      const checked = form.querySelector("input[name='reason']:checked") || form.querySelector("input[name='reason']");
      checked.focus();
    },
    close({ focusBack = false, quiet = false } = {}) {
      if (form.hidden) return;
      form.hidden = true;
      opener.setAttribute("aria-expanded", "false");
      form.reset();
      if (focusBack) opener.focus();
      if (!quiet && onClosed) onClosed();
    },
    send() {
      const data = new FormData(form);
      const reason = String(data.get("reason") || "other");
      const note = String(data.get("note") || "").trim();
      api.close({ quiet: true }); // the keys that wait are for the next pair
      opener.blur();
      onSend({ reason, note });
    },
    /** Keys while the form is open: all of them stay in the form. */
    onKey(event) {
      if (event.key === "Escape") {
        event.preventDefault();
        api.close({ focusBack: true });
      } else if (event.key === "Enter" && event.target.tagName === "INPUT") {
        event.preventDefault();
        api.send();
      }
    },
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    api.send();
  });
  form.querySelector("[data-report-cancel]").addEventListener("click", () => api.close({ focusBack: true }));
  return api;
}
