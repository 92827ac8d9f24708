// More draws for the experiment: the batch history, the plan of another batch before it is
// drawn (expected new pairs, verdicts, cost, budget left), and the request itself.
// dashboard.js calls renderBatches on every new dashboard.

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { errorText, failedText } from "./errors.js";
import { count, money } from "./numbers.js";

const section = document.querySelector("[data-batches]");

function when(iso) {
  return iso ? new Date(iso).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "—";
}

export function renderBatches(batches) {
  if (!section || !batches) return;
  const rows = batches.map((b) => {
    const state = b.error ? `${b.status_label}: ${b.error}` : b.status_label;
    const tr = el("tr", { attrs: { "data-batch": String(b.index), "data-batch-status": b.status } });
    tr.append(
      el("th", { text: String(b.index), attrs: { scope: "row" } }),
      el("td", { text: count(b.draws), className: "num" }),
      el("td", { text: count(b.new_pairs), className: "num", attrs: { "data-batch-new-pairs": "" } }),
      el("td", { text: count(b.new_sample_rows), className: "num" }),
      el("td", { text: count(b.repeated_pairs), className: "num" }),
      el("td", { text: b.drawn_by || "—" }),
      el("td", { text: when(b.created_at) }),
      el("td", { text: state, className: b.status === "failed" ? "error-text" : "" }),
    );
    return tr;
  });
  if (!rows.length) {
    const empty = el("tr");
    empty.append(el("td", { text: "No batch yet.", className: "muted", attrs: { colspan: "8" } }));
    rows.push(empty);
  }
  section.querySelector("[data-batches-rows]").replaceChildren(...rows);
  const form = section.querySelector("[data-batch-form]");
  if (form && !planShown) {
    planShown = true; // the sample exists now: plan the batch the form proposes
    showPlan(form);
  }
  const drawing = batches.some((b) => b.status === "drawing");
  const submit = section.querySelector("[data-batch-submit]");
  if (submit) {
    submit.disabled = drawing;
    submit.textContent = drawing ? "Drawing…" : "Draw the batch";
  }
}

function planText(plan) {
  const parts = [`Expected: about ${count(plan.new_pairs)} new pairs to judge`, `${count(plan.verdicts)} verdicts`];
  if (plan.cost_per_verdict) parts.push(`cost ${money(plan.cost)}`);
  let text = `${parts.join(", ")}.`;
  if (plan.budget_left === null) text += " The budget has no limit.";
  else if (plan.within_budget) text += ` ${count(plan.budget_left)} verdicts are left in the budget.`;
  else text += ` Only ${count(plan.budget_left)} verdicts are left in the budget: raters stop when it is spent.`;
  return text;
}

let planTimer = null;
let planShown = false;

async function showPlan(form) {
  const output = form.querySelector("[data-batch-plan]");
  const draws = Number(form.elements.draws.value);
  if (!Number.isInteger(draws) || draws < 1) {
    output.textContent = "Give a whole number of draws.";
    return;
  }
  const { status, data } = await requestJson("GET", `${section.dataset.planUrl}?draws=${draws}`);
  output.textContent = status === 200 ? planText(data) : errorText({ status, data }, failedText);
}

export function bindBatchForm(onRequested) {
  const form = section && section.querySelector("[data-batch-form]");
  if (!form) return;
  form.elements.draws.addEventListener("input", () => {
    window.clearTimeout(planTimer);
    planTimer = window.setTimeout(() => showPlan(form), 300);
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = form.querySelector("[data-batch-status]");
    const draws = Number(form.elements.draws.value);
    // One id per request the owner means: a second click before the answer asks for the same batch.
    form.dataset.requestId ||= crypto.randomUUID();
    const body = { draws, request_id: form.dataset.requestId };
    const { status: code, data } = await requestJson("POST", section.dataset.batchesUrl, body);
    if (code === 202) {
      delete form.dataset.requestId;
      status.textContent = `Batch ${data.index} requested: the worker is drawing ${count(data.draws)} draws.`;
      onRequested();
    } else {
      status.textContent = errorText({ status: code, data }, failedText);
    }
  });
}
