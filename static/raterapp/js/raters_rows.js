// The raters page's rows. The server draws every row (_rater_row.html, on the page and again
// from GET raters/<id>/row/ after a change), so the formats and the flags follow one rule;
// this module adds the action buttons and keeps each rater's numbers for the dialogs.
// Usernames, e-mails and pause reasons are untrusted: the buttons take them as textContent.

import { announcer } from "./announce.js";
import { el } from "./cards.js";
import { messagesByField } from "./errors.js";
import { requestHtml } from "./http.js";

export const raters = new Map(JSON.parse(document.getElementById("raters-data").textContent).map((row) => [row.rater, row]));
export const tbody = document.querySelector(".raters-table tbody");
const rowUrl = (id) => document.querySelector(".raters-table").dataset.rowUrl.replace(/\/0\/row\/$/, `/${id}/row/`);

export const say = announcer(document.getElementById("raters-status"), { errorClass: "raters-status--error", repeat: true });

export const rowElement = (id) => tbody.querySelector(`tr[data-rater="${Number(id)}"]`);

function actionButton(action, label, row) {
  const button = el("button", { className: "button button--quiet button--small", text: label, attrs: { type: "button", "data-action": action } });
  button.append(el("span", { className: "visually-hidden", text: ` ${row.username}` }));
  return button;
}

export function fillActions(cell, row) {
  cell.replaceChildren(
    row.paused ? actionButton("unpause", "Unpause", row) : actionButton("pause", "Pause", row),
    actionButton("quota", "Quotas", row),
    row.is_active ? actionButton("deactivate", "Deactivate", row) : actionButton("reactivate", "Reactivate", row),
    ...(row.is_active ? [actionButton("password", "Password link", row)] : []),
  );
}

async function freshRow(row) {
  const { status, html } = await requestHtml(rowUrl(row.rater));
  if (status !== 200) return null;
  const template = document.createElement("template");
  template.innerHTML = html.trim(); // the server's template: every value in it is escaped there
  const tr = template.content.querySelector("tr");
  if (tr) fillActions(tr.querySelector("[data-col='actions']"), row);
  return tr;
}

/** The rater's row drawn again by the server (or added, in name order); answers whether it was. */
export async function showRow(row, { focusAction } = {}) {
  raters.set(row.rater, row);
  const fresh = await freshRow(row);
  if (!fresh) {
    say(`${row.username} was changed, but their row could not be drawn again: reload the page.`, { error: true });
    return false;
  }
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
  return true;
}

/** The buttons on the rows the page came with. */
export function fillAllActions() {
  for (const tr of tbody.rows) {
    const row = raters.get(Number(tr.dataset.rater));
    if (row) fillActions(tr.querySelector("[data-col='actions']"), row);
  }
}

/** A refusal's messages by field (see errors.js), or what to say when it has none. */
export function refusalByField(result, fields = []) {
  if (result.status === 0) return { "": ["The server could not be reached. Check your connection and try again."] };
  const messages = messagesByField(result, fields);
  return Object.keys(messages).length ? messages : { "": [`The server answered ${result.status}. Try again.`] };
}

/** The messages without their field names: a dialog has one or two fields, named in its text. */
export const plainMessages = (result) => Object.values(refusalByField(result, Object.keys(result.data || {}))).flat();

export function showErrors(node, texts) {
  node.replaceChildren(...texts.map((text) => el("span", { className: "errors__line", text })));
  node.hidden = !texts.length;
}
