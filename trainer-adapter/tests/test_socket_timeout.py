"""A request on the session socket that gets no reply fails with SocketFault at its timeout
(the connection's watchdog), and a reply that does come still reaches its caller."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
from aiohttp import web

from edgegym._socket import SessionSocket, SocketFault


async def _serve(answer: bool) -> tuple[web.AppRunner, str]:
    async def ws_handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT and answer:
                frame = msg.json()
                await ws.send_json({"id": frame["id"], "status": 200, "body": {"op": frame["op"]}})
        return ws

    app = web.Application()
    app.router.add_get("/v1/ws", ws_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"ws://127.0.0.1:{port}/v1/ws"


def test_an_unanswered_request_times_out_and_an_answered_one_does_not() -> None:
    async def run() -> None:
        silent, silent_url = await _serve(answer=False)
        talking, talking_url = await _serve(answer=True)
        try:
            sock = SessionSocket(silent_url, {}, connect_timeout=5, max_in_flight=8)
            started = time.monotonic()
            with pytest.raises(SocketFault, match="within 0.2 s"):
                await sock.request({"op": "get", "episode_id": "ep_x"}, 0.2)
            assert 0.2 <= time.monotonic() - started < 2.0
            await sock.aclose()

            sock = SessionSocket(talking_url, {}, connect_timeout=5, max_in_flight=8)
            replies = await asyncio.gather(*(sock.request({"op": f"op{i}"}, 5.0) for i in range(20)))
            assert [r["body"]["op"] for r in replies] == [f"op{i}" for i in range(20)]
            # No deadline is left behind once the replies are in.
            assert sock._conn is not None and not sock._conn.deadlines and not sock._conn.pending
            await sock.aclose()
        finally:
            await silent.cleanup()
            await talking.cleanup()

    asyncio.run(run())
