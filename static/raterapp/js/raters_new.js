// The raters page's new-rater form (POST /api/raters/) and the one-time links to choose a
// password, shown once with a button to copy them.

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { plainMessages, refusalByField, say, showErrors, showRow } from "./raters_rows.js";

const config = JSON.parse(document.getElementById("raters-config").textContent);
const createForm = document.getElementById("new-rater");
const linkPanel = document.getElementById("new-rater-link");
const linkInput = document.getElementById("new-rater-link-url");
const copyButton = linkPanel.querySelector("[data-copy-link]");
const CREATE_FIELDS = ["username", "email"];

function showCreateErrors(messages) {
  for (const name of CREATE_FIELDS) {
    const texts = messages[name] || [];
    const input = createForm.elements[name];
    showErrors(document.getElementById(`new-rater-${name}-errors`), texts);
    input.closest(".field").classList.toggle("field--invalid", texts.length > 0);
    if (texts.length) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  showErrors(document.getElementById("new-rater-errors"), messages[""] || []);
  const firstBad = CREATE_FIELDS.find((name) => (messages[name] || []).length);
  if (firstBad) createForm.elements[firstBad].focus();
}

createForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const submit = createForm.querySelector("button[type='submit']");
  if (submit.disabled) return;
  submit.disabled = true;
  const body = { username: createForm.elements.username.value.trim(), email: createForm.elements.email.value.trim() };
  const result = await requestJson("POST", config.raters, body);
  submit.disabled = false;
  if (result.status !== 201 || !result.data) {
    const messages = refusalByField(result, CREATE_FIELDS);
    showCreateErrors(messages);
    say("The rater was not created: see the form.", { error: true });
    return;
  }
  showCreateErrors({});
  const { set_password_url: link, ...row } = result.data;
  await showRow(row);
  createForm.reset();
  showLink(row.username, link, " can now choose a password at this link. It is shown only this once: copy it now.");
  say(`${row.username} is created. Copy their one-time link to choose a password now: it is not shown again.`);
});

function showLink(username, link, title) {
  linkPanel.querySelector(".new-rater-link__title").replaceChildren(el("strong", { text: username, attrs: { "data-link-username": "" } }), title);
  linkInput.value = link || "";
  copyButton.textContent = "Copy link";
  linkPanel.hidden = false;
  linkPanel.scrollIntoView({ block: "center" });
  linkInput.focus();
  linkInput.select();
}

// A new one-time link for a rater who forgot their password: shown once, like a new rater's.
export async function passwordLink(rater) {
  const result = await requestJson("POST", config.password_link.replace(/\/0\/password-link\/$/, `/${rater.rater}/password-link/`));
  if (result.status !== 200 || !result.data) {
    say(`No link for ${rater.username}: ${plainMessages(result).join(" ")}`, { error: true });
    return;
  }
  showLink(result.data.username, result.data.set_password_url, " can choose a new password at this link; the current one works until then. It is shown only this once: copy it now.");
  say(`A one-time link for ${result.data.username} to choose a new password. Copy it now: it is not shown again.`);
}

copyButton.addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(linkInput.value);
    copyButton.textContent = "Copied";
    say("The link is copied.");
  } catch {
    linkInput.focus();
    linkInput.select();
    say("Copying is not allowed here: the link is selected, copy it with Ctrl+C (⌘C on a Mac).", { error: true });
  }
});

linkPanel.querySelector("[data-dismiss-link]").addEventListener("click", () => {
  linkInput.value = "";
  linkPanel.hidden = true;
  createForm.elements.username.focus();
});
