// The engineer's dashboard of one experiment: estimates with intervals, decompositions, the
// expected situation of an affected item, convergence, progress to the precision target,
// rater agreement and slices. Every number comes from the API (GET .../dashboard/, which the
// page also embeds as #dashboard-data); this module only draws it. Live: the page listens to
// the server-sent events of .../events/ (the dashboard and the convergence points it lacks, as
// the experiment changes), so an idle page sends nothing. When the stream cannot open (204: no
// Redis or no ASGI server, as in the embedded demo) or keeps failing, it polls dashboard/ every
// second with If-None-Match instead, where an unchanged experiment costs an empty 304.
// Charts are Chart.js (vendored, global `Chart`). Text from the server goes in with
// textContent only.

import { el } from "./cards.js";
import { csrfToken } from "./http.js";
import { renderDerivedPanels } from "./derived_panels.js";
import { renderRaterAware } from "./rater_aware.js";
import { bindDecisionForm, renderDecision } from "./decision.js";
import { bindBatchForm, renderBatches } from "./batches.js";
import { COLOURS, READING_TEXT, chartMaker, fmt, interval, percent, sequence, zeroGrid } from "./numbers.js";

const POLL_MS = 1000;
// Failures of the stream in a row (no event in between) before the page falls back to polling.
const STREAM_FAILURES = 3;
const STREAM_LASTED_MS = 10_000;
// Convergence points kept on the page: past this, every other one goes (the last stays).
const MAX_POINTS = 400;

const root = document.querySelector("[data-dashboard]");
const chart = root ? chartMaker(root) : null;
let etag = null;
let state = null;
let convergence = null;
let sliceTable = null;
let live = "starting"; // "stream" while events arrive, "polling" after the fallback

function setText(selector, value, scope = root) {
  scope.querySelectorAll(selector).forEach((node) => {
    node.textContent = value;
  });
}

async function send(url, method, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const messages = Object.values(data).flat().join(" ");
    throw new Error(messages || `HTTP ${response.status}`);
  }
  return data;
}

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

// ---- header: badge, reasons, rating switch ----------------------------------------------

function renderBadge(badge) {
  const holder = document.querySelector("[data-status-badge] .badge");
  if (holder) {
    holder.className = `badge badge--${badge.key}`;
    holder.textContent = badge.label;
  }
  const reasons = document.querySelector("[data-badge-reasons]");
  if (reasons) reasons.replaceChildren(...badge.reasons.map((reason) => el("li", { text: reason })));
  document.querySelectorAll("[data-rating-switch]").forEach((button) => {
    const wanted = button.dataset.ratingSwitch === "close" ? "rating" : "done";
    button.hidden = state.experiment.status !== wanted;
  });
}

// ---- estimates --------------------------------------------------------------------------

// The estimates lag the verdicts (a refresh was lost): say since when, until the reconciler catches up.
function renderStale(stale) {
  root.querySelectorAll("[data-stale-line]").forEach((node) => {
    node.hidden = !stale;
    node.textContent = stale ? `${stale.label}: ${stale.estimated_verdicts} of ${stale.verdicts} verdicts counted.` : "";
    node.title = stale ? stale.help : "";
  });
}

function renderEstimates(estimates, snapshot) {
  const has = estimates && Object.keys(estimates).length > 0;
  root.querySelector("[data-no-estimates]").hidden = has;
  root.querySelector("[data-estimates-block]").hidden = !has;
  setText(
    "[data-snapshot-line]",
    snapshot
      ? `${snapshot.judgements} verdicts on ${snapshot.judged_pairs} pairs · updated ${new Date(snapshot.created_at).toLocaleTimeString()}`
      : "No verdicts yet.",
  );
  if (!has) return;
  const rows = Object.entries(estimates).map(([name, e]) => {
    const row = el("tr", { attrs: { "data-estimate": name } });
    row.append(
      el("th", { text: e.label || name, attrs: { scope: "row", tabindex: "0", title: `${e.help || name} ${e.direction === "higher_is_better" ? "Higher is better." : "Lower is better."}` } }),
      el("td", { text: fmt(e.value), className: "num", attrs: { "data-cell": "value" } }),
      el("td", { text: interval(e), className: "num", attrs: { "data-cell": "interval" } }),
      el("td", { text: sequence(e), className: "num", attrs: { "data-cell": "sequence" } }),
      el("td", { text: `${e.judged_draws} / ${e.drawn_draws}`, className: "num muted" }),
    );
    const reading = el("td");
    reading.append(el("span", { text: READING_TEXT[e.reading], className: `reading reading--${e.reading}` }));
    row.append(reading);
    return row;
  });
  root.querySelector("[data-estimates-rows]").replaceChildren(...rows);
  const names = Object.keys(estimates);
  const colour = names.map((name) => COLOURS[estimates[name].reading]);
  chart("intervals", {
    type: "bar",
    data: {
      labels: names,
      datasets: [
        {
          type: "bar",
          label: "Interval",
          data: names.map((name) => [estimates[name].ci_low, estimates[name].ci_high]),
          backgroundColor: colour.map((c) => `${c}55`),
          borderColor: colour,
          borderWidth: 1,
          barPercentage: 0.5,
        },
        {
          type: "scatter",
          label: "Estimate",
          data: names.map((name) => ({ x: estimates[name].value, y: name })),
          backgroundColor: colour,
          pointRadius: 4,
        },
      ],
    },
    options: {
      indexAxis: "y",
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { display: false } },
      scales: { x: { grid: zeroGrid, title: { display: true, text: "share of weight" } }, y: { type: "category" } },
    },
  });
}

