// The derived panels of the experiment page: ΔRecall and IQ with their readings and meaning,
// the Recall_Base curve, the Variant 2 heat map (chartjs-chart-matrix), IQ's geometric picture,
// the absolute quality of one clustering and the calibration against a ground-truth clustering.
// Every number is in the dashboard JSON (derived, absolute, calibration); this module draws it.

import { el } from "./cards.js";
import { COLOURS, READING_TEXT, chartMaker, fmt, interval, isNumber, percent, zeroGrid } from "./numbers.js";

const NAMES = { DeltaRecall: "ΔRecall", IQ: "IQ", DeltaPrecision: "ΔPrecision" };
const CLIP_TEXT = {
  GoodStableWeight: "GoodStableWeight was clipped to its range (eq 56): the estimates and the parameters do not fit one diagram exactly",
  MissingWeight: "MissingWeight was clipped at 0 (eq 60): Recall_Base is too high for these estimates",
  IQ: "IQ was clipped to [−1, 1]",
};

let chart = null;
let heatMetric = "DeltaRecall";
let last = null;

export function renderDerivedPanels(root, data) {
  if (!chart) {
    chart = chartMaker(root);
    const select = root.querySelector("[data-heat-metric]");
    if (select) {
      select.addEventListener("change", () => {
        heatMetric = select.value;
        if (last && last.derived) renderHeatMap(last.derived.heat_map);
      });
    }
  }
  last = data;
  renderAbsolute(root, data.absolute);
  renderDerived(root, data.derived);
  renderCalibration(root, data.calibration, data.derived);
}

// ---- absolute quality -------------------------------------------------------------------

function renderAbsolute(root, absolute) {
  const card = root.querySelector("[data-absolute]");
  if (!card) return;
  card.querySelector("[data-absolute-empty]").hidden = Boolean(absolute);
  card.querySelector("[data-absolute-values]").hidden = !absolute;
  if (!absolute) return;
  for (const name of ["Precision", "RecallAboveMinimum"]) {
    const estimate = absolute[name];
    card.querySelector(`[data-absolute-value="${name}"]`).textContent = estimate ? percent(estimate.value) : "—";
    card.querySelector(`[data-absolute-interval="${name}"]`).textContent = estimate
      ? `[${percent(estimate.ci_low)}, ${percent(estimate.ci_high)}]`
      : name === "RecallAboveMinimum"
        ? "follows with ΔRecall"
        : "";
  }
}

// ---- ΔRecall and IQ ---------------------------------------------------------------------

function renderDerived(root, derived) {
  const card = root.querySelector("[data-derived]");
  card.querySelector("[data-derived-empty]").hidden = Boolean(derived);
  card.querySelector("[data-derived-block]").hidden = !derived;
  if (!derived) return;
  const when = new Date(derived.created_at).toLocaleTimeString();
  card.querySelector("[data-derived-line]").textContent =
    `From ${derived.judgements} verdicts · ${derived.bootstrap.n_boot} bootstrap replicates · updated ${when}`;
  const rows = ["DeltaRecall", "IQ"].map((name) => {
    const e = derived.estimates[name];
    const row = el("tr", { attrs: { "data-derived-estimate": name } });
    const reading = el("td");
    reading.append(el("span", { text: READING_TEXT[e.reading], className: `reading reading--${e.reading}` }));
    row.append(
      el("th", { text: NAMES[name], attrs: { scope: "row", title: "Higher is better" } }),
      el("td", { text: fmt(e.value), className: "num", attrs: { "data-cell": "value" } }),
      el("td", { text: interval(e), className: "num", attrs: { "data-cell": "interval" } }),
      el("td", { text: e.assumption, className: "small", attrs: { "data-cell": "assumption" } }),
      reading,
    );
    return row;
  });
  card.querySelector("[data-derived-rows]").replaceChildren(...rows);
  card.querySelector("[data-derived-meanings]").replaceChildren(
    ...["DeltaRecall", "IQ"].flatMap((name) => [
      el("dt", { text: NAMES[name] }),
      el("dd", { text: derived.meanings[name], attrs: { "data-derived-meaning": name } }),
    ]),
  );
  card.querySelector("[data-derived-notes]").replaceChildren(...derivedNotes(derived).map((text) => el("li", { text })));
  renderCurve(derived);
  renderHeatMap(derived.heat_map);
  renderTriangle(root, derived.jaccard_distance_to_ideal);
}

