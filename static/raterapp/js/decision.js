// The headline decision of the experiment page: Exp is better / worse / no meaningful
// difference / not enough data yet, with the numbers behind it and, while undecided, what
// should settle it. dashboard.js calls renderDecision on every new dashboard; the owner's rule
// form saves through the API and asks for a fresh dashboard. Server text goes in with
// textContent only.

import { el } from "./cards.js";
import { errorText, failedText } from "./errors.js";
import { glossaryTerm } from "./glossary_tips.js";
import { requestJson } from "./http.js";
import { count, fmt, interval, money, sequence } from "./numbers.js";

function setText(card, selector, value) {
  const node = card.querySelector(selector);
  if (node) node.textContent = value;
}

export function renderDecision(decision) {
  const card = document.querySelector("[data-decision]");
  if (!card) return;
  card.hidden = !decision;
  if (!decision) return;
  card.className = `card decision decision--${decision.key}`;
  setText(card, "[data-decision-label]", decision.label);
  setText(card, "[data-decision-why]", decision.sentence || "");
  setText(card, "[data-decision-metric]", decision.metric_label);
  const fragile = card.querySelector("[data-decision-fragile]");
  fragile.hidden = !decision.fragile;
  setText(card, "[data-decision-fragile-note]", decision.fragile_note || "");
  const rows = decision.numbers.map((row) => {
    const tr = el("tr", { attrs: { "data-decision-number": row.metric } });
    const name = el("th", { attrs: { scope: "row" } });
    name.append(glossaryTerm(row.label, row.help, `decision:${row.metric}`));
    // ΔRecall and IQ rest on an assumed Recall_Base: said beside their numbers (abcde-spec §14).
    if (row.assumption) name.append(el("span", { text: ` ${row.assumption}`, className: "small muted", attrs: { "data-assumption": "" } }));
    // Beside a model-assisted headline, a number that is not (ΔRecall before the worker's next pass).
    if (decision.model_assisted && row.basis === "human_only") {
      name.append(el("span", { text: " · human-only", className: "small muted", attrs: { "data-basis": row.basis } }));
    }
    tr.append(
      name,
      el("td", { text: fmt(row.value), className: "num" }),
      el("td", { text: interval(row), className: "num" }),
      el("td", { text: sequence(row), className: "num" }),
    );
    return tr;
  });
  card.querySelector("[data-decision-numbers]").replaceChildren(...rows);
  const settle = card.querySelector("[data-decision-settle]");
  settle.hidden = !decision.settle;
  if (decision.settle) {
    setText(card, '[data-settle="verdicts"]', count(decision.settle.verdicts));
    setText(card, '[data-settle="cost"]', money(decision.settle.cost));
    card.querySelector("[data-settle-forecast]").hidden = Boolean(decision.settle.beyond_reach);
    card.querySelector("[data-settle-beyond]").hidden = !decision.settle.beyond_reach;
    card.querySelector("[data-settle-cost-part]").hidden = !decision.settle.cost;
  }
}

function say(status, text, { error = false } = {}) {
  status.textContent = text;
  status.classList.toggle("error-text", error);
}

export function bindDecisionForm(onSaved) {
  const card = document.querySelector("[data-decision]");
  const form = card && card.querySelector("[data-decision-form]");
  if (!form) return;
  const status = form.querySelector("[data-decision-status]");
  // "Rule saved." speaks of the last save only: an edit, a refusal by the browser's own checks
  // (which fire no submit event) or by the server replaces it.
  form.addEventListener("input", () => say(status, ""));
  form.addEventListener(
    "invalid",
    (event) => {
      const label = form.querySelector(`label[for="${event.target.id}"]`);
      say(status, `Not saved: ${label ? label.textContent : event.target.name}: ${event.target.validationMessage}`, { error: true });
    },
    true,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      decision_metric: form.elements.decision_metric.value,
      equivalence_margin: Number(form.elements.equivalence_margin.value),
    };
    say(status, "Saving…");
    const { status: code, data } = await requestJson("PUT", card.dataset.decisionUrl, body);
    if (code === 200) {
      say(status, "Rule saved.");
      onSaved();
    } else {
      say(status, `Not saved: ${errorText({ status: code, data }, failedText)}`, { error: true });
    }
  });
}
