"""``Client`` and ``AsyncClient``: the edgegym protocol over httpx, one method per operation.

Both inherit every operation from ``_operations`` (written once, as the call it sends),
send the same call descriptions (``_calls``) and share the retry rules (``_retry``,
``_Tries``); only the sending loops (httpx sync / async, the async session socket) differ.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any, AsyncIterator, Iterator, Literal, TypeVar, overload

import httpx
from httpx_sse import SSEError, aconnect_sse, connect_sse
from pydantic import BaseModel, ValidationError

from . import _calls
from . import models as m
from ._events import EvalEvent, EventFollower, parse_lines
from ._retry import RETRYABLE_STATUS, RetryPolicy, is_retryable_exception, next_wait, parse_retry_after
from ._socket import SessionSocket, SocketFault, SocketRefused
from ._operations import AsyncOperations, SyncOperations, _next_cursor, _Operations
from .errors import EdgegymError

T = TypeVar("T", bound=BaseModel)

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _parse(call: _calls.Call[T], response: httpx.Response) -> T:
    try:
        return call.returns.model_validate_json(response.content)
    except ValidationError as exc:
        raise EdgegymError(
            f"{call.method} {call.path}: response does not match the protocol: {exc}",
            status=response.status_code,
            code="invalid_response",
            request_id=response.headers.get("x-request-id"),
        ) from exc


def _failure(call: _calls.Call[Any], response: httpx.Response | None, exc: BaseException | None, started: float) -> EdgegymError:
    if response is not None:
        return EdgegymError.from_response(response, parse_retry_after(response.headers.get("retry-after")))
    elapsed = time.monotonic() - started
    return EdgegymError(
        f"{call.method} {call.path}: no response after {elapsed:.1f} s: {type(exc).__name__}: {exc}",
        status=None,
        code="network_error",
    )


def _retry_wait(
    call: _calls.Call[Any],
    response: httpx.Response | None,
    error: BaseException | None,
    policy: RetryPolicy,
    attempt: int,
    started: float,
) -> float | None:
    """Seconds to wait before retrying a failed attempt, or None to give up. Shared by the
    sync and async clients, so both retry exactly the same calls the same way: only
    idempotent calls, only on transport faults or retryable statuses, Retry-After honoured."""
    retryable = call.idempotent and (
        (error is not None and is_retryable_exception(error))
        or (response is not None and response.status_code in RETRYABLE_STATUS)
    )
    if not retryable:
        return None
    retry_after = parse_retry_after(response.headers.get("retry-after")) if response is not None else None
    return next_wait(policy, attempt, started, retry_after)


class _Tries:
    """One HTTP call's attempts, for both clients' send loops: counts them and says how
    long to wait before the next, or raises the error that ends the call."""

    def __init__(self, call: _calls.Call[Any], policy: RetryPolicy) -> None:
        self.call = call
        self.policy = policy
        self.started = time.monotonic()
        self.attempt = 0

    def wait_or_raise(self, response: httpx.Response | None, error: BaseException | None) -> float:
        self.attempt += 1
        wait = _retry_wait(self.call, response, error, self.policy, self.attempt, self.started)
        if wait is None:
            raise _failure(self.call, response, error, self.started) from error
        return wait


class Client(SyncOperations):
    """Synchronous client.

    >>> with Client("http://127.0.0.1:8787") as gym:
    ...     ep = gym.reset("reverse-text", index=0)
    ...     reply = gym.step(ep.episode_id, 0, {"role": "assistant", "content": "<answer>…</answer>"})
    ...     print(gym.score(ep.episode_id).score.reward)
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._setup(base_url, api_key, retry, owns_http=http_client is None)
        self._http = http_client or httpx.Client(timeout=timeout or DEFAULT_TIMEOUT)

    def _send(self, call: _calls.Call[T]) -> T:
        return _parse(call, self._request(call))

    def _request(self, call: _calls.Call[Any]) -> httpx.Response:
        """Sends ``call``, retrying it when it is idempotent; the successful response, body read."""
        tries = _Tries(call, self.retry)
        while True:
            try:
                response = self._http.request(**self._request_args(call))
            except httpx.TransportError as exc:
                time.sleep(tries.wait_or_raise(None, exc))
                continue
            if response.is_success:
                return response
            time.sleep(tries.wait_or_raise(response, None))

    def eval_events(self, eval_id: str) -> Iterator[EvalEvent]:
        """``GET /v1/evals/{id}/events``: follow a job. Yields an ``EvalProgressEvent`` now
        and as rollouts land, then the ended ``EvalJob`` (from the ``done`` event) last, and
        stops. A dropped stream reconnects under the retry policy (no event is repeated).

        >>> for event in gym.eval_events(job.eval_id):
        ...     if isinstance(event, models.EvalJob):
        ...         print(event.status, event.summary.reward.mean)
        ...     else:
        ...         print(event.progress.done, "/", event.progress.total)
        """
        call = _calls.eval_events(eval_id)
        follow = EventFollower(call, self.retry)
        while True:
            follow.begin_attempt()
            response: httpx.Response | None = None
            error: BaseException | None = None
            try:
                with connect_sse(self._http, **self._request_args(call)) as source:
                    response = source.response
                    if response.is_success:
                        for sse in source.iter_sse():
                            event = follow.on_event(sse, response)
                            if event is not None:
                                yield event
                            if follow.finished:
                                return
                    else:
                        response.read()
            except SSEError as exc:  # a 2xx that is not an event stream: not a network fault
                raise follow.invalid(response, exc) from exc
            except httpx.TransportError as exc:
                error = exc
            time.sleep(follow.wait_before_retry(response, error))

    @overload
    def close(self) -> None: ...
    @overload
    def close(self, episode_id: str) -> m.CloseResponse: ...
    def close(self, episode_id: str | None = None) -> m.CloseResponse | None:
        """Close the client's HTTP connections (a client made without ``http_client``).

        ``close(episode_id)`` is the deprecated spelling of ``close_episode(episode_id)``.
        """
        if episode_id is not None:
            warnings.warn("Client.close(episode_id) is deprecated: use close_episode(episode_id); close() closes the client", DeprecationWarning, stacklevel=2)
            return self.close_episode(episode_id)
        if self._owns_http:
            self._http.close()
        return None

    def close_client(self) -> None:
        """Deprecated: use ``close()``."""
        warnings.warn("Client.close_client() is deprecated: use close()", DeprecationWarning, stacklevel=2)
        self.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: What a client's episode calls travel on (see ``AsyncClient``).