function derivedNotes(derived) {
  const notes = [];
  if (derived.variant === null) {
    notes.push("The diagram is undefined: no judged affected items yet, or SplitRate equals MergeRate (Variant 1 needs them to differ).");
    return notes;
  }
  const rule =
    derived.recall_base_rule === "default"
      ? derived.checks.RecallPositive
        ? " (the default for a recall-positive change: GoodMergeWeight > BadSplitWeight)"
        : " (the default for a change that is not recall-positive)"
      : derived.recall_base_rule === "range"
        ? " (the nearest end of the range to the 60%/80% default)"
        : derived.recall_base_source === "ground_truth"
          ? " (the ground truth's)"
          : " (given)";
  notes.push(
    derived.variant === 1
      ? `Variant 1: GoodStableWeight from ΔPrecision (eq 51), Recall_Base(AffectedItems) = ${percent(derived.recall_base)}${rule}.`
      : `Variant 2: Precision_Base = ${percent(derived.precision_base)}, Recall_Base = ${percent(derived.recall_base)}${rule}.`,
  );
  const e = derived.estimates.DeltaRecall;
  if (isNumber(e.recall_base_low) && e.recall_base_low < e.recall_base_high) {
    notes.push(`The value is at that Recall_Base; the intervals span every Recall_Base from ${percent(e.recall_base_low)} to ${percent(e.recall_base_high)}.`);
  }
  for (const [name, side] of Object.entries(derived.clips)) {
    if (side) notes.push(`${CLIP_TEXT[name]} (to its ${side}).`);
  }
  const p = derived.plausibility;
  if (isNumber(p.JaccardDistanceDiagram)) {
    notes.push(`Plausibility (eq 67): the diagram implies JaccardDistance ${fmt(p.JaccardDistanceDiagram)}; the exact value is ${fmt(p.JaccardDistance)}.`);
  }
  const undefinedReplicates = derived.bootstrap.undefined_replicates.DeltaRecall;
  if (undefinedReplicates) notes.push(`${undefinedReplicates} bootstrap replicates had no value (a class without judged draws) and were left out.`);
  return notes;
}

