// The rater's home: it keeps itself current. Every few seconds while the page is visible it
// asks the rater's own standing (/api/raters/me/); when an experiment can be rated now where
// the page says it cannot (or the other way round), or the list changed, the page reloads to
// show it, so a rater waiting for an admin's resume sees "Start rating" come back by itself.

import { requestJson } from "./http.js";

const POLL_MS = 4000;
const list = document.querySelector("[data-rate-home]");

function shownStates() {
  const rows = [...document.querySelectorAll("[data-experiment]")].filter((row) => row.dataset.blocked !== "not_assigned");
  return new Map(rows.map((row) => [row.dataset.experiment, row.dataset.blocked || ""]));
}

async function check() {
  if (document.visibilityState !== "visible") return;
  const result = await requestJson("GET", list.dataset.pollUrl);
  if (result.status !== 200 || !result.data || !Array.isArray(result.data.experiments)) return; // try again later
  const shown = shownStates();
  const now = new Map(result.data.experiments.map((row) => [String(row.experiment), row.blocked || ""]));
  const same = shown.size === now.size && [...now].every(([id, blocked]) => shown.get(id) === blocked);
  if (!same) window.location.reload();
}

if (list) window.setInterval(check, POLL_MS);
