// Around the pair on the judging page: the status line, the progress numbers, the session's
// progress toward a goal the rater sets (kept in this browser's localStorage), the strip of
// the rater's latest answers (one of them, clicked, is answered again) and the end screen's
// words. Titles come from item data: textContent only.

import { el } from "./cards.js";

// How often a waiting end screen asks again whether rating is possible: a pause every 2 s (an
// admin's resume shows within seconds), the others less and less often.
const RECHECK_MS = { budget_paused: 2000, rater_paused: 2000, budget_spent: 4000, queue_empty: 4000, quota_daily: 60000, quota_total: 60000 };
const RECHECK_MAX_MS = 60000;

/** Milliseconds before the `attempt`-th recheck for `reason` (0: none). */
export function recheckDelay(reason, attempt) {
  const base = RECHECK_MS[reason] || 0;
  return base <= 2000 ? base : Math.min(base * 1.5 ** attempt, Math.max(base, RECHECK_MAX_MS));
}
// How long a status line that is not sticky stays (judging.js's announcer).
export const STATUS_CLEAR_MS = 4000;
const GOAL_KEY = "raterapp.sessionGoal";
const DEFAULT_GOAL = 50;
const MAX_GOAL = 10000;

/**
 * Draw `records` (oldest first; each {task, entry, verdict, at}) newest first into `list`.
 * A record can be reopened while `reopenable(record)`; a click calls `onReopen(record)`.
 */
function renderHistory(list, records, { labels, reopenable, onReopen }) {
  if (!records.length) {
    list.replaceChildren(el("li", { className: "history__empty", text: "Your latest answers show here. Click one to answer it again." }));
    return;
  }
  list.replaceChildren(
    ...records
      .slice()
      .reverse()
      .map((record) => {
        const pair = record.entry.pair;
        const titles = [pair.left, pair.right].map((card) => String((card && card.title) || "(no title)")).join(" · ");
        const button = el("button", { className: `history__item history__item--${record.verdict}`, attrs: { type: "button", "data-history-task": String(record.task) } });
        button.append(el("span", { className: "history__verdict", text: labels[record.verdict] }), el("span", { className: "history__titles", text: titles }));
        button.disabled = !reopenable(record);
        button.title = button.disabled ? "Too old to answer again" : "Answer this pair again";
        button.addEventListener("click", () => onReopen(record));
        const item = el("li");
        item.append(button);
        return item;
      }),
  );
}

/**
 * The verdicts my-verdicts/ lists (newest first) as the page's history records (oldest first),
 * leaving out those whose client_id is in `known` (the page has them already).
 */
export function historyFromServer(rows, known) {
  return rows
    .filter((row) => !known.has(row.client_id))
    .map((row) => ({
      task: row.task,
      entry: { pair: { task: row.task, left: row.left, right: row.right } },
      verdict: row.verdict,
      comment: row.comment,
      clientId: row.client_id,
      at: Date.parse(row.created_at),
      judgement: row.id,
    }))
    .reverse();
}

/**
 * The strip of latest answers in `list`, and the undo buttons of `ui` ({undo, undoEnd}):
 * answers draw(records); redrawn only when it changed, so a strip button keeps the focus.
 */
export function historyStrip(list, ui, { labels, reopenable, onReopen }) {
  let drawn = null;
  return (records) => {
    const undoable = records.some(reopenable);
    ui.undo.disabled = !undoable;
    ui.undoEnd.hidden = !undoable;
    const now = records.map((record) => `${record.clientId}:${reopenable(record)}`).join();
    if (now === drawn) return;
    drawn = now;
    renderHistory(list, records, { labels, reopenable, onReopen });
  };
}

function storedGoal() {
  try {
    const value = Number.parseInt(window.localStorage.getItem(GOAL_KEY), 10);
    return value >= 1 && value <= MAX_GOAL ? value : DEFAULT_GOAL;
  } catch {
    return DEFAULT_GOAL; // storage may be off; the goal then lasts as long as the page
  }
}

/** The session's progress bar in `box`; `update(count)` with the verdicts of this session. */
export function sessionGoal(box) {
  const input = box.querySelector("[data-goal-input]");
  const bar = box.querySelector("[data-goal-bar]");
  const text = box.querySelector("[data-goal-text]");
  let goal = storedGoal();
  let count = 0;
  const render = () => {
    bar.max = goal;
    bar.value = Math.min(count, goal);
    box.classList.toggle("goal--reached", count >= goal);
    text.textContent = count >= goal ? `${count} of ${goal}: goal reached!` : `${count} of ${goal}`;
  };
  input.value = String(goal);
  input.addEventListener("change", () => {
    const value = Number.parseInt(input.value, 10);
    if (value >= 1 && value <= MAX_GOAL) {
      goal = value;
      try {
        window.localStorage.setItem(GOAL_KEY, String(goal));
      } catch {
        // kept for this page only
      }
    }
    input.value = String(goal);
    render();
  });
  render();
  return {
    update(value) {
      count = value || 0;
      render();
    },
  };
}

/** The progress numbers at the top of the page; answers the verdicts of this session. */
export function showProgressNumbers(root, progress) {
  const quota = progress.quota || {};
  const has = (value) => value !== null && value !== undefined;
  const setText = (name, value) => {
    root.querySelector(`[data-progress='${name}']`).textContent = has(value) ? String(value) : "—";
  };
  setText("session", progress.session);
  // With a daily quota, "today" reads against it: "12 of 60". The quota's "left" counts the
  // pairs on screen as given already, so the limit itself is what a rater can read.
  setText("today", has(quota.daily) ? `${progress.today} of ${quota.daily}` : progress.today);
  root.querySelector("[data-today-label]").textContent = has(quota.daily) ? "Today (daily quota)" : "Today";
  setText("remaining", progress.remaining);
  root.querySelector("[data-quota='total']").hidden = !has(quota.total);
  if (has(quota.total)) setText("total", quota.total);
  return progress.session;
}

/** The end screen's title for `reason`, from `words` (the page's configuration: reason -> [title, text]). */
export const endScreenTitle = (reason, words) => (words[reason] || ["Nothing to rate"])[0];

/** The end screen's text: why, then the session's count once every answer is saved. */
export function endScreenText(reason, words, { unsaved, session }) {
  const text = (words[reason] || ["", "There is no pair for you right now."])[1];
  if (unsaved > 0) return `${text} Saving your last answers…`;
  if (!session) return text;
  return `${text} You gave ${session} verdict${session === 1 ? "" : "s"} in this session. Thank you!`;
}
