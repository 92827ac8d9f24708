// The engineer's dashboard of one experiment: estimates with intervals, decompositions, the
// expected situation of an affected item, convergence, progress to the precision target,
// rater agreement and slices. Every number comes from the API (GET .../dashboard/, which the
// page also embeds as #dashboard-data); these modules only draw it. Live: the page listens to
// the server-sent events of .../events/ (the dashboard and the convergence points it lacks, as
// the experiment changes), so an idle page sends nothing. When the stream cannot open (204: no
// Redis or no ASGI server, as in the embedded demo) or keeps failing, the page's one poller
// (experiment_live.js) asks dashboard/ every second with If-None-Match instead, where an
// unchanged experiment costs an empty 304.
// Charts are Chart.js (vendored, global `Chart`). Text from the server goes in with
// textContent only.

import { announcer } from "./announce.js";
import { errorText } from "./errors.js";
import { requestJson } from "./http.js";
import { renderDerivedPanels } from "./derived_panels.js";
import { bindModelAssistedForm, renderModelAssisted } from "./model_assisted.js";
import { renderRaterAware } from "./rater_aware.js";
import { bindDecisionForm, renderDecision } from "./decision.js";
import { bindRecallBaseForm } from "./recall_base.js";
import { bindBatchForm, renderBatches } from "./batches.js";
import { chartMaker } from "./numbers.js";
import { renderDecomposition, renderEstimates, renderSituation, renderStale } from "./dashboard_charts.js";
import { convergenceChart } from "./dashboard_convergence.js";
import { renderAgreement, renderBadge, renderBudgetPlan, renderProgress } from "./dashboard_progress.js";
import { slicesTable } from "./dashboard_slices.js";
import { eventStream } from "./event_stream.js";

const root = document.querySelector("[data-dashboard]");
const chart = root ? chartMaker(root) : null;
const convergence = root ? convergenceChart(root, chart) : null;
const slices = root ? slicesTable(root) : null;
const announce = announcer(root && root.querySelector("[data-dashboard-announce]"));
let etag = null;
let state = null;
let live = "starting"; // "stream" while events arrive, "polling" after the fallback
let onPolling = () => {};

async function send(url, method, body) {
  const result = await requestJson(method, url, body);
  if (result.status < 200 || result.status >= 300) throw new Error(errorText(result));
  return result.data;
}

function render(data) {
  const previous = state;
  state = data;
  const ready = ["rating", "done"].includes(data.experiment.status);
  root.hidden = !ready;
  renderBadge(data.badge, data.experiment.status);
  renderDecision(data.decision);
  // The cards of human-only estimates say so while the headline is model-assisted.
  const assisted = Boolean(data.decision && data.decision.model_assisted);
  document.querySelectorAll("[data-human-only-note]").forEach((note) => {
    note.hidden = !assisted;
  });
  if (!ready) return;
  renderBatches(data.batches);
  renderEstimates(root, chart, data.estimates, data.snapshot);
  renderStale(root, data.stale);
  renderDecomposition(root, chart, data.estimates, data.experiment.scheme);
  renderSituation(root, chart, data.situation);
  renderProgress(root, data.progress);
  renderBudgetPlan(root, data.budget_plan);
  renderAgreement(root, data.agreement);
  renderDerivedPanels(root, data);
  renderRaterAware(root, data);
  renderModelAssisted(root, data);
  const snapshotChanged = !previous || (previous.snapshot || {}).id !== (data.snapshot || {}).id;
  // The slices' estimates are computed by the derived step that follows each snapshot.
  const derivedChanged = !previous || (previous.derived || {}).id !== (data.derived || {}).id;
  if (snapshotChanged || derivedChanged) slices.reload();
  if (snapshotChanged) {
    if (live === "polling") convergence.load(); // the stream's events carry the new points
    if (previous && data.snapshot) announce(`Estimates updated: ${data.snapshot.judgements} verdicts.`);
  }
}

/** One poll of the dashboard (experiment_live.js runs it while the stream is out). */
export async function fetchDashboard() {
  if (!root) return;
  const headers = etag ? { "If-None-Match": etag } : {};
  const result = await requestJson("GET", root.dataset.dashboardUrl, undefined, { headers, cache: "no-store" });
  // A 304, a network hiccup or a restarting server: the next tick (or event) tries again.
  if (result.status === 200 && result.data) {
    etag = result.etag;
    render(result.data);
  }
}

export const dashboardPolling = () => live === "polling";

function startPolling() {
  if (live === "polling") return;
  live = "polling";
  root.dataset.live = live;
  convergence.load();
  onPolling();
}

function applyEvent(payload) {
  convergence.apply(payload.convergence);
  etag = `"${payload.dashboard.version}"`;
  render(payload.dashboard);
  convergence.render();
}

function openStream() {
  eventStream(root.dataset.eventsUrl, "dashboard", {
    onOpen() {
      live = "stream";
      root.dataset.live = live;
    },
    onEvent: applyEvent,
    onGiveUp: startPolling,
  });
}

// After the page's own change (target, rating switch, decision rule, batch) or the end of the
// preparation: the stream brings it too, but at once is better.
function refreshNow() {
  if (live === "polling") etag = null;
  else fetchDashboard();
}

function bindControls() {
  const form = root.querySelector("[data-target-form]");
  if (form) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const status = form.querySelector("[data-target-status]");
      try {
        await send(root.dataset.targetUrl, "PUT", { target_half_width: Number(form.elements.target_half_width.value) });
        status.textContent = "Target saved.";
        refreshNow();
      } catch (error) {
        status.textContent = error.message;
      }
    });
  }
  document.querySelectorAll("[data-rating-switch]").forEach((button) => {
    button.addEventListener("click", async () => {
      const closing = button.dataset.ratingSwitch === "close";
      if (closing && !window.confirm("Close rating? Raters get no more pairs of this experiment; every verdict stays.")) return;
      try {
        await send(button.dataset.url, "POST");
        refreshNow();
      } catch (error) {
        window.alert(error.message);
      }
    });
  });
}

/** Draws the embedded dashboard and goes live; `polling()` is called once the stream gives up. */
export function startDashboard({ polling }) {
  if (!root) return;
  onPolling = polling;
  const embedded = document.getElementById("dashboard-data");
  if (embedded) render(JSON.parse(embedded.textContent));
  etag = state ? `"${state.version}"` : null;
  bindControls();
  bindDecisionForm(refreshNow);
  bindRecallBaseForm(refreshNow);
  bindModelAssistedForm(refreshNow);
  bindBatchForm(refreshNow);
  document.addEventListener("experiment:prepared", refreshNow);
  slices.loadAttributes();
  openStream();
}
