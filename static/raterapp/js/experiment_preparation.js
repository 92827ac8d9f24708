// Follows an experiment's preparation on its page without reloading it. Each check (run by the
// page's poller, experiment_live.js) reads GET /api/experiments/<id>/ and, when the status or
// the progress moved, swaps in the steps the server draws (GET experiments/<id>/steps/, the
// page's own _steps.html: the step rule lives in Python only). It also keeps the failure
// message, the stalled notice and, once ready, the impact table and judging progress current
// (the status badge is dashboard.js's). Everything from the server is written with textContent
// (never innerHTML), but for the server's own template.

import { announcer } from "./announce.js";
import { requestHtml, requestJson } from "./http.js";
import { count } from "./numbers.js";

const PREPARING = ["queued", "validating", "computing_impact", "sampling"];
const STEP_LABELS = { validating: "validating the upload", computing_impact: "computing impact metrics", sampling: "sampling pairs" };

function formatMetric(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(4) : "—";
}

async function renderSteps(section) {
  const { status, html } = await requestHtml(section.dataset.stepsUrl);
  if (status !== 200) return false;
  const fresh = document.createElement("template");
  fresh.innerHTML = html; // the server's template: every value in it is escaped there
  section.querySelector("[data-steps]").replaceChildren(fresh.content);
  return true;
}

function renderFailure(experiment) {
  const box = document.querySelector("[data-failure]");
  if (!box) return;
  box.hidden = experiment.status !== "failed";
  if (experiment.status === "failed") {
    box.querySelector("[data-failure-message]").textContent = experiment.error || "";
    const step = STEP_LABELS[experiment.error_step];
    box.querySelector("[data-failure-step]").textContent = step ? `: ${step}` : "";
    box.querySelector("[data-failure-id]").hidden = !experiment.error_id;
    box.querySelector("[data-failure-id-value]").textContent = experiment.error_id || "";
    // A file at fault (no error id) wants a new upload; a worker at fault, a re-run.
    box.querySelector("[data-new-from-settings]")?.classList.toggle("button--primary", !experiment.error_id);
    box.querySelector("[data-rerun-form] button")?.classList.toggle("button--primary", Boolean(experiment.error_id));
  }
}

function renderStalled(experiment) {
  const box = document.querySelector("[data-stalled]");
  if (!box) return;
  box.hidden = !experiment.stalled;
  const since = experiment.heartbeat_at || experiment.updated_at;
  if (experiment.stalled && since) {
    const time = box.querySelector("[data-stalled-since]");
    time.dateTime = since;
    time.textContent = new Date(since).toLocaleString();
  }
}

function renderJudging(results, judging) {
  if (!judging) return;
  const set = (selector, value) => {
    const el = results.querySelector(selector);
    if (el) el.textContent = String(value);
  };
  set("[data-judging-verdicts]", judging.verdicts);
  set("[data-judging-wanted]", judging.wanted);
  set("[data-judging-tasks]", judging.tasks);
  const bar = results.querySelector("[data-judging-progress]");
  if (bar) {
    bar.max = judging.wanted || 1;
    bar.value = judging.verdicts;
  }
}

async function renderResults(section, experiment) {
  const results = document.querySelector("[data-results]");
  if (!results) return;
  const { status, data } = await requestJson("GET", section.dataset.impactUrl);
  if (status !== 200 || !data) return;
  const metrics = (data.overall || {}).metrics || {};
  results.querySelectorAll("[data-metric]").forEach((row) => {
    row.querySelector("[data-metric-value]").textContent = formatMetric(metrics[row.dataset.metric]);
  });
  renderJudging(results, experiment.judging);
  results.hidden = false;
  const explorer = document.querySelector("[data-explorer-link]");
  if (explorer) explorer.hidden = false;
}

/** The page's preparation card, when the experiment is still being prepared. */
export function preparationSection() {
  const section = document.getElementById("preparation");
  return section && section.hasAttribute("data-poll") ? section : null;
}

/** A check for `section`: answers whether to check again (still preparing, or no answer). */
export function preparationWatcher(section) {
  const announce = announcer(section.querySelector("[data-announce]"));
  let drawn = `${section.dataset.status}`;
  return async function check() {
    const { status, data: experiment } = await requestJson("GET", section.dataset.statusUrl);
    // A network hiccup or a restarting server: try again on the next tick.
    if (status !== 200 || !experiment) return true;
    const changed = experiment.status !== section.dataset.status;
    section.dataset.status = experiment.status;
    const shown = `${experiment.status} ${experiment.progress}`;
    if (shown !== drawn && (await renderSteps(section))) drawn = shown;
    renderStalled(experiment);
    if (changed) announce(`Status: ${experiment.status_label || experiment.status}`);
    const itemsCount = document.querySelector("[data-items-count]");
    if (itemsCount && experiment.items_count !== null && experiment.items_count !== undefined) {
      itemsCount.textContent = count(experiment.items_count);
    }
    if (PREPARING.includes(experiment.status)) return true;
    renderFailure(experiment);
    if (experiment.status === "rating" || experiment.status === "done") await renderResults(section, experiment);
    // The dashboard (dashboard.js) shows itself now, without waiting for its live stream.
    document.dispatchEvent(new CustomEvent("experiment:prepared"));
    return false;
  };
}
