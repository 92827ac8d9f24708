// The judging page: one pair at a time, one key per answer, the next pair already waiting.
//
// Contract: /api/experiments/<id>/next-pair/, /api/judgements/, /api/judgements/<id>/undo/,
// /api/experiments/<id>/my-verdicts/ (the history strip, read again after a reload),
// /api/tasks/<id>/report/, /api/leases/renew/ (see the JSON API docs). The page holds the pair
// on screen and one preloaded pair, plus, after undos, the pairs it will return to.
//
// Requests run in one queue (judging_net.js); verdicts are submitted in the background and the
// screen moves on at once. Keys typed while the next pair is on its way wait their turn
// (judging_keys.js). Everything in a card is untrusted (pair_view.js, cards.js).

import { announcer } from "./announce.js";
import { el } from "./cards.js";
import { endScreenText, endScreenTitle, historyFromServer, historyStrip, recheckDelay, sessionGoal, showProgressNumbers, STATUS_CLEAR_MS } from "./judging_aside.js";
import { actionQueue, listenToKeys } from "./judging_keys.js";
import { errorText } from "./errors.js";
import { requestJson } from "./http.js";
import { enqueue, enqueueWrite, keepLeases, postRetrying, withId, writesWaiting } from "./judging_net.js";
import { reportForm } from "./judging_report.js";
import { picturesDialog, preloadImages, renderPair } from "./pair_view.js";
import { $, SIDES, VERDICT_LABELS, config, root, state, ui } from "./judging_state.js";

const pictures = picturesDialog(document.querySelector("[data-pictures]"), SIDES);
const goal = sessionGoal($("[data-goal]"));
const reporting = reportForm($("[data-report]"), ui.reportOpen, { onSend: (form) => report(form), onClosed: () => actions.drain() });

const say = announcer(ui.status, { errorClass: "judge__status--error", clearAfterMs: STATUS_CLEAR_MS });
const send = (url, body) =>
  postRetrying(url, body, {
    onRetry: () => say("Connection problem: retrying… Your answers are kept.", { error: true, sticky: true }),
    onRestored: () => say("Connection restored."),
  });

// 401/403/404 on any call: the rater was signed out, lost the role, or the experiment closed.
function stopOn(result) {
  if (result.status === 401 || result.status === 403) {
    showFatal("You are signed out", "Your session ended or your account may no longer rate pairs. Sign in again to continue.", true);
    return true;
  }
  if (result.status === 404) {
    showFatal("This experiment is closed", "It is no longer open for rating. Your saved verdicts are kept.");
    return true;
  }
  return false;
}

// ---------------------------------------------------------------- screen states

function setAnswering(enabled) {
  for (const button of ui.answers) button.disabled = !enabled;
  ui.reportOpen.disabled = !enabled;
  ui.pair.setAttribute("aria-busy", String(!enabled));
}

const reopenable = (record) => Date.now() - record.at < config.undoSeconds * 1000 && !state.fatal;

const drawHistory = historyStrip(ui.history, ui, { labels: VERDICT_LABELS, reopenable, onReopen: (record) => actions.push({ command: "undo", record }) });
const refreshUndo = () => drawHistory(state.fatal ? [] : state.history);

function show(entry) {
  state.current = entry;
  root.dataset.state = "pair";
  root.dataset.task = String(entry.pair.task);
  ui.workspace.hidden = false;
  ui.end.hidden = true;
  pictures.setPair(entry.pair);
  renderPair(ui.pair, ui.cards, entry.pair, SIDES, (button) => pictures.open(button));
  const previous = entry.previous;
  ui.previous.textContent = previous ? `You had answered “${VERDICT_LABELS[previous.verdict]}”. Answer again.` : "";
  for (const button of ui.answers) button.classList.toggle("answer--previous", Boolean(previous) && button.dataset.verdict === previous.verdict);
  ui.comment.value = previous ? previous.comment : "";
  setAnswering(!state.busy);
  if (ui.pair.getBoundingClientRect().top < 0) ui.pair.scrollIntoView({ block: "start" });
  actions.drain();
}

