// Every request of the pages goes through here (a lint rule and a test keep it so): the CSRF
// token Django expects, and answers as {status, ...} instead of throwing (status 0: the
// network failed; data null: the body was not JSON, e.g. an HTML error page from a proxy).

export function csrfToken() {
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
  const input = document.querySelector("input[name='csrfmiddlewaretoken']");
  return input ? input.value : "";
}

// A form submitted the ordinary way (no script took it over, not a dialog's, not into another
// tab) replaces the page: its reads stop there, in flight or not. A poll answered after the
// form's change would describe what it changed (a deleted experiment's dashboard: 404). A page
// restored from the back-forward cache reads again.
let leaving = new AbortController();
window.addEventListener("pageshow", (event) => {
  if (event.persisted) leaving = new AbortController();
});
document.addEventListener("submit", (event) => {
  const { target: form, submitter } = event;
  const method = submitter && submitter.hasAttribute("formmethod") ? submitter.formMethod : form.method;
  const target = submitter && submitter.hasAttribute("formtarget") ? submitter.formTarget : form.target;
  if (!event.defaultPrevented && method !== "dialog" && (!target || target === "_self")) leaving.abort();
});

/** The Response, or null when the network failed (or the page is leaving: a GET is not sent). */
async function send(method, url, { body, headers = {}, cache } = {}) {
  const all = { ...headers };
  if (method !== "GET") all["X-CSRFToken"] = csrfToken();
  const signal = method === "GET" ? leaving.signal : undefined;
  try {
    return await fetch(url, { method, credentials: "same-origin", headers: all, body, cache, signal });
  } catch {
    return null;
  }
}

/**
 * A JSON request: {status, data, etag}. `headers` adds to the request's (If-None-Match...);
 * `cache` is fetch's cache mode.
 */
export async function requestJson(method, url, body, { headers = {}, cache } = {}) {
  const all = { Accept: "application/json", ...headers };
  if (method !== "GET") all["Content-Type"] = "application/json";
  const response = await send(method, url, { body: body === undefined ? undefined : JSON.stringify(body), headers: all, cache });
  if (!response) return { status: 0, data: null, etag: null };
  let data = null;
  try {
    data = await response.json();
  } catch {
    // An empty body (204, 304) or an HTML error page from a proxy: the status says enough.
  }
  return { status: response.status, data, etag: response.headers.get("ETag") };
}

/** A server-rendered fragment (GET): {status, html}; html is "" unless the status is 200. */
export async function requestHtml(url) {
  const response = await send("GET", url, { headers: { Accept: "text/html" }, cache: "no-store" });
  if (!response) return { status: 0, html: "" };
  return { status: response.status, html: response.ok ? await response.text() : "" };
}

/** A form posted as multipart (files and all): {status, redirected, url, text}. */
export async function submitForm(form) {
  const response = await send("POST", form.action || window.location.href, { body: new FormData(form) });
  if (!response) return { status: 0, redirected: false, url: "", text: "" };
  return { status: response.status, redirected: response.redirected, url: response.url, text: await response.text() };
}