Transport = Literal["auto", "websocket", "http"]

#: Upgrade refusals that mean "this server has no /v1/ws" (an older server, a proxy that
#: does not pass WebSockets): ``transport="auto"`` then uses HTTP for good.
_NO_SOCKET_STATUS = frozenset({404, 405, 426, 501})


def _socket_url(base_url: str) -> str:
    if base_url.startswith("https://"):
        return "wss://" + base_url[len("https://") :] + "/v1/ws"
    if base_url.startswith("http://"):
        return "ws://" + base_url[len("http://") :] + "/v1/ws"
    raise ValueError(f"base_url must start with http:// or https://, not {base_url!r}")


def _frame_error(call: _calls.Call[Any], frame: dict[str, Any]) -> EdgegymError:
    """The error a reply frame carries, as ``EdgegymError.from_response`` reads an HTTP one."""
    status = frame.get("status")
    err = frame.get("error")
    retry_after = frame.get("retry_after")
    retry = float(retry_after) if isinstance(retry_after, (int, float)) else None
    if not isinstance(status, int) or not isinstance(err, dict):
        return EdgegymError(f"{call.method} {call.path} over /v1/ws: reply is not a protocol frame: {str(frame)[:300]}", status=None, code="invalid_response")
    return EdgegymError(
        str(err.get("message", "")),
        status=status,
        code=str(err.get("code", "unknown_error")),
        request_id=str(err.get("request_id") or "") or None,
        details=err.get("details"),
        retry_after=retry,
    )