function showWaiting() {
  state.current = null;
  root.dataset.state = "loading";
  setAnswering(false);
  say("Loading the next pair…", { sticky: true });
}

const endText = () => endScreenText(state.end, config.endWords, state);
const refreshEndText = () => root.dataset.state === "end" && !state.fatal && (ui.endText.textContent = endText());

let recheckTimer = 0;
let rechecks = 0;
function showEnd() {
  const shownBefore = root.dataset.state === "end" && ui.end.dataset.reason === state.end;
  state.current = null;
  root.dataset.state = "end";
  delete root.dataset.task;
  reporting.close({ quiet: true });
  pictures.close();
  actions.drop((action) => !action.verdict); // no pair left for them; undos still apply
  ui.end.dataset.reason = state.end;
  ui.endTitle.textContent = endScreenTitle(state.end, config.endWords);
  ui.endText.textContent = endText();
  ui.workspace.hidden = true;
  ui.end.hidden = false;
  refreshUndo();
  if (!shownBefore) ui.end.focus(); // a screen reader reads the end screen from here
  window.clearTimeout(recheckTimer);
  const delay = recheckDelay(state.end, shownBefore ? (rechecks += 1) : (rechecks = 0));
  if (delay) recheckTimer = window.setTimeout(recheck, delay);
}

// A waiting end screen asks again; a pair, when one comes, is shown at once.
function recheck() {
  if (state.fatal || root.dataset.state !== "end" || !recheckDelay(state.end, 0)) return;
  if (state.busy || state.preloading || document.visibilityState !== "visible") {
    recheckTimer = window.setTimeout(recheck, recheckDelay(state.end, 0));
    return;
  }
  state.end = null;
  preload();
}

function showFatal(title, text, signIn = false) {
  if (state.fatal) return;
  state.fatal = true;
  state.history = [];
  state.end = "fatal";
  showEnd();
  ui.endTitle.textContent = title;
  ui.endText.textContent = text;
  if (signIn) {
    const again = el("a", { className: "button button--quiet", text: "Sign in again", attrs: { href: `/login/?next=${encodeURIComponent(window.location.pathname)}` } });
    ui.endText.after(again);
  }
  say(title, { error: true, sticky: true });
}

// What comes after the pair on screen was answered, reported or set aside.
function advance() {
  if (state.resume.length) {
    show(state.resume.pop());
  } else if (state.next) {
    const pair = state.next;
    state.next = null;
    show({ pair, previous: null, lost: false });
  } else if (state.end) {
    showEnd();
    return;
  } else {
    showWaiting();
  }
  preload();
}

// ---------------------------------------------------------------- progress

function showProgress(progress) {
  if (!progress) return;
  state.session = showProgressNumbers(root, progress);
  goal.update(state.session);
  refreshEndText();
}

// ---------------------------------------------------------------- actions

function heldTasks() {
  const held = state.resume.map((entry) => entry.pair.task);
  if (state.current) held.unshift(state.current.pair.task);
  if (state.next) held.push(state.next.task);
  return held;
}

// Whether a request going out now should also lease the pair to preload: what preload() asks.
const wantsNext = () => !(state.next || state.end || state.fatal || state.resume.length);

// Lease the pair after the one on screen (or the one to show, when nothing is on screen).
function preload() {
  if (state.preloading || !wantsNext()) return;
  state.preloading = true;
  enqueue(preloadJob);
}

