"""Callers take turns in Django (issue 33): a caller (API token or session) with many connections
waits for a turn with at most ``WEB_THREADS - 1`` requests (one at the default of 1), so another
caller's request waits behind one or two of theirs, not behind all of them."""

from __future__ import annotations

import asyncio

from tests.raterapp.helpers.asgi import asgi_scope, views_counted

TOKEN_A = (b"authorization", b"Token rt_a")
TOKEN_B = (b"authorization", b"Token rt_b")


def session(key: str) -> tuple[bytes, bytes]:
    return (b"cookie", f"csrftoken=x; sessionid={key}".encode())


async def served(app, path: str, *headers: tuple[bytes, bytes]) -> None:
    asked = []

    async def receive():
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()

    async def send(message):
        pass

    await app({**asgi_scope(path), "headers": [(b"host", b"testserver"), *headers]}, receive, send)


async def after(seconds: float, request):
    await asyncio.sleep(seconds)
    await request


def test_a_caller_with_8_connections_does_not_queue_all_of_them_ahead_of_another():
    for first, second in ((TOKEN_A, TOKEN_B), (session("a"), session("b")), (TOKEN_A, session("a"))):
        app, views = views_counted(limit=1)

        async def main(first=first, second=second, app=app):
            flood = [served(app, f"/a/{k}", first) for k in range(8)]
            await asyncio.gather(*flood, after(0.005, served(app, "/b/", second)))

        asyncio.run(main())
        assert len(views.finished) == 9 and views.most == 1
        # The one of A's in Django when B came and, at most, the one already waiting: not all 8.
        assert views.finished.index("/b/") <= 2, views.finished
        assert not app.lines  # each caller's line goes with their last request


def test_without_other_callers_one_caller_is_served_as_before():
    app, views = views_counted(limit=1)

    async def main():
        await asyncio.gather(*[served(app, f"/a/{k}", TOKEN_A) for k in range(5)])

    asyncio.run(main())
    assert views.finished == [f"/a/{k}" for k in range(5)]


def test_a_caller_holds_at_most_all_turns_but_one_and_anonymous_requests_are_not_told_apart():
    for headers, most in (((TOKEN_A,), 2), ((session("a"),), 2), ((), 3), ((session(""),), 3)):
        app, views = views_counted(limit=3)

        async def main(headers=headers, app=app):
            await asyncio.gather(*[served(app, f"/slow/{k}", *headers) for k in range(6)])

        asyncio.run(main())
        assert (views.most, len(views.finished)) == (most, 6), headers


def test_a_request_cancelled_while_it_waits_gives_back_its_place():
    app, views = views_counted(limit=1)

    async def main():
        running = asyncio.create_task(served(app, "/slow/0", TOKEN_A))
        await asyncio.sleep(0.01)
        waiting = asyncio.create_task(served(app, "/slow/1", TOKEN_A))
        behind = asyncio.create_task(served(app, "/slow/2", TOKEN_A))
        await asyncio.sleep(0.01)
        waiting.cancel()
        behind.cancel()
        await asyncio.gather(running, waiting, behind, return_exceptions=True)
        await asyncio.wait_for(served(app, "/a/3", TOKEN_A), timeout=1)

    asyncio.run(main())
    assert views.finished == ["/slow/0", "/a/3"]
    assert not app.lines
