// Follows an experiment's preparation on its page without reloading it.
// Polls GET /api/experiments/<id>/ every 2 s while the experiment is preparing, and updates
// the step list, the current step's progress bar, the failure message and, once ready, the
// impact table and judging progress (the status badge is dashboard.js's), and whether the
// preparation has stalled (its worker lost: the re-run button shows). Everything from the server is written with textContent
// (never innerHTML): error texts and names are untrusted. The step rule mirrors
// raterapp/views/experiments.py:preparation_steps.

const STEPS = ["validating", "computing_impact", "sampling", "rating"];
const PREPARING = ["queued", "validating", "computing_impact", "sampling"];
const STATE_TEXT = { done: "Done", current: "In progress", pending: "Pending", stopped: "Not completed" };
const POLL_MS = 2000;

export function stepStates(status) {
  if (status === "failed") return STEPS.map(() => "stopped");
  let reached;
  if (status === "done") reached = STEPS.length;
  else if (status === "queued") reached = 0;
  else reached = Math.max(STEPS.indexOf(status), 0);
  return STEPS.map((step, index) => {
    if (index < reached || (step === "rating" && index === reached)) return "done";
    return index === reached ? "current" : "pending";
  });
}

function formatMetric(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(4) : "—";
}

function renderSteps(section, experiment) {
  const states = stepStates(experiment.status);
  const percent = Math.round(100 * Math.min(Math.max(Number(experiment.progress) || 0, 0), 1));
  section.querySelectorAll("[data-step]").forEach((item) => {
    const index = STEPS.indexOf(item.dataset.step);
    const state = states[index];
    item.className = `step step--${state}`;
    if (state === "current") item.setAttribute("aria-current", "step");
    else item.removeAttribute("aria-current");
    const waiting = state === "current" && experiment.status === "queued";
    item.querySelector("[data-step-state]").textContent = waiting ? "Waiting" : STATE_TEXT[state];
    const bar = item.querySelector("[data-step-progress]");
    bar.hidden = state !== "current" || item.dataset.step === "rating";
    bar.value = state === "current" ? percent : 0;
  });
  const queued = section.querySelector("[data-queued]");
  if (queued) queued.hidden = experiment.status !== "queued";
}

const STEP_LABELS = { validating: "validating the upload", computing_impact: "computing impact metrics", sampling: "sampling pairs" };

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
  const response = await fetch(section.dataset.impactUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (!response.ok) return;
  const metrics = ((await response.json()).overall || {}).metrics || {};
  results.querySelectorAll("[data-metric]").forEach((row) => {
    row.querySelector("[data-metric-value]").textContent = formatMetric(metrics[row.dataset.metric]);
  });
  renderJudging(results, experiment.judging);
  results.hidden = false;
  const explorer = document.querySelector("[data-explorer-link]");
  if (explorer) explorer.hidden = false;
}

function announce(section, experiment) {
  const region = section.querySelector("[data-announce]");
  if (region) region.textContent = `Status: ${experiment.status_label || experiment.status}`;
}

async function poll(section) {
  let experiment;
  try {
    const response = await fetch(section.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    experiment = await response.json();
  } catch (error) {
    // A network hiccup or a restarting server: try again on the next tick.
    window.setTimeout(() => poll(section), POLL_MS);
    return;
  }
  const changed = experiment.status !== section.dataset.status;
  section.dataset.status = experiment.status;
  renderSteps(section, experiment);
  renderStalled(experiment);
  if (changed) announce(section, experiment);
  const itemsCount = document.querySelector("[data-items-count]");
  if (itemsCount && experiment.items_count !== null && experiment.items_count !== undefined) {
    itemsCount.textContent = String(experiment.items_count);
  }
  if (PREPARING.includes(experiment.status)) {
    window.setTimeout(() => poll(section), POLL_MS);
    return;
  }
  renderFailure(experiment);
  if (experiment.status === "rating" || experiment.status === "done") {
    await renderResults(section, experiment);
  }
  // The dashboard (dashboard.js) shows itself now, without waiting for its live stream.
  document.dispatchEvent(new CustomEvent("experiment:prepared"));
}

function start() {
  const section = document.getElementById("preparation");
  if (section && section.hasAttribute("data-poll")) {
    window.setTimeout(() => poll(section), POLL_MS);
  }
}

start();