async function preloadJob() {
  // The server hands out any pair the rater still holds outside `holding`: a verdict, report
  // or undo queued behind this job changes what they hold, so it goes first.
  if (writesWaiting() > 0) {
    enqueue(preloadJob);
    return;
  }
  try {
    if (!wantsNext()) return;
    const result = await send(config.urls.nextPair, { holding: heldTasks() });
    if (stopOn(result)) return;
    if (result.status !== 200) {
      say(`Could not load the next pair: ${errorText(result)}`, { error: true, sticky: true });
      return;
    }
    showProgress(result.data.progress);
    takeNext(result.data);
  } finally {
    state.preloading = false;
  }
  afterNext();
}

// A leased pair, or why there is none: next-pair's answer, or the `next` of a verdict's.
function takeNext({ pair, reason }) {
  if (pair) {
    state.next = pair;
    preloadImages(state.next);
  } else {
    state.end = reason || "queue_empty";
  }
}

function afterNext() {
  if (!state.current && !state.fatal && (state.next || root.dataset.state !== "end")) {
    say("");
    advance();
  } else if (root.dataset.state === "end" && state.end) {
    showEnd(); // still nothing: ask again later
  }
}

function answer(verdict) {
  reporting.close({ quiet: true });
  const entry = state.current;
  const record = { task: entry.pair.task, entry, verdict, comment: ui.comment.value.trim(), clientId: crypto.randomUUID(), at: Date.now(), judgement: null };
  state.history = [...state.history, record].slice(-config.historySize);
  state.unsaved += 1;
  enqueueWrite(() => submit(record)).finally(() => {
    state.unsaved -= 1;
    refreshEndText();
  });
  refreshUndo();
  advance();
}

// The verdict also leases the pair to preload when the page wants one (one round trip a
// verdict); the preload queued behind it then finds it there, or asks itself (`next` null).
// Not while other writes wait: the pairs they answer are still leased and outside `holding`,
// so the server would hand one back (see preloadJob).
async function submit(record) {
  const body = { task: record.task, verdict: record.verdict, client_id: record.clientId, comment: record.comment };
  if (wantsNext() && writesWaiting() === 0) body.next = { holding: heldTasks() };
  const result = await send(config.urls.judgements, body);
  if (result.status === 200 || result.status === 201) {
    record.judgement = result.data.id;
    showProgress(result.data.progress);
    say("Saved");
    if (result.data.next && wantsNext()) {
      takeNext(result.data.next);
      afterNext();
    }
    return;
  }
  state.history = state.history.filter((kept) => kept !== record);
  refreshUndo();
  if (result.status === 409 || !stopOn(result)) {
    say(`That verdict was not recorded: ${errorText(result)}`, { error: true, sticky: result.status !== 409 });
  }
}

// Take back an answer (the latest one still open, or the one clicked in the strip): its
// pair comes back to be answered again, then the page returns to where it was.
function undo(chosen) {
  const record = chosen || state.history.filter(reopenable).pop();
  if (!record || !state.history.includes(record) || !reopenable(record)) {
    say("Nothing to undo");
    return;
  }
  reporting.close({ quiet: true });
  state.history = state.history.filter((kept) => kept !== record);
  state.busy = true;
  refreshUndo();
  setAnswering(false);
  enqueueWrite(async () => {
    let reopened = null;
    try {
      if (!record.judgement) {
        say("Nothing to undo: that verdict was not recorded", { error: true });
        return;
      }
      const result = await send(withId(config.urls.undo, record.judgement), {});
      if (stopOn(result)) return;
      if (result.status !== 200 || !result.data || !result.data.pair) {
        say(`Could not undo: ${errorText(result)}`, { error: true });
        return;
      }
      showProgress(result.data.progress);
      reopened = { pair: result.data.pair, previous: { verdict: record.verdict, comment: record.comment }, lost: false };
    } finally {
      state.busy = false;
      if (reopened && !state.fatal) {
        if (state.current) state.resume.push(state.current);
        say("Undone. Answer this pair again.");
        show(reopened); // runs what waited for the undo, maybe another undo
      }
      refreshUndo();
      if (state.current && !state.fatal) setAnswering(!state.busy);
      actions.drain();
    }
  });
}