// ---- decompositions and the expected situation -------------------------------------------

function renderDecomposition(estimates, scheme) {
  const block = root.querySelector("[data-decompositions]");
  block.hidden = !estimates;
  if (!estimates) return;
  const value = (name) => (estimates[name] ? estimates[name].value : null);
  const rows =
    scheme === "precision"
      ? [["SplitRate", "GoodSplitRate", "BadSplitRate"], ["MergeRate", "GoodMergeRate", "BadMergeRate"]]
      : [
          ["JaccardDistance", "GoodDistance", "BadDistance"],
          ["SplitDistance", "GoodSplitDistance", "BadSplitDistance"],
          ["MergeDistance", "GoodMergeDistance", "BadMergeDistance"],
        ];
  chart("decomposition", {
    type: "bar",
    data: {
      labels: rows.map((r) => r[0]),
      datasets: [
        { label: "Good", data: rows.map((r) => value(r[1])), backgroundColor: COLOURS.good },
        { label: "Bad", data: rows.map((r) => value(r[2])), backgroundColor: COLOURS.bad },
      ],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "share of weight" } } },
    },
  });
}

function renderSituation(situation) {
  root.querySelector("[data-situation-missing]").hidden = Boolean(situation);
  const canvas = root.querySelector('[data-chart="situation"]');
  canvas.parentElement.hidden = !situation;
  if (!situation) return;
  const { split, stable, merge, parts } = situation;
  const v = (name) => parts[name].value || 0;
  const rows = ["Base(i)", "Exp(i)", "Equivalent to i", "Not equivalent to i"];
  const at = (row, from, to) => rows.map((_, k) => (k === row ? [from, to] : null));
  const datasets = [
    { label: "Base(i)", data: at(0, 0, split + stable), backgroundColor: COLOURS.neutral },
    { label: "Exp(i)", data: at(1, split, split + stable + merge), backgroundColor: COLOURS.neutralDark },
    { label: "Split off, equivalent (BadSplit)", data: at(2, 0, v("BadSplitDistance")), backgroundColor: COLOURS.bad },
    { label: "Kept, equivalent (AffectedGoodIndex)", data: at(2, split, split + v("AffectedGoodIndex")), backgroundColor: COLOURS.good },
    { label: "Merged in, equivalent (GoodMerge)", data: at(2, split + stable, split + stable + v("GoodMergeDistance")), backgroundColor: COLOURS.good },
    { label: "Split off, not equivalent (GoodSplit)", data: at(3, v("BadSplitDistance"), split), backgroundColor: COLOURS.good },
    { label: "Kept, not equivalent (AffectedBadIndex)", data: at(3, split + v("AffectedGoodIndex"), split + stable), backgroundColor: COLOURS.bad },
    {
      label: "Merged in, not equivalent (BadMerge)",
      data: at(3, split + stable + v("GoodMergeDistance"), split + stable + merge),
      backgroundColor: COLOURS.bad,
    },
  ];
  chart("situation", {
    type: "bar",
    data: { labels: rows, datasets },
    options: {
      indexAxis: "y",
      maintainAspectRatio: false,
      animation: false,
      datasets: { bar: { grouped: false, barPercentage: 0.8, categoryPercentage: 0.9 } },
      plugins: {
        legend: { display: false },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const [from, to] = ctx.raw || [0, 0];
              return `${ctx.dataset.label}: ${fmt(to - from, 3)} of Base(i) ∪ Exp(i)`;
            },
          },
        },
      },
      scales: { x: { min: 0, max: 1, title: { display: true, text: "share of weight(Base(i) ∪ Exp(i))" } } },
    },
  });
}