class AsyncClient(AsyncOperations):
    """Asynchronous client: the same methods as ``Client``, awaited.

    >>> async with AsyncClient("http://127.0.0.1:8787") as gym:
    ...     ep = await gym.reset("reverse-text", index=0)

    ``transport`` picks what reset, step, score, close and episode reads travel on:

    - ``"auto"`` (default): the session socket ``/v1/ws`` (docs/websocket.md), one aiohttp
      WebSocket carrying every episode of this client concurrently; if the server has no
      socket route (404/405/426/501 on the upgrade) those calls use HTTP from then on, and a
      503 on the upgrade (the server's socket limit) sends that call over HTTP.
    - ``"websocket"``: the socket only; an upgrade the server refuses is an ``EdgegymError``.
    - ``"http"``: httpx for everything, as the sync ``Client``.

    Everything else (environments, evaluation jobs, forks, stateless scoring) is HTTP. Over
    the socket the retry guarantees are the HTTP ones: only idempotent calls are retried, on
    a dropped socket, a reply that does not come within the read timeout, or a retryable
    status (429/502/503/504, ``retry_after`` honoured), each on a new socket if the old one
    is gone. A ``http_client`` you pass means HTTP unless you also ask for the socket.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_connections: int = 256,
        transport: Transport | None = None,
        socket_max_in_flight: int = 256,
    ) -> None:
        if transport not in (None, "auto", "websocket", "http"):
            raise ValueError(f'transport must be "auto", "websocket" or "http", not {transport!r}')
        self._setup(base_url, api_key, retry, owns_http=http_client is None)
        self._http = http_client or httpx.AsyncClient(
            timeout=timeout or DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self.transport: Transport = transport or ("http" if http_client is not None else "auto")
        limits = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout) if timeout is not None else DEFAULT_TIMEOUT
        self._reply_timeout = limits.read
        self._socket: SessionSocket | None = None
        if self.transport != "http":
            self._socket = SessionSocket(
                _socket_url(self.base_url),
                self._headers,
                connect_timeout=limits.connect or 10.0,
                max_in_flight=socket_max_in_flight,
            )

    async def _send(self, call: _calls.Call[T]) -> T:
        if call.socket is not None and self._socket is not None:
            frame = await self._socket_request(call)
            if frame is not None:
                try:
                    return call.returns.model_validate(frame["body"])
                except (ValidationError, KeyError) as exc:
                    raise EdgegymError(
                        f"{call.method} {call.path} over /v1/ws: response does not match the protocol: {exc}",
                        status=frame.get("status"),
                        code="invalid_response",
                    ) from exc
        return _parse(call, await self._request(call))

    async def _socket_request(self, call: _calls.Call[Any]) -> dict[str, Any] | None:
        """The successful reply frame of ``call`` over the session socket, retried as HTTP
        calls are; None when ``transport="auto"`` finds it should go over HTTP instead."""
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            socket = self._socket
            if socket is None or call.socket is None:
                return None
            try:
                frame = await socket.request(call.socket, self._reply_timeout)
            except SocketRefused as refused:
                if self.transport == "auto" and refused.status in _NO_SOCKET_STATUS:
                    socket, self._socket = self._socket, None
                    if socket is not None:
                        await socket.aclose()
                    return None
                if self.transport == "auto" and refused.status == 503:
                    return None
                failure = EdgegymError(
                    f"{call.method} {call.path}: {refused}",
                    status=refused.status,
                    code="unauthorized" if refused.status == 401 else "socket_refused",
                    retry_after=parse_retry_after(refused.headers.get("Retry-After")),
                )
                retryable = refused.status in RETRYABLE_STATUS
                retry_after = failure.retry_after
            except SocketFault as fault:
                failure = EdgegymError(
                    f"{call.method} {call.path} over /v1/ws: no reply after {time.monotonic() - started:.1f} s: {fault}",
                    status=None,
                    code="network_error",
                )
                retryable = True
            else:
                status = frame.get("status")
                if isinstance(status, int) and 200 <= status < 300:
                    return frame
                failure = _frame_error(call, frame)
                retryable = failure.status in RETRYABLE_STATUS
                retry_after = failure.retry_after
            wait = next_wait(self.retry, attempt, started, retry_after) if retryable and call.idempotent else None
            if wait is None:
                raise failure
            await asyncio.sleep(wait)

    async def _request(self, call: _calls.Call[Any]) -> httpx.Response:
        tries = _Tries(call, self.retry)
        while True:
            try:
                response = await self._http.request(**self._request_args(call))
            except httpx.TransportError as exc:
                await asyncio.sleep(tries.wait_or_raise(None, exc))
                continue
            if response.is_success:
                return response
            await asyncio.sleep(tries.wait_or_raise(response, None))

    async def episode_pages(self, episode_id: str, *, from_turn: int = 0, page_turns: int = 100, seat: str | None = None) -> AsyncIterator[m.Episode]:
        """Every page of an episode's transcript from ``from_turn`` on, ``page_turns`` turns a
        page, following ``next_from_turn`` until the end. Each page is a full ``Episode``
        (status and score as of that read); a long episode is read without holding its
        whole transcript in one response. ``seat``: one seat's view, as ``episode``.
        """
        cursor: int | None = from_turn
        while cursor is not None:
            page = await self._send(_calls.episode(episode_id, cursor, page_turns, seat))
            yield page
            cursor = _next_cursor(page, cursor)

    async def close(self, episode_id: str) -> m.CloseResponse:
        """Deprecated: use ``close_episode(episode_id)`` (``aclose()`` closes the client)."""
        warnings.warn("AsyncClient.close(episode_id) is deprecated: use close_episode(episode_id)", DeprecationWarning, stacklevel=2)
        return await self.close_episode(episode_id)

    async def eval_results(self, eval_id: str, *, offset: int = 0, limit: int | None = None) -> list[m.EvalRollout]:
        call = _calls.eval_results(eval_id, offset, limit)
        return parse_lines(call, await self._request(call))

    async def eval_events(self, eval_id: str) -> AsyncIterator[EvalEvent]:
        call = _calls.eval_events(eval_id)
        follow = EventFollower(call, self.retry)
        while True:
            follow.begin_attempt()
            response: httpx.Response | None = None
            error: BaseException | None = None
            try:
                async with aconnect_sse(self._http, **self._request_args(call)) as source:
                    response = source.response
                    if response.is_success:
                        async for sse in source.aiter_sse():
                            event = follow.on_event(sse, response)
                            if event is not None:
                                yield event
                            if follow.finished:
                                return
                    else:
                        await response.aread()
            except SSEError as exc:
                raise follow.invalid(response, exc) from exc
            except httpx.TransportError as exc:
                error = exc
            await asyncio.sleep(follow.wait_before_retry(response, error))

    async def aclose(self) -> None:
        """Close the client's socket and HTTP connections (those made without ``http_client``)."""
        if self._socket is not None:
            await self._socket.aclose()
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# One text per operation, written once on the sync side: AsyncClient's methods take it, so
# the two cannot drift (tests/test_client_parity.py checks names, signatures and docs).
for _name, _sync in {**vars(_Operations), "eval_events": Client.eval_events}.items():
    _async = getattr(AsyncClient, _name, None)
    if not _name.startswith("_") and callable(_sync) and _async is not None:
        _async.__doc__ = _sync.__doc__
