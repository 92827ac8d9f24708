// The judging page: one pair at a time, one key per answer, the next pair already waiting.
//
// Contract: /api/experiments/<id>/next-pair/, /api/judgements/, /api/judgements/<id>/undo/,
// /api/tasks/<id>/report/, /api/leases/renew/ (see the JSON API docs). The page holds at most
// the pair on screen and one preloaded pair (plus, right after an undo, the pair it will
// return to).
//
// Why the network work runs in one queue: the server answers "next pair" with any live lease
// the rater holds outside `holding`, so the next pair may only be asked for once the verdict
// on the previous one has been recorded. Verdicts are submitted in the background and the
// screen moves on at once; every verdict carries a client_id made once, so a retry after a
// network error is the same verdict, never a second one.
//
// Everything in a card is untrusted: cards.js writes it with textContent only, and only http(s)
// addresses become links or images.

import { el, renderCard, safeUrl } from "./cards.js";
import { csrfToken } from "./http.js";

const config = JSON.parse(document.getElementById("judging-config").textContent);

const VERDICT_LABELS = { equivalent: "Equivalent", not_equivalent: "Not equivalent", unsure: "Unsure" };
const VERDICT_KEYS = { 1: "equivalent", e: "equivalent", 2: "not_equivalent", n: "not_equivalent", 3: "unsure", u: "unsure" };
const VERDICT_CODES = { Digit1: "equivalent", Numpad1: "equivalent", Digit2: "not_equivalent", Numpad2: "not_equivalent", Digit3: "unsure", Numpad3: "unsure" };
const SIDES = { left: "Item A", right: "Item B" };
const END_TEXT = {
  queue_empty: ["No pairs left for you", "This experiment needs no more verdicts from you right now."],
  quota_daily: ["Daily quota reached", "You have given today's quota of verdicts. Come back tomorrow to rate more pairs."],
  quota_total: ["Total quota reached", "You have given all the verdicts your quota allows."],
  budget_spent: ["Budget spent", "This experiment has all the verdicts its budget pays for. Thank you!"],
  budget_paused: ["Rating paused", "An admin paused rating of this experiment. Try again later."],
  rater_paused: ["Your rating is paused", "An admin paused your rating for now. Ask them when you can continue."],
  not_assigned: ["Not open to you", "This experiment is now rated by other raters. Pick another one from your list."],
};
const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 15000];
const STATUS_CLEAR_MS = 4000;

const root = document.getElementById("judge");
const $ = (selector) => root.querySelector(selector);
const ui = {
  pair: $("[data-pair]"),
  cards: { left: $("[data-card='left'] [data-card-content]"), right: $("[data-card='right'] [data-card-content]") },
  answers: [...root.querySelectorAll("[data-verdict]")],
  previous: $("[data-previous]"),
  comment: $("[data-comment]"),
  undo: $("[data-undo]"),
  undoEnd: $("[data-undo-end]"),
  reportOpen: $("[data-report-open]"),
  report: $("[data-report]"),
  reportCancel: $("[data-report-cancel]"),
  workspace: $("[data-workspace]"),
  end: $("[data-end]"),
  endTitle: $("[data-end-title]"),
  endText: $("[data-end-text]"),
  status: $("[data-status]"),
  guidelines: $("[data-guidelines]"),
};

const state = {
  current: null, // {pair, previous: {verdict, comment} | null, lost: bool}
  next: null, // the preloaded pair
  resume: null, // after an undo: the pair to go back to once the undone one is answered again
  end: null, // why the API has no further pair for us
  last: null, // the latest verdict, while it may be undone
  busy: false, // an undo is on its way: answers wait for it
  fatal: false, // signed out or the experiment closed: nothing more to do
  unsaved: 0, // verdicts and reports not yet acknowledged by the server
  writesWaiting: 0, // verdicts, reports and undos queued but not started
  preloading: false, // a "next pair" request is queued or on its way
  session: null, // verdicts in this session, from the latest progress
};

// ---------------------------------------------------------------- network

let queue = Promise.resolve();
function enqueue(job) {
  const done = queue.then(job);
  queue = done.catch(() => {});
  return done;
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify(body || {}),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    // An empty body or an HTML error page from a proxy: the status says enough.
  }
  return { status: response.status, data };
}

const sleep = (ms) => new Promise((resolve) => window.setTimeout(resolve, ms));