// ---- progress, agreement ----------------------------------------------------------------

function renderProgress(progress) {
  const set = (name, value) => setText(`[data-progress="${name}"]`, value);
  for (const name of ["verdicts", "wanted", "remaining", "judged_pairs", "tasks", "judged_draws", "drawn_draws"]) {
    set(name, String(progress[name] ?? 0));
  }
  set("rate", progress.rate_per_hour === null ? "—" : `${Math.round(progress.rate_per_hour)} verdicts per hour`);
  set(
    "budget",
    progress.budget_max_verdicts === null
      ? "No limit"
      : `${progress.budget_left} of ${progress.budget_max_verdicts} verdicts left`,
  );
  setText("[data-budget='spent']", String(progress.budget_spent));
  setText("[data-budget='spent-cost']", fmt(progress.budget_spent_cost, 2));
  if (progress.budget_left !== null) setText("[data-budget='left']", String(progress.budget_left));
  set("half_width", fmt(progress.half_width));
  set("target", fmt(progress.target_half_width));
  let more = "—";
  if (progress.more_judgements === 0) more = "Reached.";
  else if (progress.more_judgements !== null) {
    more = `About ${Math.ceil(progress.more_judgements)} more verdicts`;
    if (progress.hours_to_target !== null) more += `, ~${fmt(progress.hours_to_target, 1)} h at the current rate`;
    more += progress.sample_suffices ? "." : "; the sample has fewer left: draw more pairs.";
    if (progress.budget_left !== null && progress.more_judgements > progress.budget_left) more += " The budget runs out first.";
  }
  set("more", more);
  // The judging line of the impact card (filled in by the page, kept current here).
  setText("[data-judging-verdicts]", String(progress.verdicts), document);
  setText("[data-judging-wanted]", String(progress.wanted), document);
  setText("[data-judging-tasks]", String(progress.tasks), document);
  const judging = document.querySelector("[data-judging-progress]");
  if (judging) {
    judging.max = progress.wanted || 1;
    judging.value = progress.verdicts;
  }
  const bar = root.querySelector("[data-precision-bar]");
  bar.value = progress.half_width ? Math.min(progress.target_half_width / progress.half_width, 1) : 0;
}

function renderAgreement(agreement) {
  const has = agreement && agreement.replicated_pairs > 0;
  root.querySelector("[data-agreement-empty]").hidden = has;
  root.querySelector("[data-agreement]").hidden = !has;
  if (!has) return;
  root.querySelectorAll("[data-agreement-value]").forEach((node) => {
    const value = agreement[node.dataset.agreementValue];
    if (node.dataset.format === "percent") node.textContent = percent(value);
    else if (node.dataset.format === "fixed") node.textContent = fmt(value, 3);
    else node.textContent = value === null || value === undefined ? "—" : String(value);
  });
}

// ---- convergence ------------------------------------------------------------------------

function renderConvergence() {
  const select = root.querySelector("[data-convergence-metric]");
  if (!convergence) return;
  if (!select.options.length) {
    for (const name of convergence.metrics) select.append(el("option", { text: name, attrs: { value: name } }));
    select.value = convergence.metrics.includes("DeltaPrecision") ? "DeltaPrecision" : convergence.metrics[0];
  }
  const metric = select.value;
  const points = convergence.points.filter((p) => p.estimates[metric]);
  const series = (key) => points.map((p) => ({ x: p.judgements, y: p.estimates[metric][key] }));
  chart("convergence", {
    type: "line",
    data: {
      datasets: [
        { label: "Sequence high", data: series("cs_high"), borderColor: COLOURS.neutralDark, borderDash: [4, 3], borderWidth: 1, pointRadius: 0, fill: false },
        { label: "Sequence low", data: series("cs_low"), borderColor: COLOURS.neutralDark, borderDash: [4, 3], borderWidth: 1, pointRadius: 0, fill: false },
        { label: "Interval high", data: series("ci_high"), borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: COLOURS.band },
        { label: "Interval low", data: series("ci_low"), borderWidth: 0, pointRadius: 0, fill: false },
        { label: metric, data: series("value"), borderColor: COLOURS.line, backgroundColor: COLOURS.line, pointRadius: 2 },
      ],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      parsing: false,
      plugins: { legend: { display: true, labels: { filter: (item) => !item.text.endsWith("low") } } },
      scales: { x: { type: "linear", title: { display: true, text: "verdicts" } }, y: { grid: zeroGrid } },
    },
  });
}

