// What the dashboard's modules share: colours of readings, number formats and a Chart.js
// helper that updates a chart in place instead of building a new one on every poll.

export const COLOURS = {
  good: "#1b7a3d",
  bad: "#b00020",
  inconclusive: "#7d8594",
  no_data: "#c3c8d0",
  neutral: "#9db4d8",
  neutralDark: "#5f7fae",
  band: "rgba(31, 95, 191, 0.16)",
  line: "#1f5fbf",
};
export const READING_TEXT = { good: "Good", bad: "Bad", inconclusive: "Inconclusive", no_data: "No data" };

export function isNumber(value) {
  return typeof value === "number" && Number.isFinite(value);
}

export function fmt(value, digits = 4) {
  return isNumber(value) ? value.toFixed(digits) : "—";
}

const WHOLE = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const MONEY = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** A count, rounded up to a whole number, with the reader's thousands separator ("—" when missing). */
export function count(value) {
  return isNumber(value) ? WHOLE.format(Math.ceil(value)) : "—";
}

/** Money, to the cent, with the reader's thousands separator. */
export function money(value) {
  return isNumber(value) ? MONEY.format(value) : "—";
}

export function percent(value) {
  return isNumber(value) ? `${(100 * value).toFixed(1)} %` : "—";
}

export function interval(estimate) {
  if (!estimate || estimate.ci_low === null || estimate.ci_high === null) return "—";
  return `[${fmt(estimate.ci_low)}, ${fmt(estimate.ci_high)}]`;
}

export function sequence(estimate) {
  if (!estimate || estimate.cs_low === null || estimate.cs_low === undefined || estimate.cs_high === null) return "—";
  return `[${fmt(estimate.cs_low)}, ${fmt(estimate.cs_high)}]`;
}

export const zeroGrid = { color: (ctx) => (ctx.tick && ctx.tick.value === 0 ? "#1d2330" : "#e3e6ea") };

/** chart(name, config) for the canvases [data-chart=name] inside scope: created once, then updated. */
export function chartMaker(scope) {
  const charts = {};
  return function chart(name, config) {
    const canvas = scope.querySelector(`[data-chart="${name}"]`);
    if (!canvas || typeof Chart === "undefined") return null;
    if (charts[name]) {
      charts[name].data = config.data;
      charts[name].options = config.options;
      charts[name].update("none");
    } else {
      charts[name] = new Chart(canvas, config);
    }
    return charts[name];
  };
}
