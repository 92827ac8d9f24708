// Unit tests of the judging page's modules that hold its state and its requests, run by Node's
// own test runner (`node --test tests/js`, in `make test` and `make test-fast`); the page as a
// whole is tested in Chromium (tests/browser/test_judging*.py).

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

// The browser globals the modules read: the cookie for the CSRF token, fetch, timers.
globalThis.window = globalThis;
globalThis.addEventListener = () => {};
globalThis.document = { cookie: "csrftoken=t0k3n", querySelector: () => null, addEventListener: () => {} };

const { enqueue, enqueueWrite, writesWaiting, postRetrying } = await import("../../static/raterapp/js/judging_net.js");
const { actionQueue } = await import("../../static/raterapp/js/judging_keys.js");
const { endScreenText, endScreenTitle, historyFromServer } = await import("../../static/raterapp/js/judging_aside.js");

const answers = [];
const sent = [];
beforeEach(() => {
  answers.length = 0;
  sent.length = 0;
  globalThis.fetch = async (url, options) => {
    sent.push({ url, ...options });
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return { status: next.status, json: async () => next.data, headers: { get: () => null } };
  };
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("queued jobs run one after the other, in order, and a failed one does not stop the queue", async () => {
  const ran = [];
  let release;
  const first = enqueue(() => new Promise((resolve) => (release = resolve)).then(() => ran.push("first")));
  const failing = enqueue(() => {
    ran.push("failing");
    throw new Error("no");
  });
  const third = enqueue(() => ran.push("third"));
  await tick();
  assert.deepEqual(ran, []); // the first holds the queue
  release();
  await first;
  await assert.rejects(failing, /no/);
  await third;
  assert.deepEqual(ran, ["first", "failing", "third"]);
});

test("writes are counted from when they are queued until they start", async () => {
  let release;
  const blocker = enqueue(() => new Promise((resolve) => (release = resolve)));
  const write = enqueueWrite(() => "stored");
  assert.equal(writesWaiting(), 1); // a next-pair request would wait for it
  await tick(); // the blocker has started
  assert.equal(writesWaiting(), 1);
  release();
  await blocker;
  assert.equal(await write, "stored");
  assert.equal(writesWaiting(), 0);
});

test("a verdict is sent again, the same body with its CSRF token, until the server answers", async () => {
  const originalSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = (callback) => originalSetTimeout(callback, 0); // no back-off waits in a test
  try {
    answers.push(new Error("offline"), { status: 503, data: null }, { status: 429, data: null }, { status: 201, data: { id: 7 } });
    const retries = [];
    let restored = false;
    const body = { task: 3, verdict: "equivalent", client_id: "c-1" };
    const result = await postRetrying("/api/judgements/", body, { onRetry: (n) => retries.push(n), onRestored: () => (restored = true) });
    assert.deepEqual(result, { status: 201, data: { id: 7 }, etag: null });
    assert.deepEqual(retries, [0, 1, 2]);
    assert.equal(restored, true);
    assert.equal(sent.length, 4);
    for (const request of sent) {
      assert.equal(request.method, "POST");
      assert.equal(request.headers["X-CSRFToken"], "t0k3n");
      assert.deepEqual(JSON.parse(request.body), body); // the same client_id: one verdict, however often sent
    }
  } finally {
    globalThis.setTimeout = originalSetTimeout;
  }
});

test("a refusal is an answer, not retried", async () => {
  answers.push({ status: 409, data: { detail: "You already judged this pair." } });
  const result = await postRetrying("/api/judgements/", { task: 1 });
  assert.equal(result.status, 409);
  assert.equal(sent.length, 1);
});

test("keys pressed while the page cannot take them wait, and run in order once it can", () => {
  const ran = [];
  let ready = false;
  const sizes = [];
  const queue = actionQueue({ canRun: () => ready, run: (action) => ran.push(action), onChange: (size) => sizes.push(size) });
  queue.push("1");
  queue.push("2");
  queue.push("undo");
  assert.deepEqual(ran, []);
  assert.equal(queue.size, 3);
  queue.drop((action) => action !== "undo");
  ready = true;
  queue.drain();
  assert.deepEqual(ran, ["1", "2"]);
  assert.equal(queue.size, 0);
  queue.push("3"); // nothing waits and the page can take it: at once
  assert.deepEqual(ran, ["1", "2", "3"]);
  assert.equal(sizes.at(-1), 0);
});

test("the history from the server leaves out what the page knows, oldest first", () => {
  const rows = [
    { id: 9, task: 30, verdict: "unsure", comment: "", client_id: "c", created_at: "2026-11-29T10:00:03Z", left: { title: "A" }, right: { title: "B" } },
    { id: 8, task: 20, verdict: "equivalent", comment: "same", client_id: "b", created_at: "2026-11-29T10:00:02Z", left: {}, right: {} },
    { id: 7, task: 10, verdict: "not_equivalent", comment: "", client_id: "a", created_at: "2026-11-29T10:00:01Z", left: {}, right: {} },
  ];
  const records = historyFromServer(rows, new Set(["b"]));
  assert.deepEqual(records.map((record) => [record.task, record.judgement, record.clientId]), [[10, 7, "a"], [30, 9, "c"]]);
  assert.equal(records[1].entry.pair.left.title, "A");
  assert.equal(records[0].at, Date.parse("2026-11-29T10:00:01Z"));
});

test("the end screen says why, from the words the server sent, then the session's count", () => {
  const words = { budget_spent: ["Budget spent", "All verdicts are paid for."] };
  assert.equal(endScreenTitle("budget_spent", words), "Budget spent");
  assert.equal(endScreenTitle("unheard_of", words), "Nothing to rate");
  assert.equal(endScreenText("budget_spent", words, { unsaved: 2, session: 5 }), "All verdicts are paid for. Saving your last answers…");
  assert.equal(endScreenText("budget_spent", words, { unsaved: 0, session: 1 }), "All verdicts are paid for. You gave 1 verdict in this session. Thank you!");
  assert.equal(endScreenText("unheard_of", words, { unsaved: 0, session: 0 }), "There is no pair for you right now.");
});
