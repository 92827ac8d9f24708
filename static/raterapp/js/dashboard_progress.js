// The dashboard's header and counts: the status badge and its reasons, the rating switch, the
// progress to the precision target and the raters' agreement.

import { el } from "./cards.js";
import { count, fmt, isNumber, money, percent } from "./numbers.js";

export function setText(scope, selector, value) {
  scope.querySelectorAll(selector).forEach((node) => {
    node.textContent = value;
  });
}

// ---- header: badge, reasons, rating switch ----------------------------------------------

export function renderBadge(badge, status) {
  const holder = document.querySelector("[data-status-badge] .badge");
  if (holder) {
    holder.className = `badge badge--${badge.key}`;
    holder.textContent = badge.label;
  }
  const reasons = document.querySelector("[data-badge-reasons]");
  if (reasons) {
    reasons.replaceChildren(...badge.reasons.map((reason) => el("li", { text: reason })));
    reasons.hidden = Boolean(badge.waiting); // the waiting alert below says them
  }
  document.querySelectorAll("[data-rating-switch]").forEach((button) => {
    const wanted = button.dataset.ratingSwitch === "close" ? "rating" : "done";
    button.hidden = status !== wanted;
  });
  renderWaiting(badge.waiting || null);
}

// What the experiment waits for before a rater can be offered a pair (null: nothing), in the
// alert under the header and in the Rating step.
function renderWaiting(waiting) {
  const alert = document.querySelector("[data-waiting]");
  if (alert) {
    alert.hidden = !waiting;
    if (waiting) {
      setText(alert, "[data-waiting-label]", waiting.label);
      alert.querySelector("[data-waiting-reasons]")?.replaceChildren(...waiting.reasons.map((reason) => el("li", { text: reason })));
    }
  }
  const step = document.querySelector('[data-step="rating"].step--done [data-step-state]');
  if (step) step.textContent = waiting ? waiting.label : "Done";
}

// ---- progress, agreement ----------------------------------------------------------------

export function renderProgress(root, progress) {
  const set = (name, value) => setText(root, `[data-progress="${name}"]`, value);
  for (const name of ["verdicts", "wanted", "remaining", "judged_pairs", "tasks", "judged_draws", "drawn_draws"]) {
    set(name, count(progress[name] ?? 0));
  }
  set("rate", progress.rate_per_hour === null ? "—" : `${count(Math.round(progress.rate_per_hour))} verdicts per hour`);
  set(
    "budget",
    progress.budget_max_verdicts === null
      ? "No limit"
      : `${count(progress.budget_left)} of ${count(progress.budget_max_verdicts)} verdicts left`,
  );
  setText(root, "[data-budget='spent']", count(progress.budget_spent));
  setText(root, "[data-budget='spent-cost']", money(progress.budget_spent_cost));
  if (progress.budget_left !== null) setText(root, "[data-budget='left']", count(progress.budget_left));
  set("half_width", fmt(progress.half_width));
  set("target", fmt(progress.target_half_width));
  let more = "—";
  if (progress.more_judgements === 0) more = "Reached.";
  else if (progress.more_judgements !== null) {
    more = `About ${count(progress.more_judgements)} more verdicts`;
    if (progress.hours_to_target !== null) more += `, ~${fmt(progress.hours_to_target, 1)} h at the current rate`;
    more += progress.sample_suffices ? "." : "; the sample has fewer left: draw more pairs.";
    if (progress.budget_left !== null && progress.more_judgements > progress.budget_left) more += " The budget runs out first.";
  }
  set("more", more);
  // The judging line of the impact card (filled in by the page, kept current here).
  setText(document, "[data-judging-verdicts]", count(progress.verdicts));
  setText(document, "[data-judging-wanted]", count(progress.wanted));
  setText(document, "[data-judging-tasks]", count(progress.tasks));
  const judging = document.querySelector("[data-judging-progress]");
  if (judging) {
    judging.max = progress.wanted || 1;
    judging.value = progress.verdicts;
  }
  const bar = root.querySelector("[data-precision-bar]");
  bar.value = progress.half_width ? Math.min(progress.target_half_width / progress.half_width, 1) : 0;
}

// The budget card's "What more precision costs", from the same snapshot as the progress above.
export function renderBudgetPlan(root, plan) {
  const block = root.querySelector("[data-plan-block]");
  if (!block || !plan) return;
  block.hidden = plan.metrics.length === 0;
  setText(block, "[data-plan-target]", String(plan.target_half_width));
  setText(block, "[data-plan-judgements]", count(plan.judgements));
  block.querySelector("[data-plan-assisted]").hidden = !plan.model_assisted;
  const more = (value) => (value === null ? "—" : value === 0 ? "reached" : count(value));
  const rows = plan.metrics.map((row) => {
    const tr = el("tr");
    tr.append(
      el("th", { text: row.metric, attrs: { scope: "row" } }),
      el("td", { text: fmt(row.half_width), className: "num" }),
      el("td", { text: more(row.more_verdicts), className: "num" }),
      el("td", { text: money(row.cost), className: "num" }),
    );
    return tr;
  });
  block.querySelector("[data-plan-rows]").replaceChildren(...rows);
}

export function renderAgreement(root, agreement) {
  const has = agreement && agreement.replicated_pairs > 0;
  root.querySelector("[data-agreement-empty]").hidden = has;
  root.querySelector("[data-agreement]").hidden = !has;
  if (!has) return;
  root.querySelectorAll("[data-agreement-value]").forEach((node) => {
    const value = agreement[node.dataset.agreementValue];
    if (node.dataset.format === "percent") node.textContent = percent(value);
    else if (node.dataset.format === "fixed") node.textContent = fmt(value, 3);
    else node.textContent = isNumber(value) ? count(value) : "—";
  });
}
