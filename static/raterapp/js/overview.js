// The admins' overview: spend and throughput charts (Chart.js, vendored, global `Chart`) from
// the data the page embeds (#overview-data, the overview API's JSON).

const PALETTE = ["#1f5fbf", "#2f8f6a", "#b8612e", "#7a4fb0", "#b33b5c", "#4d7a8c", "#8a8f1f", "#c08a00", "#5f6b7a", "#1b7a3d", "#9c3d9c", "#3d6f9c"];

// One colour per label on every chart, so an experiment looks the same in each.
const colours = new Map();
function colourOf(label) {
  if (!colours.has(label)) colours.set(label, PALETTE[colours.size % PALETTE.length]);
  return colours.get(label);
}

function stacked(canvas, days, series, unit) {
  return new Chart(canvas, {
    type: "bar",
    data: {
      labels: days.map((day) => day.slice(5)),
      datasets: series.map((s) => ({ label: s.label, data: s.values, backgroundColor: colourOf(s.label) })),
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: unit } } },
    },
  });
}

function start() {
  const node = document.getElementById("overview-data");
  if (!node || typeof Chart === "undefined") return;
  const data = JSON.parse(node.textContent);
  const canvas = (name) => document.querySelector(`[data-chart="${name}"]`);
  stacked(canvas("per-experiment"), data.days, data.verdicts_per_day, "verdicts");
  stacked(canvas("cost"), data.days, data.cost_per_day, "cost units");
  stacked(canvas("per-rater"), data.days, data.verdicts_per_rater_per_day, "verdicts");
  new Chart(canvas("throughput"), {
    type: "line",
    data: {
      labels: data.verdicts_per_hour.map((row) => row.hour.slice(11, 16)),
      datasets: [{ label: "verdicts per hour", data: data.verdicts_per_hour.map((row) => row.verdicts), borderColor: PALETTE[0], backgroundColor: PALETTE[0], tension: 0.2 }],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { display: false } },
      scales: { y: { beginAtZero: true, title: { display: true, text: "verdicts per hour" } } },
    },
  });
}

start();
