// The admins' rater page: actions on each row (pause / unpause with a reason, quotas,
// deactivate / reactivate) and the new-rater form, all through /api/raters/.
//
// The server renders the rows (templates/raterapp/admin/raters.html); this module adds the
// action buttons and redraws a row from the API's answer after a change. Usernames, e-mails
// and pause reasons are untrusted: written with textContent (el) only, never as HTML.

import { el } from "./cards.js";
import { requestJson } from "./http.js";

const config = JSON.parse(document.getElementById("raters-config").textContent);
const raters = new Map(JSON.parse(document.getElementById("raters-data").textContent).map((row) => [row.rater, row]));
const tbody = document.querySelector(".raters-table tbody");
const statusLine = document.getElementById("raters-status");

// After a change the row is redrawn; focus moves to the button that now stands where the
// pressed one stood.
const SUCCESSOR = { pause: "unpause", unpause: "pause", deactivate: "reactivate", reactivate: "deactivate", quota: "quota" };

// ---- talking to the API ----------------------------------------------------------------------

const raterUrl = (id) => config.rater.replace(/\/0\/$/, `/${id}/`);

/** DRF's error body as sentences: {field: [messages]} or {detail: message}. */
function messagesOf(result, fields = []) {
  if (result.status === 0) return { "": ["The server could not be reached. Check your connection and try again."] };
  const data = result.data;
  if (!data || typeof data !== "object") return { "": [`The server answered ${result.status}. Try again.`] };
  if (typeof data.detail === "string") return { "": [data.detail] };
  const out = {};
  for (const [name, value] of Object.entries(data)) {
    const key = fields.includes(name) ? name : "";
    const texts = (Array.isArray(value) ? value : [value]).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
    out[key] = [...(out[key] || []), ...(key ? texts : texts.map((t) => (name === "non_field_errors" ? t : `${name}: ${t}`)))];
  }
  return out;
}

/** The messages without their field names: a dialog has one or two fields, named in its text. */
const plainMessages = (result) => Object.values(messagesOf(result, Object.keys(result.data || {}))).flat();

function say(text, { error = false } = {}) {
  statusLine.classList.toggle("raters-status--error", error);
  statusLine.textContent = "";
  // A new text node a moment later, so that the same message twice is announced twice.
  window.setTimeout(() => {
    statusLine.textContent = text;
  }, 30);
}

// ---- formats (the same as the template's) ------------------------------------------------------

const isNumber = (value) => typeof value === "number" && Number.isFinite(value);
const fixed = (value, digits) => (isNumber(value) ? value.toFixed(digits) : "—");

/** Whole percent, ties to even, as Django's widthratio rounds. */
function wholePercent(share) {
  const value = share * 100;
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5 || (diff === 0.5 && floor % 2 === 1)) return floor + 1;
  return floor;
}

// ---- a row -------------------------------------------------------------------------------------

function stateCell(row) {
  const cell = el("td", { attrs: { "data-col": "state", "data-label": "State" } });
  const badges = el("span", { className: "rater-state" });
  if (!row.is_active) badges.append(el("span", { className: "badge badge--inactive", text: "Deactivated" }));
  if (row.paused) badges.append(el("span", { className: "badge badge--paused", text: "Paused" }));
  if (row.is_active && !row.paused) badges.append(el("span", { className: "badge badge--active", text: "Active" }));
  cell.append(badges);
  if (row.paused && row.paused_reason) cell.append(" ", el("span", { className: "rater-reason small", text: row.paused_reason }));
  return cell;
}

function flagsOf(row) {
  if (!row.flags.length) return null;
  const flags = el("span", { className: "rater-flags", attrs: { "data-col": "flags" } });
  if (row.too_fast) flags.append(el("span", { className: "reading reading--bad", text: "Too fast", attrs: { "data-flag": "too_fast" } }));
  if (row.low_gold_accuracy) {
    flags.append(el("span", { className: "reading reading--bad", text: "Low gold accuracy", attrs: { "data-flag": "low_gold_accuracy" } }));
  }
  return flags;
}

function numberCell(col, label, content) {
  const cell = el("td", { className: "num", attrs: { "data-col": col, "data-label": label } });
  cell.append(...(Array.isArray(content) ? content : [content]));
  return cell;
}

function verdictsOf(row) {
  const box = el("span", { className: "verdicts" });
  box.append(el("span", { text: String(row.verdicts) }));
  if (isNumber(row.unsure_share)) box.append(" ", el("span", { className: "small muted unsure", text: `${wholePercent(row.unsure_share)} % unsure` }));
  return box;
}

function goldContent(row) {
  if (!isNumber(row.gold_accuracy)) return "—";
  const ci = `[${fixed(row.gold_ci_low, 2)}, ${fixed(row.gold_ci_high, 2)}]`;
  const gold = el("span", { className: "gold" });
  gold.append(el("span", { text: fixed(row.gold_accuracy, 2) }), " ", el("span", { className: "small muted ci", text: ci }));
  return gold;
}

