// Talking to the JSON API from the pages: the CSRF token Django expects, and a request that
// answers {status, data} instead of throwing (status 0: the network failed; data null: the
// body was not JSON, e.g. an HTML error page from a proxy).

export function csrfToken() {
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
  const input = document.querySelector("input[name='csrfmiddlewaretoken']");
  return input ? input.value : "";
}

export async function requestJson(method, url, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = csrfToken();
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return { status: 0, data: null };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    // An empty body or an HTML error page from a proxy: the status says enough.
  }
  return { status: response.status, data };
}