function renderCurve(derived) {
  const curve = derived.curve;
  const points = (name) => curve.recall_base.map((x, k) => ({ x, y: curve[name][k] }));
  const dashedWhereInvalid = {
    borderDash: (ctx) => (curve.valid[ctx.p0DataIndex] && curve.valid[ctx.p1DataIndex] ? undefined : [4, 4]),
  };
  chart("recall-curve", {
    type: "line",
    data: {
      datasets: [
        { label: "ΔRecall", data: points("DeltaRecall"), borderColor: COLOURS.line, backgroundColor: COLOURS.line, pointRadius: 0, segment: dashedWhereInvalid },
        { label: "IQ", data: points("IQ"), borderColor: COLOURS.neutralDark, backgroundColor: COLOURS.neutralDark, pointRadius: 0, borderWidth: 1.5, segment: dashedWhereInvalid },
        {
          type: "scatter",
          label: "Used",
          data: [
            { x: derived.recall_base, y: derived.estimates.DeltaRecall.value },
            { x: derived.recall_base, y: derived.estimates.IQ.value },
          ],
          backgroundColor: "#1d2330",
          pointRadius: 5,
          pointStyle: "rectRot",
        },
      ],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      parsing: false,
      plugins: {
        tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label} at Recall_Base ${percent(ctx.parsed.x)}: ${fmt(ctx.parsed.y)}` } },
      },
      scales: {
        x: { type: "linear", min: 0, max: 1, title: { display: true, text: "Recall_Base(AffectedItems)" } },
        y: { grid: zeroGrid },
      },
    },
  });
}

function heatColour(value, valid, scale) {
  if (!valid || !isNumber(value)) return "rgba(195, 200, 208, 0.45)";
  const share = Math.min(Math.abs(value) / scale, 1);
  const [r, g, b] = value >= 0 ? [27, 122, 61] : [176, 0, 32];
  return `rgba(${r}, ${g}, ${b}, ${0.08 + 0.85 * share})`;
}

function renderHeatMap(heat) {
  const values = heat[heatMetric];
  const xs = heat.recall_base.map((v) => v.toFixed(2));
  const ys = heat.precision_base.map((v) => v.toFixed(2));
  const cells = [];
  let scale = 0;
  heat.precision_base.forEach((_, k) =>
    heat.recall_base.forEach((__, m) => {
      const v = values[k][m];
      if (heat.valid[k][m] && isNumber(v)) scale = Math.max(scale, Math.abs(v));
      cells.push({ x: xs[m], y: ys[k], v, valid: heat.valid[k][m] });
    }),
  );
  scale = scale || 1;
  chart("heat-map", {
    type: "matrix",
    data: {
      datasets: [
        {
          label: NAMES[heatMetric],
          data: cells,
          backgroundColor: (ctx) => {
            const cell = ctx.dataset.data[ctx.dataIndex];
            return cell ? heatColour(cell.v, cell.valid, scale) : "transparent";
          },
          borderWidth: 0,
          width: ({ chart: c }) => (c.chartArea || {}).width / xs.length - 1,
          height: ({ chart: c }) => (c.chartArea || {}).height / ys.length - 1,
        },
      ],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      plugins: {
        legend: { display: false },
        tooltip: {
          callbacks: {
            title: () => "",
            label: (ctx) => {
              const cell = ctx.dataset.data[ctx.dataIndex];
              const shown = `${NAMES[heatMetric]} ${fmt(cell.v)} at Precision_Base ${cell.y}, Recall_Base ${cell.x}`;
              return cell.valid ? shown : `${shown} (ruled out by the estimates)`;
            },
          },
        },
      },
      scales: {
        x: { type: "category", labels: xs, offset: true, grid: { display: false }, title: { display: true, text: "Recall_Base(AffectedItems)" }, ticks: { autoSkip: true, maxTicksLimit: 10 } },
        y: { type: "category", labels: ys, offset: true, grid: { display: false }, title: { display: true, text: "Precision_Base(AffectedItems)" }, ticks: { autoSkip: true, maxTicksLimit: 10 } },
      },
    },
  });
}

// Base at the origin, Exp on the x axis, Ideal where its two distances put it (clamped onto the
// line when the clipped distances break the triangle inequality).
function trianglePoints(d) {
  const x = (d.base ** 2 - d.exp ** 2 + d.change ** 2) / (2 * d.change);
  return { base: { x: 0, y: 0 }, exp: { x: d.change, y: 0 }, ideal: { x, y: Math.sqrt(Math.max(d.base ** 2 - x ** 2, 0)) } };
}

const pointLabels = {
  id: "pointLabels",
  afterDatasetsDraw(c) {
    const { ctx } = c;
    ctx.save();
    ctx.font = "600 12px system-ui, sans-serif";
    ctx.fillStyle = "#1d2330";
    c.data.datasets.forEach((dataset, k) => {
      if (!dataset.pointLabel) return;
      const point = c.getDatasetMeta(k).data[0];
      if (point) ctx.fillText(dataset.pointLabel, point.x + 7, point.y - 7);
    });
    ctx.restore();
  },
};

// The same scale on both axes: widen the range that has room to spare, around its centre.
function fittedView(xRange, yRange, width, height) {
  const perUnit = Math.min(width / (xRange[1] - xRange[0]), height / (yRange[1] - yRange[0]));
  const widen = ([low, high], pixels) => {
    const half = pixels / perUnit / 2;
    const centre = (low + high) / 2;
    return [centre - half, centre + half];
  };
  return { x: widen(xRange, width), y: widen(yRange, height) };
}

function renderTriangle(root, d) {
  const figure = root.querySelector(".iq-figure");
  const usable = d && [d.base, d.exp, d.change].every(isNumber) && d.change > 0;
  figure.hidden = !usable;
  if (!usable) return;
  const p = trianglePoints(d);
  const box = root.querySelector('[data-chart="iq-triangle"]').parentElement;
  const narrow = box.clientWidth < 600;
  const view = fittedView(
    [Math.min(0, p.ideal.x) - 0.1 * d.change, Math.max(d.change, p.ideal.x) + 0.1 * d.change],
    [-0.12 * d.change, p.ideal.y + 0.12 * d.change],
    narrow ? box.clientWidth : box.clientWidth * 0.72, // the legend takes the rest, or the bottom
    narrow ? box.clientHeight * 0.6 : box.clientHeight,
  );
  const edge = (a, b, label, colour) => ({ type: "line", label, data: [a, b], borderColor: colour, pointRadius: 0, borderWidth: 2 });
  const point = (at, name, colour) => ({ type: "scatter", label: name, pointLabel: name, data: [at], backgroundColor: colour, pointRadius: 6 });
  chart("iq-triangle", {
    type: "scatter",
    data: {
      datasets: [
        edge(p.base, p.exp, `d(Base, Exp) = ${fmt(d.change, 3)}`, COLOURS.neutralDark),
        edge(p.base, p.ideal, `d(Base, Ideal) = ${fmt(d.base, 3)}`, COLOURS.inconclusive),
        edge(p.exp, p.ideal, `d(Exp, Ideal) = ${fmt(d.exp, 3)}`, d.exp <= d.base ? COLOURS.good : COLOURS.bad),
        point(p.base, "Base", "#1d2330"),
        point(p.exp, "Exp", COLOURS.line),
        point(p.ideal, "Ideal", COLOURS.good),
      ],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      parsing: false,
      plugins: {
        legend: { position: narrow ? "bottom" : "right", labels: { filter: (item) => item.text.startsWith("d(") } },
        tooltip: { enabled: false },
      },
      scales: {
        x: { type: "linear", min: view.x[0], max: view.x[1], display: false },
        y: { type: "linear", min: view.y[0], max: view.y[1], display: false },
      },
    },
    plugins: [pointLabels],
  });
}

// ---- calibration against a ground-truth clustering --------------------------------------

function renderCalibration(root, calibration, derived) {
  const card = root.querySelector("[data-calibration]");
  if (!card || !calibration) return;
  const rows = [...calibration.quality, ...calibration.derived].map((row) => {
    const tr = el("tr", { attrs: { "data-calibration-metric": row.metric } });
    const held = el("td");
    if (row.covered === null) held.textContent = "—";
    else held.append(el("span", { text: row.covered ? "Yes" : "No", className: `reading reading--${row.covered ? "good" : "bad"}` }));
    const name = el("th", { text: NAMES[row.metric] || row.metric, attrs: { scope: "row" } });
    if (row.assumption) name.append(el("span", { text: ` ${row.assumption}`, className: "small muted", attrs: { "data-assumption": "" } }));
    tr.append(
      name,
      el("td", { text: fmt(row.value), className: "num" }),
      el("td", { text: interval(row), className: "num" }),
      el("td", { text: fmt(row.exact), className: "num", attrs: { "data-cell": "exact" } }),
      el("td", { text: isNumber(row.error) ? (row.error >= 0 ? "+" : "") + fmt(row.error) : "—", className: "num" }),
      held,
    );
    return tr;
  });
  card.querySelector("[data-calibration-rows]").replaceChildren(...rows);
  card.querySelector("[data-calibration-parameters]").replaceChildren(
    ...calibrationNotes(calibration, derived).map((text) => el("li", { text })),
  );
}

function calibrationNotes(calibration, derived) {
  const truth = calibration.truth;
  const notes = [
    `True Recall_Base(AffectedItems) = ${percent(truth.RecallBase)}, Precision_Base(AffectedItems) = ${percent(truth.PrecisionBase)}; true ΔRecall = ${fmt(truth.DeltaRecall)}, IQ = ${fmt(truth.IQ)}.`,
  ];
  const c = calibration.calibration;
  if (!c || !derived) {
    notes.push("Which parameters match appears with the derived metrics.");
    return notes;
  }
  notes.push(`The page uses Recall_Base = ${percent(c.diagram.recall_base)} (Variant ${c.diagram.variant ?? "—"}).`);
  notes.push(
    c.matching_recall_base.length
      ? `Variant 1 gives the true ΔRecall at Recall_Base = ${c.matching_recall_base.map(percent).join(" or ")}.`
      : "No Recall_Base gives the true ΔRecall with these estimates (Variant 1).",
  );
  const v1 = c.at_true_parameters.variant_1;
  const v2 = c.at_true_parameters.variant_2;
  if (v1) notes.push(`At the true Recall_Base, Variant 1 gives ΔRecall ${fmt(v1.DeltaRecall)} and IQ ${fmt(v1.IQ)}.`);
  if (v2) notes.push(`At both true parameters, Variant 2 gives ΔRecall ${fmt(v2.DeltaRecall)} and IQ ${fmt(v2.IQ)}.`);
  return notes;
}
