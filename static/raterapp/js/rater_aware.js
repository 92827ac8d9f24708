// The rater-aware card of the experiment page (templates/raterapp/experiments/_rater_aware.html),
// kept current from the dashboard's JSON: each estimate from the Dawid–Skene posteriors beside the
// raw-verdict one, and the count of inconsistent triangles.

import { el } from "./cards.js";
import { glossaryTerm } from "./glossary_tips.js";
import { READING_TEXT, count, fmt, interval } from "./numbers.js";

function row(estimate) {
  const tr = el("tr", { attrs: { "data-metric": estimate.metric } });
  const name = el("th", { attrs: { scope: "row" } });
  name.append(glossaryTerm(estimate.label, estimate.help, `rater-aware:${estimate.metric}`));
  const reading = el("td");
  reading.append(el("span", { className: `reading reading--${estimate.reading}`, text: READING_TEXT[estimate.reading] }));
  tr.append(
    name,
    el("td", { className: "num", text: fmt(estimate.raw_value) }),
    el("td", { className: "num", text: fmt(estimate.value), attrs: { "data-rater-aware-value": "" } }),
    el("td", { className: "num", text: interval(estimate) }),
    reading,
  );
  return tr;
}

export function renderRaterAware(root, data) {
  const card = root.querySelector("[data-rater-aware]");
  if (!card) return;
  const panel = data.rater_aware;
  const part = (name) => card.querySelector(`[data-rater-aware-${name}]`);
  part("empty").hidden = Boolean(panel);
  part("error").hidden = !panel || !panel.error;
  part("error").textContent = (panel && panel.error) || "";
  part("block").hidden = !panel || !panel.estimates;
  card.querySelector("[data-transitivity-line]").hidden = !panel;
  if (!panel) return;
  const verdicts = panel.judgements === 1 ? "verdict" : "verdicts";
  part("line").textContent = `From ${panel.judgements} ${verdicts}, computed in the background.`;
  part("rows").replaceChildren(...(panel.estimates || []).map(row));
  card.querySelector("[data-transitivity-count]").textContent = count(panel.transitivity.inconsistent_triangles);
  card.querySelector("[data-transitivity-closed]").textContent = String(panel.transitivity.closed_triangles);
}