function quotaCell(row) {
  const cell = el("td", { attrs: { "data-col": "quota", "data-label": "Quota" } });
  const quotas = el("span", { className: "quotas" });
  quotas.append(
    el("span", { className: "quota", text: row.daily_quota === null ? "no daily limit" : `${row.daily_quota} a day` }),
    el("span", { className: "quota", text: row.total_quota === null ? "no total limit" : `${row.total_quota} in all` }),
  );
  cell.append(quotas);
  return cell;
}

function actionButton(action, label, row) {
  const button = el("button", { className: "button button--quiet button--small", text: label, attrs: { type: "button", "data-action": action } });
  button.append(el("span", { className: "visually-hidden", text: ` ${row.username}` }));
  return button;
}

function fillActions(cell, row) {
  cell.replaceChildren(
    row.paused ? actionButton("unpause", "Unpause", row) : actionButton("pause", "Pause", row),
    actionButton("quota", "Quotas", row),
    row.is_active ? actionButton("deactivate", "Deactivate", row) : actionButton("reactivate", "Reactivate", row),
    ...(row.is_active ? [actionButton("password", "Password link", row)] : []),
  );
}

function rowOf(row) {
  const tr = el("tr", { attrs: { "data-rater": String(row.rater) } });
  if (!row.is_active) tr.className = "is-inactive";
  const name = el("th", { attrs: { scope: "row", "data-col": "name" } });
  name.append(el("span", { className: "rater-name", text: row.username }));
  if (row.email) name.append(el("span", { className: "rater-email small muted", text: row.email }));
  const flags = flagsOf(row);
  if (flags) name.append(flags);
  const actions = el("td", { className: "rater-actions", attrs: { "data-col": "actions" } });
  fillActions(actions, row);
  tr.append(
    name,
    stateCell(row),
    numberCell("verdicts", "Verdicts", verdictsOf(row)),
    numberCell("median", "Median s", fixed(row.median_seconds, 1)),
    numberCell("gold", "Gold accuracy", goldContent(row)),
    numberCell("agreement", "Mean κ", fixed(row.mean_kappa, 2)),
    quotaCell(row),
    actions,
  );
  return tr;
}

const rowElement = (id) => tbody.querySelector(`tr[data-rater="${Number(id)}"]`);

function showRow(row, { focusAction } = {}) {
  raters.set(row.rater, row);
  const fresh = rowOf(row);
  const old = rowElement(row.rater);
  if (old) {
    old.replaceWith(fresh);
  } else {
    const next = [...tbody.rows].find((tr) => {
      const other = raters.get(Number(tr.dataset.rater));
      return other && other.username > row.username;
    });
    tbody.insertBefore(fresh, next || null);
    fresh.classList.add("is-new");
  }
  document.querySelector("[data-no-raters]").hidden = raters.size > 0;
  document.querySelector(".raters-scroll").hidden = raters.size === 0;
  document.querySelector("[data-rater-count]").textContent = `(${raters.size})`;
  if (focusAction) {
    const button = fresh.querySelector(`[data-action="${focusAction}"]`);
    if (button) button.focus();
  }
}

// ---- dialogs: pause, quotas, deactivate --------------------------------------------------------

let current = null; // { dialog, rater, action, done }

function showErrors(node, texts) {
  node.replaceChildren(...texts.map((text) => el("span", { className: "errors__line", text })));
  node.hidden = !texts.length;
}

/** The refused fields, marked beside themselves (red border, aria-invalid); the others cleared. */
function markInvalid(form, names) {
  for (const input of form.querySelectorAll("input, textarea")) {
    const bad = names.includes(input.name);
    input.closest(".field")?.classList.toggle("field--invalid", bad);
    input.toggleAttribute("aria-invalid", bad);
  }
}

function quotaValue(input) {
  const text = input.value.trim();
  return text === "" ? null : Number(text);
}

