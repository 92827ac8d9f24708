// The judging page's configuration, its elements and what it holds now (judging.js).

export const config = JSON.parse(document.getElementById("judging-config").textContent);

// The verdicts' names and the end screen's words come from the server (raterapp/vocabulary.py).
export const VERDICT_LABELS = config.verdictLabels;
export const SIDES = { left: "Item A", right: "Item B" };

export const root = document.getElementById("judge");
export const $ = (selector) => root.querySelector(selector);
export const ui = {
  pair: $("[data-pair]"),
  cards: { left: $("[data-card='left'] [data-card-content]"), right: $("[data-card='right'] [data-card-content]") },
  answers: [...root.querySelectorAll("[data-verdict]")],
  previous: $("[data-previous]"),
  comment: $("[data-comment]"),
  undo: $("[data-undo]"),
  undoEnd: $("[data-undo-end]"),
  history: $("[data-history]"),
  reportOpen: $("[data-report-open]"),
  workspace: $("[data-workspace]"),
  end: $("[data-end]"),
  endTitle: $("[data-end-title]"),
  endText: $("[data-end-text]"),
  status: $("[data-status]"),
  guidelines: $("[data-guidelines]"),
};

export const state = {
  current: null, // {pair, previous: {verdict, comment} | null, lost: bool}
  next: null, // the preloaded pair
  resume: [], // after undos: the pairs to go back to, the latest on top
  end: null, // why the API has no further pair for us
  history: [], // the latest answers, oldest first: what undo and the strip reopen
  busy: false, // an undo is on its way: answers wait for it
  fatal: false, // signed out or the experiment closed: nothing more to do
  unsaved: 0, // verdicts and reports not yet acknowledged by the server
  preloading: false, // a "next pair" request is queued or on its way
  session: null, // verdicts in this session, from the latest progress
};
