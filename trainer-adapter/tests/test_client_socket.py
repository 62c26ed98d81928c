"""AsyncClient over the session socket (/v1/ws) against the real server: the same answers as
over HTTP, a dropped socket whose calls are retried without double-applying, the server's
in-flight limit absorbed by retries, the fallback to HTTP of ``transport="auto"``, and auth."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from edgegym import AsyncClient, Client, EdgegymError, RetryPolicy

from support.server import EdgegymServer

FAST = RetryPolicy(max_attempts=5, initial_backoff=0.01, max_backoff=0.05, deadline=10)


class SocketProxy:
    """Relays HTTP and /v1/ws to the real server, in this event loop. ``drop_ops``: the first
    request of each named op is relayed, the server's reply awaited, and then the client's
    socket is closed instead of answering: a reply lost after the server applied the request.
    ``socket=False`` answers the upgrade 404, as a server without /v1/ws does."""

    def __init__(self, target: str, *, drop_ops: tuple[str, ...] = (), socket: bool = True) -> None:
        self.target = target
        self.drop_ops = set(drop_ops)
        self.socket = socket
        self.frames: list[str] = []
        self.upgrades = 0
        self.http: list[str] = []
        self.url = ""

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        self.upgrades += 1
        if not self.socket:
            return web.json_response({"error": {"code": "route_not_found", "message": "no", "request_id": "x"}}, status=404)
        client = web.WebSocketResponse()
        await client.prepare(request)
        async with self._session.ws_connect(self.target.replace("http", "ws") + "/v1/ws") as upstream:

            async def down() -> None:
                async for msg in upstream:
                    frame = json.loads(msg.data)
                    if frame["id"] in dropping:
                        await client.close()
                        return
                    await client.send_str(msg.data)

            dropping: set[Any] = set()
            relay = asyncio.create_task(down())
            async for msg in client:
                frame = json.loads(msg.data)
                self.frames.append(frame["op"])
                if frame["op"] in self.drop_ops:
                    self.drop_ops.discard(frame["op"])
                    dropping.add(frame["id"])
                await upstream.send_str(msg.data)
            relay.cancel()
        return client

    async def _http(self, request: web.Request) -> web.StreamResponse:
        self.http.append(f"{request.method} {request.path}")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with self._session.request(request.method, self.target + request.path_qs, data=await request.read(), headers=headers) as resp:
            return web.Response(body=await resp.read(), status=resp.status, content_type=resp.content_type)

    async def __aenter__(self) -> "SocketProxy":
        self._session = aiohttp.ClientSession()
        app = web.Application()
        app.router.add_get("/v1/ws", self._ws)
        app.router.add_route("*", "/{tail:.*}", self._http)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()
        await self._session.close()


def test_socket_answers_as_http_does(server):
    async def main():
        async with AsyncClient(server.url, transport="websocket") as ws, AsyncClient(server.url, transport="http") as http:
            eps = await asyncio.gather(*[ws.reset("letter-a", index=i, seed=i) for i in range(16)])
            assert len({e.episode_id for e in eps}) == 16
            steps = await asyncio.gather(*[ws.step(e.episode_id, 0, {"role": "assistant", "content": "A"}) for e in eps])
            assert all(s.done for s in steps)
            scores = await asyncio.gather(*[ws.score(e.episode_id) for e in eps])
            assert all(s.score.reward == 1.0 for s in scores)
            # The same episode read over both transports is the same.
            assert (await ws.episode(eps[0].episode_id)) == (await http.episode(eps[0].episode_id))
            page = await ws.episode(eps[0].episode_id, from_turn=1, limit=1)
            assert page.from_turn == 1 and len(page.turns) == 1
            assert (await ws.close(eps[0].episode_id)).status in ("closed", "done")
            with pytest.raises(EdgegymError) as err:
                await ws.step(eps[1].episode_id, 0, {"role": "assistant", "content": "B"})  # a different message at a taken turn
            assert (err.value.status, err.value.code) == (409, "turn_conflict") and err.value.request_id
            with pytest.raises(EdgegymError) as err:
                await ws.reset("nope")
            assert (err.value.status, err.value.code) == (404, "env_not_found")
            # Calls the socket does not carry still work, over HTTP.
            assert (await ws.env("letter-a")).id == "letter-a"
            assert ws._socket is not None and ws._socket._conn is not None and http._socket is None

    asyncio.run(main())


@pytest.mark.parametrize("op", ["reset", "step", "score"])
def test_a_dropped_socket_is_retried_without_double_applying(server, op):
    async def main():
        async with SocketProxy(server.url, drop_ops=(op,)) as proxy, AsyncClient(proxy.url, retry=FAST, transport="websocket") as gym:
            call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'}}
            ep = await gym.reset("calculator", index=2, seed=2)
            step = await gym.step(ep.episode_id, 0, {"role": "assistant", "content": None, "tool_calls": [call]})
            await gym.step(ep.episode_id, 1, {"role": "assistant", "content": "2"})
            score = await gym.score(ep.episode_id)
            # The dropped op went out twice (the server applied it the first time), on two sockets.
            assert proxy.frames.count(op) == (3 if op == "step" else 2) and proxy.upgrades == 2
            return ep, step, score

    ep, step, score = asyncio.run(main())
    assert step.turn == 1
    with Client(server.url) as direct:
        full = direct.episode(ep.episode_id)
    # One opening, the tool ran once, two assistant turns: nothing applied twice.
    assert full.turn == 2 and [m.role for m in full.messages].count("assistant") == 2
    assert score.score.metrics["tool_calls"] == 1 and full.score is not None and full.score.metrics["tool_calls"] == 1


def test_the_servers_in_flight_limit_is_absorbed_by_retries(tmp_path):
    async def main(url: str):
        # The server runs one request per socket at a time; the client sends 16 at once on one socket.
        async with AsyncClient(url, retry=RetryPolicy(max_attempts=50, initial_backoff=0.001, max_backoff=0.01, deadline=30), transport="websocket", socket_max_in_flight=16) as gym:
            eps = await asyncio.gather(*[gym.reset("letter-a", index=i) for i in range(16)])
            steps = await asyncio.gather(*[gym.step(e.episode_id, 0, {"role": "assistant", "content": "A"}) for e in eps])
            return eps, steps

    with EdgegymServer(tmp_path, env={"EDGEGYM_WS_MAX_IN_FLIGHT": "1"}) as srv:
        eps, steps = asyncio.run(main(srv.url))
        assert len({e.episode_id for e in eps}) == 16 and all(s.turn == 1 for s in steps)
        with Client(srv.url) as direct:
            assert all(direct.episode(e.episode_id).turn == 1 for e in eps)


def test_auto_falls_back_to_http_when_the_server_has_no_socket(server):
    async def main():
        async with SocketProxy(server.url, socket=False) as proxy, AsyncClient(proxy.url) as gym:
            assert gym.transport == "auto"
            ep = await gym.reset("letter-a", index=1)
            await gym.step(ep.episode_id, 0, {"role": "assistant", "content": "A"})
            # One refused upgrade, then HTTP for good.
            assert proxy.upgrades == 1 and gym._socket is None
            assert f"POST /v1/episodes/{ep.episode_id}/step" in proxy.http
        async with SocketProxy(server.url, socket=False) as proxy, AsyncClient(proxy.url, transport="websocket", retry=FAST) as gym:
            with pytest.raises(EdgegymError) as err:
                await gym.reset("letter-a", index=1)
            assert (err.value.status, err.value.code) == (404, "socket_refused")

    asyncio.run(main())


def test_socket_auth_and_bad_settings(tmp_path):
    async def main(url: str):
        async with AsyncClient(url, transport="websocket") as anonymous:
            with pytest.raises(EdgegymError) as err:
                await anonymous.reset("letter-a")
            assert (err.value.status, err.value.code) == (401, "unauthorized")
        async with AsyncClient(url, api_key="sk-test", transport="websocket") as gym:
            assert (await gym.reset("letter-a")).turn == 0

    with EdgegymServer(tmp_path, api_keys="sk-test") as srv:
        asyncio.run(main(srv.url))
    with pytest.raises(ValueError):
        AsyncClient("http://127.0.0.1:9", transport="carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        AsyncClient("http://127.0.0.1:9", socket_max_in_flight=0)
