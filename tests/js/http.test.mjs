// Unit tests of http.js, the pages' one way to the server: a page that submits a form the ordinary
// way sends no more reads (a poll answered after a delete would be a 404); its writes still go, and
// a page restored from the back-forward cache reads again. Run by `node --test tests/js`.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

// The browser globals http.js reads, with the listeners it adds kept to be fired by the tests.
const listeners = { document: {}, window: {} };
const target = (name) => ({
  addEventListener: (type, listener) => (listeners[name][type] ||= []).push(listener),
});
globalThis.window = target("window");
globalThis.document = { cookie: "csrftoken=t0k3n", querySelector: () => null, ...target("document") };
const fire = (name, type, event) => listeners[name][type].forEach((listener) => listener(event));

const sent = [];
globalThis.fetch = async (url, options) => {
  if (options.signal && options.signal.aborted) throw new DOMException("aborted", "AbortError");
  sent.push({ url, method: options.method });
  return { status: 200, json: async () => ({ ok: true }), headers: { get: () => null } };
};

const { requestJson } = await import("../../static/raterapp/js/http.js");

const form = (attributes = {}, submitter = null) => ({
  target: { method: attributes.method || "post", target: attributes.target || "" },
  submitter,
  defaultPrevented: Boolean(attributes.prevented),
});

beforeEach(() => {
  sent.length = 0;
  fire("window", "pageshow", { persisted: true }); // each test starts on a page that reads
});

test("forms that do not replace the page leave its reads alone", async () => {
  fire("document", "submit", form({ prevented: true })); // a script took it over
  fire("document", "submit", form({ method: "dialog" }));
  fire("document", "submit", form({ target: "_blank" }));
  const submitter = { hasAttribute: (name) => name === "formmethod", formMethod: "dialog" };
  fire("document", "submit", form({}, submitter));
  assert.equal((await requestJson("GET", "/api/experiments/1/dashboard/")).status, 200);
  assert.deepEqual(sent, [{ url: "/api/experiments/1/dashboard/", method: "GET" }]);
});

test("after an ordinary submit no read is sent, a write still is", async () => {
  fire("document", "submit", form());
  assert.deepEqual(await requestJson("GET", "/api/experiments/1/dashboard/"), { status: 0, data: null, etag: null });
  assert.equal((await requestJson("POST", "/api/judgements/", { verdict: "equivalent" })).status, 200);
  assert.deepEqual(sent, [{ url: "/api/judgements/", method: "POST" }]);
});

test("a page shown again from the back-forward cache reads again; a fresh load's pageshow changes nothing", async () => {
  fire("document", "submit", form());
  fire("window", "pageshow", { persisted: false });
  assert.equal((await requestJson("GET", "/api/a/")).status, 0);
  fire("window", "pageshow", { persisted: true });
  assert.equal((await requestJson("GET", "/api/b/")).status, 200);
  assert.deepEqual(sent, [{ url: "/api/b/", method: "GET" }]);
});
