// The judging page's requests: one queue, so each runs after the ones before it, and retries
// that send the same request again until it lands. Every request goes through http.js.
//
// Why one queue: the server answers "next pair" with any live lease the rater holds outside
// `holding`, so the next pair may only be asked for once the verdict on the previous one has
// been recorded. Every verdict carries a client_id made once, so a retry after a network
// error is the same verdict, never a second one.

import { requestJson } from "./http.js";

const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 15000];

let queue = Promise.resolve();

/** Run `job` after every job queued before it; answers what `job` answers. */
export function enqueue(job) {
  const done = queue.then(job);
  queue = done.catch(() => {});
  return done;
}

let writes = 0;

/** Verdicts, reports and undos: queued like any job, and counted until they start. */
export function enqueueWrite(job) {
  writes += 1;
  return enqueue(() => {
    writes -= 1;
    return job();
  });
}

/** Writes queued and not started: a "next pair" request waits for them (see above). */
export const writesWaiting = () => writes;

const sleep = (ms) => new Promise((resolve) => window.setTimeout(resolve, ms));

/**
 * POST until the server answers (network errors, 5xx and 429 are retried with back-off);
 * `onRetry(attempt)` is told of each retry and `onRestored()` of a success after one.
 */
export async function postRetrying(url, body, { onRetry, onRestored } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const result = await requestJson("POST", url, body || {});
    if (result.status !== 0 && result.status < 500 && result.status !== 429) {
      if (attempt > 0 && onRestored) onRestored();
      return result;
    }
    if (onRetry) onRetry(attempt);
    await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]);
  }
}

/**
 * Keep the leases on the pairs the page holds (`held()`: task ids) while it is visible, every
 * third of a lease; `onLost(Set)` learns the tasks whose lease is gone, `onRefused(result)` a
 * refusal (signed out...). A network error waits for the next tick.
 */
export function keepLeases({ url, leaseSeconds, held, onLost, onRefused }) {
  const renew = async () => {
    const tasks = held();
    if (!tasks.length || document.visibilityState !== "visible") return;
    const result = await requestJson("POST", url, { tasks });
    if (result.status === 200 && result.data) onLost(new Set(result.data.lost || []));
    else if (result.status !== 0) onRefused(result);
  };
  window.setInterval(renew, Math.max(5, leaseSeconds / 3) * 1000);
  document.addEventListener("visibilitychange", renew);
}

/** The API path for an id: the page's URLs carry 0 where the id goes. */
export const withId = (template, id) => template.replace(/\/0\/([^/]*\/)?$/, `/${id}/$1`);
