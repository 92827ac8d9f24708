// The dashboard's convergence chart: an estimate, its interval and its confidence sequence as
// verdicts come in. The points come whole from GET .../convergence/ (when polling) or a few at
// a time with the stream's events.

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { COLOURS, zeroGrid } from "./numbers.js";

// Convergence points kept on the page: past this, every other one goes (the last stays).
const MAX_POINTS = 400;

function thinned(points) {
  if (points.length <= MAX_POINTS) return points;
  return points.filter((_, k) => k % 2 === 0 || k === points.length - 1);
}

/** The chart of `root`: {load, apply(fresh), render}. */
export function convergenceChart(root, chart) {
  let convergence = null;

  function render() {
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

  async function load() {
    const { status, data } = await requestJson("GET", root.dataset.convergenceUrl);
    // On a failure the next snapshot tries again.
    if (status !== 200 || !data) return;
    convergence = data;
    render();
  }

  /** The points a stream event brings (all of them again after a reset). */
  function apply(fresh) {
    if (fresh.reset || !convergence) convergence = { metrics: fresh.metrics, points: fresh.points };
    else if (fresh.points.length) convergence = { ...convergence, points: thinned(convergence.points.concat(fresh.points)) };
  }

  return { load, apply, render };
}
