// The pair explorer's words and numbers: the names of classes, verdicts and sides, compact
// numbers and shares, badges, and what to say when a request fails.

import { el } from "./cards.js";
import { errorText, messagesByField } from "./errors.js";
import { config } from "./explorer_state.js";

export const CLASS_NAMES = { split: "Split", merge: "Merge", intersection: "Intersection", self: "Self" };
// The three verdicts' names come from the server (the page's configuration).
export const VERDICT_NAMES = { unjudged: "Not judged", ...config.verdictLabels, mixed: "Mixed", self: "Self pair" };
export const SIDE_NAMES = { base: "Base", exp: "Exp" };
export const OTHER_SIDE = { base: "exp", exp: "base" };

export const counts = new Intl.NumberFormat("en");

export function number(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  if (value === 0) return "0";
  if (Math.abs(value) < 1e-4) return value.toExponential(1);
  return String(Number(value.toPrecision(3)));
}

export function percent(share) {
  if (share === null || share === undefined || !Number.isFinite(share)) return "—";
  const value = share * 100;
  const text = value < 1 && value > 0 ? value.toFixed(2) : value.toFixed(1);
  return `${text.replace(/\.0+$/, "")}%`;
}

// The pair's score (model-assisted estimates, abcde-spec §15) and where it comes from.
export const SCORE_SOURCES = { built_in: "built-in card similarity", uploaded: "your uploaded score" };

export function scoreText(row) {
  return row.score === null || row.score === undefined ? "—" : row.score.toFixed(3);
}

export const titleOf = (title, id) => (typeof title === "string" && title.trim() ? title : String(id));
const known = (names, value) => (Object.hasOwn(names, value) ? value : "other");

export function badge(value, names) {
  return el("span", { className: `xp-badge xp-badge--${known(names, value)}`, text: names[value] || String(value) });
}

export function problemOf(result, what) {
  if (result.status === 0) return `The ${what} could not be loaded: the server did not answer. Check the connection and try again.`;
  if (result.status === 401 || result.status === 403) return "You are signed out, or your account may no longer see this experiment. Sign in again.";
  if (result.status === 404) return `The ${what} could not be found: it is not part of this experiment, or no longer visible to you.`;
  if (result.status === 400 && result.data && typeof result.data === "object") {
    return `Check the filters. ${Object.values(messagesByField(result)).flat().join("; ")}`;
  }
  return `The ${what} could not be loaded (${errorText(result)}).`;
}