function report({ reason, note }) {
  if (!state.current || state.busy || state.fatal) return;
  const task = state.current.pair.task;
  state.unsaved += 1;
  enqueueWrite(async () => {
    const result = await send(withId(config.urls.report, task), { reason, note });
    if (result.status === 200 || result.status === 201) {
      showProgress(result.data.progress);
      say("Reported. Thank you: the pair is set aside.");
    } else if (!stopOn(result)) {
      say(`The report was not recorded: ${errorText(result)}`, { error: true });
    }
  }).finally(() => { state.unsaved -= 1; });
  advance();
}

// The server says these leases are gone: forget the pairs, except the one on screen.
function leasesLost(lost) {
  if (state.next && lost.has(state.next.task)) {
    state.next = null;
    preload();
  }
  state.resume = state.resume.filter((entry) => !lost.has(entry.pair.task));
  if (state.current && lost.has(state.current.pair.task) && !state.current.lost) {
    // Still answerable: a late verdict is kept while the pair needs one.
    state.current.lost = true;
    say("This pair was held for you too long and may have gone to someone else; your answer still counts if it is needed.", { sticky: true });
  }
}

// ---------------------------------------------------------------- keyboard

// Answers and undos wait here while the page cannot take them (see judging_keys.js).
const actions = actionQueue({
  canRun(action) {
    if (state.fatal || state.busy || reporting.isOpen() || pictures.isOpen()) return false;
    return action.verdict ? Boolean(state.current) : true;
  },
  run(action) {
    if (action.verdict) answer(action.verdict);
    else undo(action.record);
  },
  onChange(size) {
    if (size) say(`${size} answer${size === 1 ? "" : "s"} waiting for the next pair…`, { sticky: true });
    else if (ui.status.textContent.includes("waiting for the next pair")) say("");
  },
});

// ---------------------------------------------------------------- start

// The history strip survives a reload: the server lists the rater's verdicts still open to
// change, and they join those this page gave meanwhile (by client_id, which both know).
async function loadHistory() {
  const result = await requestJson("GET", config.urls.myVerdicts, undefined, { cache: "no-store" });
  if (result.status !== 200 || !result.data || state.fatal) return;
  const stored = historyFromServer(result.data.verdicts, new Set(state.history.map((record) => record.clientId)));
  state.history = [...stored, ...state.history].slice(-config.historySize);
  refreshUndo();
}

function start() {
  for (const button of ui.answers) button.addEventListener("click", () => actions.push({ verdict: button.dataset.verdict }));
  ui.undo.addEventListener("click", () => actions.push({ command: "undo" }));
  ui.undoEnd.addEventListener("click", () => actions.push({ command: "undo" }));
  ui.reportOpen.addEventListener("click", () => {
    if (reporting.isOpen()) reporting.close();
    else if (state.current && !state.busy) reporting.open();
  });
  document.querySelector("[data-pictures]").addEventListener("close", () => actions.drain());
  listenToKeys({
    dialog: pictures,
    form: reporting,
    onAction(action) {
      const run = {
        report: () => state.current && !state.busy && !state.fatal && reporting.open(),
        guidelines: () => ui.guidelines && (ui.guidelines.open = !ui.guidelines.open),
        comment: () => state.current && ui.comment.focus(),
        pictures: () => state.current && pictures.open(),
      }[action.command];
      if (run) run();
      else if (!state.fatal) actions.push(action); // a verdict or an undo
    },
  });
  keepLeases({
    url: config.urls.renew,
    leaseSeconds: config.leaseSeconds,
    held: () => (state.fatal ? [] : heldTasks()),
    onLost: leasesLost,
    onRefused: stopOn,
  });
  window.setInterval(refreshUndo, 5000); // answers leave the undo window
  refreshUndo();
  loadHistory();
  preload(); // the first pair; its arrival asks for the one after it
}

start();