const DIALOGS = {
  pause: {
    dialog: document.getElementById("pause-dialog"),
    fill(form, row) {
      form.elements.paused_reason.value = row.paused ? row.paused_reason : "";
    },
    body(form) {
      return { paused: true, paused_reason: form.elements.paused_reason.value };
    },
    invalid(form) {
      return form.elements.paused_reason.value.trim() ? [] : ["paused_reason"];
    },
    check(form) {
      return form.elements.paused_reason.value.trim() ? [] : ["Say why the rater is paused."];
    },
    done: (row) => `${row.username} is paused: no pairs go to them until you unpause them.`,
  },
  quota: {
    dialog: document.getElementById("quota-dialog"),
    fill(form, row) {
      form.elements.daily_quota.value = row.daily_quota === null ? "" : String(row.daily_quota);
      form.elements.total_quota.value = row.total_quota === null ? "" : String(row.total_quota);
    },
    body(form) {
      return { daily_quota: quotaValue(form.elements.daily_quota), total_quota: quotaValue(form.elements.total_quota) };
    },
    invalid(form) {
      return [form.elements.daily_quota, form.elements.total_quota]
        .filter((input) => {
          const value = quotaValue(input);
          return !input.validity.valid || (value !== null && !(Number.isInteger(value) && value >= 0));
        })
        .map((input) => input.name);
    },
    check(form) {
      const labels = { daily_quota: "Verdicts per day", total_quota: "Verdicts in all" };
      return this.invalid(form).map((name) => `${labels[name]}: give a whole number of verdicts, 0 or more, or leave the box empty for no limit.`);
    },
    done(row) {
      const daily = row.daily_quota === null ? "no daily limit" : `${row.daily_quota} a day`;
      const total = row.total_quota === null ? "no total limit" : `${row.total_quota} in all`;
      return `Quotas of ${row.username} saved: ${daily}, ${total}.`;
    },
  },
  deactivate: {
    dialog: document.getElementById("deactivate-dialog"),
    fill() {},
    body: () => ({ is_active: false }),
    check: () => [],
    done: (row) => `${row.username} is deactivated and can no longer sign in.`,
  },
};

function openDialog(action, rater, trigger) {
  const spec = DIALOGS[action];
  const form = spec.dialog.querySelector("form");
  for (const node of spec.dialog.querySelectorAll("[data-dialog-username]")) node.textContent = rater.username;
  spec.fill(form, rater);
  showErrors(spec.dialog.querySelector(".errors"), []);
  markInvalid(form, []);
  current = { spec, rater, action, trigger, updated: false };
  spec.dialog.showModal();
}

for (const [action, spec] of Object.entries(DIALOGS)) {
  const form = spec.dialog.querySelector("form");
  const errors = spec.dialog.querySelector(".errors");
  const submit = form.querySelector("button[type='submit']");
  spec.dialog.querySelector("[data-dialog-cancel]").addEventListener("click", () => spec.dialog.close());
  spec.dialog.addEventListener("close", () => {
    // The close event comes a task later: the dialog may be open again already, for a new change.
    if (spec.dialog.open || !current || current.spec !== spec) return;
    const { rater, updated, trigger } = current;
    current = null;
    if (updated) {
      const button = rowElement(rater.rater)?.querySelector(`[data-action="${SUCCESSOR[action]}"]`);
      if (button) button.focus();
    } else if (trigger && trigger.isConnected) {
      trigger.focus();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!current || submit.disabled) return;
    const problems = spec.check(form);
    showErrors(errors, problems);
    markInvalid(form, spec.invalid ? spec.invalid(form) : []);
    if (problems.length) {
      errors.focus();
      return;
    }
    submit.disabled = true;
    const result = await requestJson("PATCH", raterUrl(current.rater.rater), spec.body(form));
    submit.disabled = false;
    if (result.status === 200 && result.data) {
      current.updated = true;
      showRow(result.data);
      spec.dialog.close();
      say(spec.done(result.data));
      return;
    }
    showErrors(errors, plainMessages(result));
    markInvalid(form, Object.keys(result.data || {}).filter((name) => form.elements[name]));
    errors.focus();
  });
}

// Unpause and reactivate undo nothing irreversible: no dialog.
async function quickChange(action, rater) {
  const body = action === "unpause" ? { paused: false } : { is_active: true };
  const result = await requestJson("PATCH", raterUrl(rater.rater), body);
  if (result.status === 200 && result.data) {
    showRow(result.data, { focusAction: SUCCESSOR[action] });
    say(action === "unpause" ? `${result.data.username} is unpaused and gets pairs again.` : `${result.data.username} is reactivated and can sign in again.`);
    return;
  }
  say(`${rater.username} was not changed: ${plainMessages(result).join(" ")}`, { error: true });
}

tbody.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || button.disabled) return;
  const rater = raters.get(Number(button.closest("tr").dataset.rater));
  if (!rater) return;
  const action = button.dataset.action;
  if (DIALOGS[action]) {
    openDialog(action, rater, button);
  } else if (action === "password") {
    button.disabled = true;
    passwordLink(rater).finally(() => {
      button.disabled = false;
    });
  } else {
    button.disabled = true;
    quickChange(action, rater).finally(() => {
      button.disabled = false;
    });
  }
});

// ---- a new rater ------------------------------------------------------------------------------

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
    const messages = messagesOf(result, CREATE_FIELDS);
    showCreateErrors(messages);
    say("The rater was not created: see the form.", { error: true });
    return;
  }
  showCreateErrors({});
  const { set_password_url: link, ...row } = result.data;
  showRow(row);
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
async function passwordLink(rater) {
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

// ---- start: the buttons on the server's rows ----------------------------------------------------

for (const tr of tbody.rows) {
  const row = raters.get(Number(tr.dataset.rater));
  if (row) fillActions(tr.querySelector("[data-col='actions']"), row);
}