async function loadConvergence() {
  try {
    convergence = await getJSON(root.dataset.convergenceUrl);
    renderConvergence();
  } catch (error) {
    // The next snapshot tries again.
  }
}

// ---- slices -----------------------------------------------------------------------------

function sliceColumns(scheme) {
  const bad = scheme === "precision" ? ["BadSplitRate", "BadMergeRate"] : ["BadSplitDistance", "BadMergeDistance"];
  return [
    { key: "label", title: "Value", get: (r) => r.label, text: (r) => r.label || "(empty)" },
    { key: "items", title: "Items", num: true, get: (r) => r.items, text: (r) => String(r.items) },
    { key: "weight_fraction", title: "Weight", num: true, get: (r) => r.weight_fraction, text: (r) => percent(r.weight_fraction) },
    { key: "jd", title: "JaccardDistance", num: true, get: (r) => r.impact.JaccardDistance, text: (r) => fmt(r.impact.JaccardDistance) },
    ...["DeltaPrecision", ...bad].map((name) => ({
      key: name,
      title: name,
      num: true,
      get: (r) => (r.metric && r.metric[name] ? r.metric[name].value : null),
      text: (r) => (r.metric && r.metric[name] ? `${fmt(r.metric[name].value)} ${interval(r.metric[name])}` : "—"),
      reading: (r) => (r.metric && r.metric[name] ? r.metric[name].reading : "no_data"),
    })),
    {
      key: "contribution",
      title: "ΔPrecision contribution",
      num: true,
      get: (r) => (r.contribution ? r.contribution.DeltaPrecision.value : null),
      text: (r) => (r.contribution ? `${fmt(r.contribution.DeltaPrecision.value)} ${interval(r.contribution.DeltaPrecision)}` : "—"),
    },
  ];
}

function renderSlices() {
  if (!sliceTable) return;
  const { body, columns, sortKey, descending } = sliceTable;
  const head = el("tr");
  for (const column of columns) {
    const th = el("th", { attrs: { scope: "col" }, className: column.num ? "num" : "" });
    if (column.key === sortKey) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const button = el("button", { text: column.title, className: "sort-button", attrs: { type: "button" } });
    button.addEventListener("click", () => {
      sliceTable.descending = sliceTable.sortKey === column.key ? !sliceTable.descending : column.num;
      sliceTable.sortKey = column.key;
      renderSlices();
    });
    th.append(button);
    head.append(th);
  }
  root.querySelector("[data-slices-head]").replaceChildren(head);
  const column = columns.find((c) => c.key === sortKey);
  const rows = [...body.rows].sort((a, b) => {
    const x = column.get(a);
    const y = column.get(b);
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return descending ? -order : order;
  });
  root.querySelector("[data-slices-rows]").replaceChildren(
    ...rows.map((row) => {
      const tr = el("tr", { attrs: { "data-slice": row.label } });
      columns.forEach((c, k) => {
        const cell = el(k === 0 ? "th" : "td", { className: c.num ? "num" : "", attrs: k === 0 ? { scope: "row" } : {} });
        const text = el("span", { text: c.text(row) });
        if (c.reading) text.className = `reading reading--${c.reading(row)}`;
        cell.append(text);
        tr.append(cell);
      });
      return tr;
    }),
  );
}

async function loadSlices(attribute) {
  const status = root.querySelector("[data-slices-status]");
  root.querySelector("[data-slices-empty]").hidden = Boolean(attribute);
  root.querySelector("[data-slices-block]").hidden = !attribute;
  root.querySelector("[data-slices-downloads]").hidden = !attribute;
  if (!attribute) {
    sliceTable = null;
    return;
  }
  const url = `${root.dataset.slicesUrl}?attribute=${encodeURIComponent(attribute)}`;
  root.querySelector("[data-slices-csv]").href = `${url}&format=csv`;
  root.querySelector("[data-slices-json]").href = url;
  status.textContent = "Computing the slices' estimates…";
  try {
    const body = await getJSON(url);
    const previous = sliceTable && sliceTable.attribute === attribute ? sliceTable : null;
    sliceTable = {
      attribute,
      body,
      columns: sliceColumns(body.scheme),
      sortKey: previous ? previous.sortKey : "weight_fraction",
      descending: previous ? previous.descending : true,
    };
    renderSlices();
    status.textContent = body.note
      ? `${body.values} values. ${body.note}`
      : body.values > body.estimated_values
        ? `${body.values} values; quality estimates for the ${body.estimated_values} heaviest.`
        : `${body.values} values.`;
  } catch (error) {
    status.textContent = `Could not load the slices (${error.message}).`;
  }
}

