// A server-sent event stream that knows when to give up. The browser reconnects by itself
// (with Last-Event-ID) after a dropped stream; an answer other than 200 closes the stream for
// good, and repeated drops without an event mean a proxy or server that cannot stream: either
// way `onGiveUp()` is called once, and the page polls instead.

// Failures of the stream in a row (no event in between) before giving up.
const STREAM_FAILURES = 3;
const STREAM_LASTED_MS = 10_000;

export function eventStream(url, eventName, { onOpen, onEvent, onGiveUp }) {
  if (!url || !("EventSource" in window)) {
    onGiveUp();
    return;
  }
  const stream = new EventSource(url);
  let failures = 0;
  let openedAt = 0;
  stream.addEventListener("open", () => {
    openedAt = Date.now();
    onOpen();
  });
  stream.addEventListener(eventName, (event) => {
    failures = 0;
    onEvent(JSON.parse(event.data));
  });
  // The server's stream failed (Redis or the database down): poll until the page is reloaded.
  stream.addEventListener("unavailable", () => {
    stream.close();
    onGiveUp();
  });
  stream.addEventListener("error", () => {
    // A stream that lasted (one that reached its lifetime) starts a new count.
    failures = openedAt && Date.now() - openedAt > STREAM_LASTED_MS ? 1 : failures + 1;
    openedAt = 0;
    if (stream.readyState === EventSource.CLOSED || failures >= STREAM_FAILURES) {
      stream.close();
      onGiveUp();
    }
  });
}