// Network errors, 5xx and 429 are worth retrying: the same request again, until it lands.
async function postRetrying(url, body) {
  for (let attempt = 0; ; attempt += 1) {
    let result = null;
    try {
      result = await post(url, body);
    } catch {
      result = null;
    }
    if (result && result.status < 500 && result.status !== 429) {
      if (attempt > 0) say("Connection restored.");
      return result;
    }
    say("Connection problem: retrying… Your answers are kept.", { error: true, sticky: true });
    await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]);
  }
}

const withId = (template, id) => template.replace(/\/0\/([^/]*\/)?$/, `/${id}/$1`);

function detailOf(result) {
  const detail = result.data && result.data.detail;
  return typeof detail === "string" && detail ? detail : `HTTP ${result.status}`;
}

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

// ---------------------------------------------------------------- status line

let statusTimer = 0;
function say(text, { error = false, sticky = false } = {}) {
  window.clearTimeout(statusTimer);
  ui.status.textContent = text;
  ui.status.classList.toggle("judge__status--error", error);
  if (!sticky) statusTimer = window.setTimeout(() => { ui.status.textContent = ""; }, STATUS_CLEAR_MS);
}

// ---------------------------------------------------------------- cards

const preloaded = new Set();
function preloadImages(pair) {
  for (const card of [pair.left, pair.right]) {
    const src = safeUrl(card && card.image_url);
    if (!src) continue;
    const img = new Image();
    img.referrerPolicy = "no-referrer";
    preloaded.add(img);
    const forget = () => preloaded.delete(img);
    img.addEventListener("load", forget, { once: true });
    img.addEventListener("error", forget, { once: true });
    img.src = src;
  }
}

// ---------------------------------------------------------------- screen states

function setAnswering(enabled) {
  for (const button of ui.answers) button.disabled = !enabled;
  ui.reportOpen.disabled = !enabled;
  ui.pair.setAttribute("aria-busy", String(!enabled));
}

function refreshUndo() {
  const undoable = Boolean(state.last) && !state.busy && !state.fatal;
  ui.undo.disabled = !undoable;
  ui.undoEnd.hidden = !undoable;
}

function show(entry) {
  state.current = entry;
  root.dataset.state = "pair";
  root.dataset.task = String(entry.pair.task);
  ui.workspace.hidden = false;
  ui.end.hidden = true;
  renderCard(ui.cards.left, entry.pair.left, entry.pair.right, SIDES.left);
  renderCard(ui.cards.right, entry.pair.right, entry.pair.left, SIDES.right);
  const previous = entry.previous;
  ui.previous.hidden = !previous;
  ui.previous.textContent = previous ? `You had answered “${VERDICT_LABELS[previous.verdict]}”. Answer again.` : "";
  for (const button of ui.answers) button.classList.toggle("answer--previous", Boolean(previous) && button.dataset.verdict === previous.verdict);
  ui.comment.value = previous ? previous.comment : "";
  setAnswering(true);
  const top = ui.pair.getBoundingClientRect().top;
  if (top < 0) ui.pair.scrollIntoView({ block: "start" });
}

function showWaiting() {
  state.current = null;
  root.dataset.state = "loading";
  setAnswering(false);
  say("Loading the next pair…", { sticky: true });
}

function showEnd() {
  state.current = null;
  root.dataset.state = "end";
  delete root.dataset.task;
  closeReport();
  const [title, text] = END_TEXT[state.end] || ["Nothing to rate", "There is no pair for you right now."];
  const session = state.session ? ` You gave ${state.session} verdict${state.session === 1 ? "" : "s"} in this session. Thank you!` : "";
  ui.endTitle.textContent = title;
  ui.endText.textContent = text + session;
  ui.workspace.hidden = true;
  ui.end.hidden = false;
  refreshUndo();
  ui.end.focus(); // a screen reader reads the end screen from here
}

