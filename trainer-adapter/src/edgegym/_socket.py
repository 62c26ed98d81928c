"""The session socket (``GET /v1/ws``, docs/websocket.md) under ``AsyncClient``: one aiohttp
WebSocket carrying every episode call of the client, matched to replies by id.

The socket holds no episode state, so a dropped socket costs only the calls in flight on
it: they fail with ``SocketFault`` and the client retries them (on a new socket) under its
retry policy, exactly as it retries an HTTP call whose connection broke.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping

import aiohttp
import pydantic_core

#: How often a connection's watchdog looks for requests past their deadline: a timed-out
#: request fails at most this late. One timer per connection instead of one per request
#: (``asyncio.timeout`` pushes and cancels a timer handle on every call).
_WATCH_SECONDS = 0.05


class SocketFault(Exception):
    """The request may or may not have reached the server: no socket, a socket that dropped
    before the reply, or no reply in time. Safe to retry for an idempotent call."""


class SocketRefused(Exception):
    """The server answered the upgrade with an HTTP status instead of a socket."""

    def __init__(self, status: int, headers: Mapping[str, str] | None) -> None:
        super().__init__(f"the server refused the WebSocket upgrade with HTTP {status}")
        self.status = status
        self.headers: Mapping[str, str] = headers or {}


@dataclass
class _Connection:
    ws: aiohttp.ClientWebSocketResponse
    #: Replies awaited on this connection, by request id; failed together when it drops.
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    #: Loop time by which each pending request must be answered, and its timeout (for the message).
    deadlines: dict[int, tuple[float, float]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    watchdog: asyncio.Task[None] | None = None


class SessionSocket:
    """Opened on first use, reopened on the next call after a drop. ``max_in_flight`` bounds
    the calls waiting on it (the server's own bound is ``EDGEGYM_WS_MAX_IN_FLIGHT``, 256 by
    default), so a busy client waits here instead of being refused there."""

    def __init__(self, url: str, headers: Mapping[str, str], *, connect_timeout: float, max_in_flight: int) -> None:
        if max_in_flight < 1:
            raise ValueError(f"socket_max_in_flight must be at least 1, not {max_in_flight}")
        self.url = url
        self._headers = dict(headers)
        self._connect_timeout = connect_timeout
        self._max_in_flight = max_in_flight
        self._ids = itertools.count(1)
        self._conn: _Connection | None = None
        self._http: aiohttp.ClientSession | None = None
        # Made on first use, inside the running loop.
        self._lock: asyncio.Lock | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    async def request(self, frame: Mapping[str, Any], timeout: float | None) -> dict[str, Any]:
        """Sends one request frame (without its id) and returns the server's reply frame."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_in_flight)
        async with self._slots:
            conn = await self._connection()
            rid = next(self._ids)
            loop = asyncio.get_running_loop()
            reply: asyncio.Future[dict[str, Any]] = loop.create_future()
            conn.pending[rid] = reply
            if timeout is not None:
                # The connection's watchdog fails the reply with SocketFault once this passes.
                conn.deadlines[rid] = (loop.time() + timeout, timeout)
            try:
                # pydantic_core's encoder (a dependency through pydantic): ~5x json.dumps on a step frame.
                await conn.ws.send_str(pydantic_core.to_json({"id": rid, **frame}).decode())
                return await reply
            except (aiohttp.ClientError, ConnectionError, RuntimeError) as exc:
                # aiohttp raises ConnectionResetError / RuntimeError for a send on a closing socket.
                raise SocketFault(f"the socket failed while sending: {type(exc).__name__}: {exc}") from exc
            finally:
                conn.pending.pop(rid, None)
                conn.deadlines.pop(rid, None)

    async def _connection(self) -> _Connection:
        conn = self._conn
        if conn is not None and not conn.ws.closed:
            return conn
        if self._closed:
            raise SocketFault("the client is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            conn = self._conn
            if conn is not None and not conn.ws.closed:
                return conn
            if self._http is None:
                # No pool limit (one connection), no cookies: the socket is all this session carries.
                self._http = aiohttp.ClientSession(
                    cookie_jar=aiohttp.DummyCookieJar(),
                    timeout=aiohttp.ClientTimeout(total=None, connect=self._connect_timeout),
                )
            try:
                ws = await self._http.ws_connect(
                    self.url,
                    headers=self._headers,
                    timeout=aiohttp.ClientWSTimeout(ws_close=5.0),
                    # The server bounds frames (EDGEGYM_BODY_LIMIT_BYTES); a reply (a long
                    # transcript page) may be larger than aiohttp's 4 MiB default.
                    max_msg_size=0,
                    autoclose=True,
                    autoping=True,
                    compress=0,
                )
            except aiohttp.WSServerHandshakeError as exc:
                raise SocketRefused(exc.status, exc.headers) from exc
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                raise SocketFault(f"cannot open {self.url}: {type(exc).__name__}: {exc}") from exc
            conn = _Connection(ws)
            conn.reader = asyncio.create_task(self._read(conn))
            conn.watchdog = asyncio.create_task(self._watch(conn))
            self._conn = conn
            return conn

    @staticmethod
    async def _read(conn: _Connection) -> None:
        try:
            async for msg in conn.ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    # pydantic_core's parser: ~3x json.loads on a reply frame, same values.
                    frame = pydantic_core.from_json(msg.data)
                except ValueError:
                    continue
                waiter = conn.pending.pop(frame.get("id"), None) if isinstance(frame, dict) else None
                if waiter is not None and not waiter.done():
                    waiter.set_result(frame)
                # A frame with no id the client sent (the server could not read one) answers
                # nobody in particular; its request ends at its timeout and is retried.
        except (aiohttp.ClientError, ConnectionError):
            pass
        finally:
            fault = SocketFault(f"the socket closed before the reply (close code {conn.ws.close_code})")
            for waiter in conn.pending.values():
                if not waiter.done():
                    waiter.set_exception(fault)
            conn.pending.clear()

    @staticmethod
    async def _watch(conn: _Connection) -> None:
        """Fails each request still unanswered at its deadline with SocketFault (the client
        retries it as it retries a dropped socket); ends with the connection."""
        loop = asyncio.get_running_loop()
        while not conn.ws.closed:
            await asyncio.sleep(_WATCH_SECONDS)
            if not conn.deadlines:
                continue
            now = loop.time()
            for rid, (deadline, timeout) in list(conn.deadlines.items()):
                if deadline > now:
                    continue
                del conn.deadlines[rid]
                waiter = conn.pending.pop(rid, None)
                if waiter is not None and not waiter.done():
                    waiter.set_exception(SocketFault(f"no reply on the socket within {timeout} s"))

    async def drop(self) -> None:
        """Closes the current socket (the next call opens another); calls in flight fail with SocketFault."""
        conn = self._conn
        self._conn = None
        if conn is not None:
            await conn.ws.close()
            if conn.reader is not None:
                await conn.reader
            if conn.watchdog is not None:
                conn.watchdog.cancel()

    async def aclose(self) -> None:
        self._closed = True
        await self.drop()
        if self._http is not None:
            await self._http.close()
            self._http = None