async function loadSliceAttributes() {
  const select = root.querySelector("[data-slice-attribute]");
  try {
    const { attributes } = await getJSON(root.dataset.slicesUrl);
    for (const name of attributes) select.append(el("option", { text: name, attrs: { value: name } }));
    if (!attributes.length) root.querySelector("[data-slices-empty]").textContent = "The catalogue has no attribute to slice by.";
  } catch (error) {
    root.querySelector("[data-slices-empty]").textContent = "Could not load the attributes.";
  }
  select.addEventListener("change", () => loadSlices(select.value));
}

// ---- the whole page ---------------------------------------------------------------------

function render(data) {
  const previous = state;
  state = data;
  const ready = ["rating", "done"].includes(data.experiment.status);
  root.hidden = !ready;
  renderBadge(data.badge);
  renderDecision(data.decision);
  if (!ready) return;
  renderBatches(data.batches);
  renderEstimates(data.estimates, data.snapshot);
  renderStale(data.stale);
  renderDecomposition(data.estimates, data.experiment.scheme);
  renderSituation(data.situation);
  renderProgress(data.progress);
  renderAgreement(data.agreement);
  renderDerivedPanels(root, data);
  renderRaterAware(root, data);
  const snapshotChanged = !previous || (previous.snapshot || {}).id !== (data.snapshot || {}).id;
  if (snapshotChanged) {
    if (live === "polling") loadConvergence(); // the stream's events carry the new points
    if (sliceTable) loadSlices(sliceTable.attribute);
    if (previous && data.snapshot) {
      setText("[data-dashboard-announce]", `Estimates updated: ${data.snapshot.judgements} verdicts.`);
    }
  }
}

async function fetchDashboard() {
  try {
    const headers = { Accept: "application/json" };
    if (etag) headers["If-None-Match"] = etag;
    const response = await fetch(root.dataset.dashboardUrl, { credentials: "same-origin", cache: "no-store", headers });
    if (response.status === 200) {
      etag = response.headers.get("ETag");
      render(await response.json());
    }
  } catch (error) {
    // A network hiccup or a restarting server: the next tick (or event) tries again.
  }
}

async function poll() {
  await fetchDashboard();
  window.setTimeout(poll, document.hidden ? 5 * POLL_MS : POLL_MS);
}

function startPolling() {
  if (live === "polling") return;
  live = "polling";
  root.dataset.live = live;
  loadConvergence();
  window.setTimeout(poll, POLL_MS);
}

function thinned(points) {
  if (points.length <= MAX_POINTS) return points;
  return points.filter((_, k) => k % 2 === 0 || k === points.length - 1);
}

function applyEvent(payload) {
  const fresh = payload.convergence;
  if (fresh.reset || !convergence) convergence = { metrics: fresh.metrics, points: fresh.points };
  else if (fresh.points.length) convergence = { ...convergence, points: thinned(convergence.points.concat(fresh.points)) };
  etag = `"${payload.dashboard.version}"`;
  render(payload.dashboard);
  renderConvergence();
}

// The browser reconnects by itself (with Last-Event-ID) after a dropped stream; an answer other
// than 200 closes the stream for good, and repeated drops without an event mean a proxy or
// server that cannot stream: either way, poll.
function openStream() {
  if (!root.dataset.eventsUrl || !("EventSource" in window)) {
    startPolling();
    return;
  }
  const stream = new EventSource(root.dataset.eventsUrl);
  let failures = 0;
  let openedAt = 0;
  stream.addEventListener("open", () => {
    openedAt = Date.now();
    live = "stream";
    root.dataset.live = live;
  });
  stream.addEventListener("dashboard", (event) => {
    failures = 0;
    applyEvent(JSON.parse(event.data));
  });
  stream.addEventListener("error", () => {
    // A stream that lasted (one that reached its lifetime) starts a new count.
    failures = openedAt && Date.now() - openedAt > STREAM_LASTED_MS ? 1 : failures + 1;
    openedAt = 0;
    if (stream.readyState === EventSource.CLOSED || failures >= STREAM_FAILURES) {
      stream.close();
      startPolling();
    }
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

function start() {
  if (!root) return;
  const embedded = document.getElementById("dashboard-data");
  if (embedded) render(JSON.parse(embedded.textContent));
  etag = state ? `"${state.version}"` : null;
  bindControls();
  bindDecisionForm(refreshNow);
  bindBatchForm(refreshNow);
  document.addEventListener("experiment:prepared", refreshNow);
  loadSliceAttributes();
  openStream();
}

start();
