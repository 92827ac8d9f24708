// The dashboard's estimates and their charts: the estimates table and intervals, the stale
// line, the decompositions and the expected situation of an affected item. Chart.js through
// numbers.js's chartMaker; text from the server goes in with textContent only.

import { el } from "./cards.js";
import { setText } from "./dashboard_progress.js";
import { glossaryTerm } from "./glossary_tips.js";
import { COLOURS, READING_TEXT, count, fmt, interval, sequence, zeroGrid } from "./numbers.js";

// The estimates lag the verdicts (a refresh was lost): say since when, until the reconciler catches up.
export function renderStale(root, stale) {
  root.querySelectorAll("[data-stale-line]").forEach((node) => {
    node.hidden = !stale;
    node.textContent = stale ? `${stale.label}: ${stale.estimated_verdicts} of ${stale.verdicts} verdicts counted.` : "";
    node.title = stale ? stale.help : "";
  });
}

function metricHeader(name, e) {
  const th = el("th", { attrs: { scope: "row" } });
  const direction = e.direction === "higher_is_better" ? "Higher is better." : "Lower is better.";
  th.append(glossaryTerm(e.label || name, `${e.help || name} ${direction}`, `estimates:${name}`));
  return th;
}

export function renderEstimates(root, chart, estimates, snapshot) {
  const has = estimates && Object.keys(estimates).length > 0;
  root.querySelector("[data-no-estimates]").hidden = has;
  root.querySelector("[data-estimates-block]").hidden = !has;
  setText(
    root,
    "[data-snapshot-line]",
    snapshot
      ? `${count(snapshot.judgements)} verdicts on ${count(snapshot.judged_pairs)} pairs · updated ${new Date(snapshot.created_at).toLocaleTimeString()}`
      : "No verdicts yet.",
  );
  // Draw order (spec §14): verdicts on pairs beyond the labelled prefix wait for earlier pairs.
  const waiting = snapshot?.labelled?.waiting_verdicts ?? 0;
  root.querySelectorAll("[data-waiting-line]").forEach((node) => {
    node.hidden = waiting === 0;
    node.textContent = `${count(waiting)} ${waiting === 1 ? "verdict waits" : "verdicts wait"} for earlier pairs to be judged.`;
  });
  if (!has) return;
  const rows = Object.entries(estimates).map(([name, e]) => {
    const row = el("tr", { attrs: { "data-estimate": name } });
    row.append(
      metricHeader(name, e),
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

export function renderDecomposition(root, chart, estimates, scheme) {
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

export function renderSituation(root, chart, situation) {
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
