// A refused form: the page opens on the summary of its errors (role=alert, focused), and each
// link in it moves focus to its field, not only the scroll position.

const summary = document.querySelector("[data-error-summary]");
if (summary) {
  summary.focus();
  summary.scrollIntoView({ block: "start" });
  summary.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    if (!link) return;
    const field = document.getElementById(link.getAttribute("href").slice(1));
    if (!field) return;
    event.preventDefault();
    field.scrollIntoView({ block: "center" });
    field.focus();
  });
}
