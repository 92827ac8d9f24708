// The model-assisted card of the experiment page (templates/raterapp/experiments/_model_assisted.html),
// kept current from the dashboard's JSON (abcde-spec §15): each estimate corrected from a score of every
// drawn pair beside the human-only one, how many verdicts the score is worth, and each class's rule.

import { el } from "./cards.js";
import { errorText, failedText } from "./errors.js";
import { requestJson } from "./http.js";
import { glossaryTerm } from "./glossary_tips.js";
import { READING_TEXT, fmt, interval } from "./numbers.js";

function saved(value) {
  return value === null || value === undefined ? "—" : `${fmt(value, 2)}×`;
}

function row(estimate) {
  const tr = el("tr", { attrs: { "data-metric": estimate.metric } });
  const name = el("th", { attrs: { scope: "row" } });
  name.append(glossaryTerm(estimate.label, estimate.help, `model-assisted:${estimate.metric}`));
  const reading = el("td");
  reading.append(el("span", { className: `reading reading--${estimate.reading}`, text: READING_TEXT[estimate.reading] }));
  tr.append(
    name,
    el("td", { className: "num", text: fmt(estimate.human.value) }),
    el("td", { className: "num", text: interval(estimate.human) }),
    el("td", { className: "num", text: fmt(estimate.value), attrs: { "data-model-assisted-value": "" } }),
    el("td", { className: "num", text: interval(estimate) }),
    el("td", { className: "num", text: saved(estimate.verdicts_saved), attrs: { "data-verdicts-saved": "" } }),
    reading,
  );
  return tr;
}

function classItem(c) {
  const li = el("li", { attrs: { "data-class": `${c.stratum}-${c.pair_class}` } });
  const name = c.pair_class.charAt(0).toUpperCase() + c.pair_class.slice(1);
  const stratum = c.stratum === "all" ? "" : ` (${c.stratum})`;
  const pairs = c.judged_pairs === 1 ? "pair" : "pairs";
  const worth = c.rule === "none" ? "" : `; the score is worth ${fmt(c.verdicts_saved, 2)}× the verdicts`;
  li.append(el("strong", { text: name }), `${stratum}: ${c.judged_pairs} judged ${pairs}, ${c.rule_text}${worth}.`);
  if (c.unsure_warning) {
    li.append(" ", el("span", { className: "warning", text: "More than 10% of its verdicts are unsure: the score counts for them, the calibration does not." }));
  }
  return li;
}

export function renderModelAssisted(root, data) {
  const card = root.querySelector("[data-model-assisted]");
  const panel = data.model_assisted;
  if (!card || !panel) return;
  for (const note of card.querySelectorAll("[data-model-assisted-state]")) {
    note.hidden = note.dataset.modelAssistedState !== panel.state;
  }
  card.querySelector("[data-model-assisted-line]").textContent = panel.source ? `Score: ${panel.source}.` : "";
  card.querySelector("[data-model-assisted-block]").hidden = panel.state !== "on";
  card.querySelector("[data-model-assisted-rows]").replaceChildren(...panel.estimates.map(row));
  card.querySelector("[data-model-assisted-classes]").replaceChildren(...panel.classes.map(classItem));
}

export function bindModelAssistedForm(onSaved) {
  const form = document.querySelector("[data-model-assisted-form]");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = form.querySelector("[data-model-assisted-status]");
    const on = form.elements.model_assisted.checked;
    const { status: code, data } = await requestJson("PUT", form.dataset.modelAssistedUrl, { model_assisted: on });
    if (code === 200) {
      status.textContent = on ? "On: the estimates are being recomputed with the score." : "Off: the estimates are being recomputed from the verdicts alone.";
      onSaved();
    } else {
      status.textContent = errorText({ status: code, data }, failedText);
    }
  });
}
