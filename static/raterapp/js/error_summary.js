// A refused form: the page opens on the summary of its errors (role=alert, focused), and each
// link in it moves focus to its field, not only the scroll position.

export function focusSummary(summary) {
  summary.focus({ preventScroll: true });
  summary.scrollIntoView({ block: "start" });
  if (summary.dataset.linked) return;
  summary.dataset.linked = "true";
  summary.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    if (!link) return;
    const target = document.getElementById(link.getAttribute("href").slice(1));
    if (!target) return;
    event.preventDefault();
    const field = target.matches("input, select, textarea, button") ? target : target.closest(".field, fieldset")?.querySelector("input, select, textarea") || target;
    field.scrollIntoView({ block: "center" });
    field.focus();
  });
}

const summary = document.querySelector("[data-error-summary]");
if (summary) focusSummary(summary);