function showFatal(title, text, signIn = false) {
  if (state.fatal) return;
  state.fatal = true;
  state.last = null;
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
  if (state.resume) {
    const entry = state.resume;
    state.resume = null;
    show(entry);
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

function setText(name, value) {
  const node = root.querySelector(`[data-progress='${name}']`);
  if (node) node.textContent = value === null || value === undefined ? "—" : String(value);
}

function showProgress(progress) {
  if (!progress) return;
  const quota = progress.quota || {};
  const has = (value) => value !== null && value !== undefined;
  state.session = progress.session;
  setText("session", progress.session);
  // With a daily quota, "today" reads against it: "12 of 60". The quota's "left" counts the
  // pairs on screen as given already, so the limit itself is what a rater can read.
  setText("today", has(quota.daily) ? `${progress.today} of ${quota.daily}` : progress.today);
  root.querySelector("[data-today-label]").textContent = has(quota.daily) ? "Today (daily quota)" : "Today";
  setText("remaining", progress.remaining);
  root.querySelector("[data-quota='total']").hidden = !has(quota.total);
  if (has(quota.total)) setText("total", quota.total);
}

// ---------------------------------------------------------------- actions

function heldTasks() {
  const held = [];
  if (state.current) held.push(state.current.pair.task);
  if (state.resume) held.push(state.resume.pair.task);
  if (state.next) held.push(state.next.task);
  return held;
}

// Lease the pair after the one on screen (or the one to show, when nothing is on screen).
function preload() {
  if (state.preloading || state.next || state.end || state.fatal || state.resume) return;
  state.preloading = true;
  enqueue(preloadJob);
}

async function preloadJob() {
  // The server hands out any pair the rater still holds outside `holding`: a verdict, report
  // or undo queued behind this job changes what they hold, so it goes first.
  if (state.writesWaiting > 0) {
    enqueue(preloadJob);
    return;
  }
  try {
    if (state.next || state.end || state.fatal || state.resume) return;
    const result = await postRetrying(config.urls.nextPair, { holding: heldTasks() });
    if (stopOn(result)) return;
    if (result.status !== 200) {
      say(`Could not load the next pair: ${detailOf(result)}`, { error: true, sticky: true });
      return;
    }
    showProgress(result.data.progress);
    if (result.data.pair) {
      state.next = result.data.pair;
      preloadImages(state.next);
    } else {
      state.end = result.data.reason || "queue_empty";
    }
  } finally {
    state.preloading = false;
  }
  if (!state.current && !state.fatal && root.dataset.state !== "end") {
    say("");
    advance();
  }
}

// Verdicts, reports and undos: in order, each after the ones before it.
function enqueueWrite(job) {
  state.writesWaiting += 1;
  return enqueue(() => {
    state.writesWaiting -= 1;
    return job();
  });
}

function answer(verdict) {
  if (!state.current || state.busy || state.fatal) return;
  closeReport();
  const entry = state.current;
  const record = {
    task: entry.pair.task,
    entry,
    verdict,
    comment: ui.comment.value.trim(),
    clientId: crypto.randomUUID(),
    at: Date.now(),
    judgement: null,
  };
  state.last = record;
  state.unsaved += 1;
  record.done = enqueueWrite(() => submit(record)).finally(() => { state.unsaved -= 1; });
  scheduleUndoExpiry(record);
  refreshUndo();
  advance();
}

async function submit(record) {
  const body = { task: record.task, verdict: record.verdict, client_id: record.clientId, comment: record.comment };
  const result = await postRetrying(config.urls.judgements, body);
  if (result.status === 200 || result.status === 201) {
    record.judgement = result.data.id;
    showProgress(result.data.progress);
    say("Saved");
    return;
  }
  if (state.last === record) state.last = null;
  refreshUndo();
  if (result.status === 409) {
    say(`That verdict was not recorded: ${detailOf(result)}`, { error: true });
    return;
  }
  if (stopOn(result)) return;
  say(`That verdict was not recorded: ${detailOf(result)}`, { error: true, sticky: true });
}

let undoTimer = 0;
function scheduleUndoExpiry(record) {
  window.clearTimeout(undoTimer);
  undoTimer = window.setTimeout(() => {
    if (state.last === record) {
      state.last = null;
      refreshUndo();
    }
  }, config.undoSeconds * 1000);
}

function undo() {
  const record = state.last;
  if (!record || state.busy || state.fatal) {
    if (!state.fatal) say("Nothing to undo");
    return;
  }
  closeReport();
  state.last = null;
  state.busy = true;
  refreshUndo();
  setAnswering(false);
  enqueueWrite(async () => {
    try {
      if (!record.judgement) {
        say("Nothing to undo: that verdict was not recorded", { error: true });
        return;
      }
      const result = await postRetrying(withId(config.urls.undo, record.judgement), {});
      if (stopOn(result)) return;
      if (result.status !== 200 || !result.data || !result.data.pair) {
        say(`Could not undo: ${detailOf(result)}`, { error: true });
        return;
      }
      showProgress(result.data.progress);
      if (state.current) state.resume = state.current;
      state.busy = false;
      show({ pair: result.data.pair, previous: { verdict: record.verdict, comment: record.comment }, lost: false });
      say("Undone. Answer this pair again.");
    } finally {
      state.busy = false;
      refreshUndo();
      if (state.current && !state.fatal) setAnswering(true);
    }
  });
}

function openReport() {
  if (!state.current || state.busy || state.fatal) return;
  ui.report.hidden = false;
  ui.reportOpen.setAttribute("aria-expanded", "true");
  const checked = ui.report.querySelector("input[name='reason']:checked") || ui.report.querySelector("input[name='reason']");
  checked.focus();
}

function closeReport({ focusBack = false } = {}) {
  if (ui.report.hidden) return;
  ui.report.hidden = true;
  ui.reportOpen.setAttribute("aria-expanded", "false");
  ui.report.reset();
  if (focusBack) ui.reportOpen.focus();
}

function report() {
  if (!state.current || state.busy || state.fatal) return;
  const form = new FormData(ui.report);
  const reason = String(form.get("reason") || "other");
  const note = String(form.get("note") || "").trim();
  const task = state.current.pair.task;
  closeReport();
  ui.reportOpen.blur();
  state.unsaved += 1;
  enqueueWrite(async () => {
    const result = await postRetrying(withId(config.urls.report, task), { reason, note });
    if (result.status === 200 || result.status === 201) {
      showProgress(result.data.progress);
      say("Reported. Thank you: the pair is set aside.");
    } else if (!stopOn(result)) {
      say(`The report was not recorded: ${detailOf(result)}`, { error: true });
    }
  }).finally(() => { state.unsaved -= 1; });
  advance();
}

// Keep the leases on every pair the page holds; drop the ones the server says are gone.
async function renewLeases() {
  const tasks = heldTasks();
  if (!tasks.length || state.fatal) return;
  let result;
  try {
    result = await post(config.urls.renew, { tasks });
  } catch {
    return; // the next tick tries again
  }
  if (result.status !== 200 || !result.data) {
    stopOn(result);
    return;
  }
  const lost = new Set(result.data.lost || []);
  if (state.next && lost.has(state.next.task)) {
    state.next = null;
    preload();
  }
  if (state.resume && lost.has(state.resume.pair.task)) state.resume = null;
  if (state.current && lost.has(state.current.pair.task) && !state.current.lost) {
    // Still answerable: a late verdict is kept while the pair needs one.
    state.current.lost = true;
    say("This pair was held for you too long and may have gone to someone else; your answer still counts if it is needed.", { sticky: true });
  }
}

// ---------------------------------------------------------------- keyboard

function isTyping(target) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  return target.tagName === "INPUT" && !["radio", "checkbox", "button", "submit", "reset"].includes(target.type);
}

function onKeyDown(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (!ui.report.hidden) {
    if (event.key === "Escape") {
      event.preventDefault();
      closeReport({ focusBack: true });
    } else if (event.key === "Enter" && target.tagName === "INPUT") {
      event.preventDefault();
      report();
    }
    return;
  }
  if (isTyping(target)) {
    if (event.key === "Escape" && target === ui.comment) {
      event.preventDefault();
      ui.comment.blur();
    }
    return;
  }
  if (event.repeat) return;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const verdict = VERDICT_KEYS[key] || VERDICT_CODES[event.code];
  if (verdict) {
    event.preventDefault();
    answer(verdict);
  } else if (key === "Backspace") {
    event.preventDefault();
    undo();
  } else if (key === "f") {
    event.preventDefault();
    openReport();
  } else if (key === "h" && ui.guidelines) {
    event.preventDefault();
    ui.guidelines.open = !ui.guidelines.open;
  } else if (key === "c" && state.current) {
    event.preventDefault();
    ui.comment.focus();
  }
}

// ---------------------------------------------------------------- start

function start() {
  for (const button of ui.answers) button.addEventListener("click", () => answer(button.dataset.verdict));
  ui.undo.addEventListener("click", undo);
  ui.undoEnd.addEventListener("click", undo);
  ui.reportOpen.addEventListener("click", () => (ui.report.hidden ? openReport() : closeReport()));
  ui.reportCancel.addEventListener("click", () => closeReport({ focusBack: true }));
  ui.report.addEventListener("submit", (event) => {
    event.preventDefault();
    report();
  });
  document.addEventListener("keydown", onKeyDown);
  window.addEventListener("beforeunload", (event) => {
    if (state.unsaved > 0) event.preventDefault();
  });
  const renewEvery = Math.max(5, config.leaseSeconds / 3) * 1000;
  window.setInterval(() => {
    if (document.visibilityState === "visible") renewLeases();
  }, renewEvery);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") renewLeases();
  });
  refreshUndo();
  preload(); // the first pair; its arrival asks for the one after it
}

start();
