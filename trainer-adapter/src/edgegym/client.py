"""``Client`` and ``AsyncClient``: the edgegym protocol over httpx, one method per operation.

Both send the same call descriptions (``_calls``) and share the retry rules
(``_retry``); only the sending loop differs.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any, AsyncIterator, Iterable, Iterator, Literal, TypeVar, overload

import httpx
from httpx_sse import SSEError, aconnect_sse, connect_sse
from pydantic import BaseModel, ValidationError

from . import _calls
from . import models as m
from ._events import EvalEvent, EventFollower, parse_lines
from ._retry import RETRYABLE_STATUS, RetryPolicy, is_retryable_exception, next_wait, parse_retry_after
from ._socket import SessionSocket, SocketFault, SocketRefused
from ._version import __version__
from .errors import EdgegymError

T = TypeVar("T", bound=BaseModel)

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": f"edgegym-python/{__version__}"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


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


def _next_cursor(page: m.Episode, cursor: int) -> int | None:
    """Where the page after ``page`` starts, or None at the end. A cursor that does not move
    forward, or points past the episode's turn, would page forever: a protocol error."""
    nxt = page.next_from_turn
    if nxt is not None and not cursor < nxt <= page.turn:
        raise EdgegymError(
            f"GET /v1/episodes/{page.episode_id}: next_from_turn {nxt} is not after from_turn {cursor} "
            f"and within the episode's {page.turn} turns",
            status=200,
            code="invalid_response",
        )
    return nxt


class _Operations:
    """The public methods, written once over ``_send``; each client supplies ``_send``."""

    def _send(self, call: _calls.Call[Any]) -> Any:  # pragma: no cover - replaced by subclasses
        raise NotImplementedError

    def _request(self, call: _calls.Call[Any]) -> httpx.Response:  # pragma: no cover - replaced by subclasses
        raise NotImplementedError

    def health(self) -> m.Health:
        """``GET /health`` (no auth)."""
        return self._send(_calls.health())

    def envs(self) -> m.EnvList:
        """``GET /v1/envs``: every environment the server runs."""
        return self._send(_calls.envs())

    def env(self, env_id: str) -> m.EnvInfo:
        """``GET /v1/envs/{env_id}``."""
        return self._send(_calls.env(env_id))

    def examples(self, env_id: str, split: str = "train", offset: int = 0, limit: int = 20) -> m.ExamplePage:
        """``GET /v1/envs/{env_id}/examples``: a page of tasks as the model sees them."""
        return self._send(_calls.examples(env_id, split, offset, limit))

    def reset(
        self,
        env_id: str,
        *,
        split: str | None = None,
        index: int | None = None,
        seed: int | None = None,
        args: dict[str, Any] | None = None,
        ttl_seconds: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> m.ResetResponse:
        """``POST /v1/envs/{env_id}/episodes``: start an episode.

        Without ``idempotency_key`` one is generated for this call, so its retries are
        safe; pass your own to make a reset safe across processes or restarts.
        """
        return self._send(
            _calls.reset(
                env_id,
                split=split,
                index=index,
                seed=seed,
                args=args,
                ttl_seconds=ttl_seconds,
                metadata=metadata,
                idempotency_key=idempotency_key,
            )
        )

    def step(
        self,
        episode_id: str,
        turn: int,
        message: m.AssistantMessage | dict[str, Any],
        sampled: m.SampledTokens | dict[str, Any] | None = None,
    ) -> m.StepResponse:
        """``POST /v1/episodes/{id}/step``: one assistant message (tool calls included) at ``turn``.

        ``sampled`` (optional): what the trainer sampled for ``message``, as
        ``SampledTokens`` or a dict ``{"token_ids": [...], "logprobs": [...],
        "template_hash": "sha256:…"}``. The server stores it with the turn and returns it
        with the episode (``Episode.turns[].sampled``); when its ``template_hash`` differs
        from the episode's previous one, the reply carries ``template_change``.
        """
        return self._send(_calls.step(episode_id, turn, message, sampled))

    def score(self, episode_id: str) -> m.ScoreResponse:
        """``POST /v1/episodes/{id}/score``: run the rubric (stored; scoring again returns the same)."""
        return self._send(_calls.score(episode_id))

    def rescore(self, episode_id: str, *, rubric: m.RescoreRubric = "episode", save: bool = False) -> m.RescoreResponse:
        """``POST /v1/episodes/{id}/rescore``: score the stored transcript again, with the
        episode's own rubric or (``rubric="current"``) the one the server runs now. No tool
        or model runs; the stored score is replaced only with ``save=True``."""
        return self._send(_calls.rescore(episode_id, rubric=rubric, save=save))

    def episode(self, episode_id: str, *, from_turn: int | None = None, limit: int | None = None) -> m.Episode:
        """``GET /v1/episodes/{id}``: transcript, status, score, per-turn sampled tokens.

        Without ``from_turn`` and ``limit`` the whole transcript comes back. With them, one
        page: turns ``from_turn`` … ``from_turn + limit - 1`` (``limit`` 1–1000), and
        ``next_from_turn`` says where the next page starts (None at the end). Turn 0 is the
        opening messages; turn t ≥ 1 is the t-th assistant message and the reply to it.
        """
        return self._send(_calls.episode(episode_id, from_turn, limit))

    def episode_pages(self, episode_id: str, *, from_turn: int = 0, page_turns: int = 100) -> Iterator[m.Episode]:
        """Every page of an episode's transcript from ``from_turn`` on, ``page_turns`` turns a
        page, following ``next_from_turn`` until the end. Each page is a full ``Episode``
        (status and score as of that read); a long episode is read without holding its
        whole transcript in one response.
        """
        cursor: int | None = from_turn
        while cursor is not None:
            page = self._send(_calls.episode(episode_id, cursor, page_turns))
            yield page
            cursor = _next_cursor(page, cursor)

    def fork(
        self,
        episode_id: str,
        turn: int | None = None,
        n: int = 1,
        *,
        ttl_seconds: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> m.ForkResponse:
        """``POST /v1/episodes/{id}/fork``: start ``n`` (1–64) new episodes from the state
        after ``turn`` (default: the episode's current turn; 0: right after reset).

        Each new episode is active at ``ForkResponse.turn`` (send it with its first step),
        its transcript starts with the parent's turns 0…turn, and it is stepped, scored,
        closed and forked on its own; the parent is not changed. Without
        ``idempotency_key`` one is generated for this call, so its retries never start a
        second set; pass your own to make a fork safe across processes or restarts.
        """
        return self._send(
            _calls.fork(episode_id, turn=turn, n=n, ttl_seconds=ttl_seconds, metadata=metadata, idempotency_key=idempotency_key)
        )

    def forks(self, episode_id: str, *, limit: int | None = None, cursor: str | None = None) -> m.ForkList:
        """``GET /v1/episodes/{id}/forks``: one page of the episodes forked from this one
        (its direct children, oldest first), each with its fork turn, current turn, status
        and reward (None while unscored).

        ``limit`` is 1–200 (server default 50). Pass the page's ``next_cursor`` as ``cursor``
        for the next page; it is None on the last. Another tenant's episode raises
        ``NotFoundError`` as an unknown id does.
        """
        return self._send(_calls.forks(episode_id, limit, cursor))

    def close_episode(self, episode_id: str) -> m.CloseResponse:
        """``DELETE /v1/episodes/{id}``: close an episode (idempotent)."""
        return self._send(_calls.close(episode_id))

    def score_completions(
        self,
        env_id: str,
        items: Iterable[m.ScoreItem | dict[str, Any]],
        *,
        args: dict[str, Any] | None = None,
        scale_advantages: bool = False,
    ) -> m.ScoreCompletionsResponse:
        """``POST /v1/envs/{env_id}/score``: stateless scoring; items sharing ``group`` get GRPO advantages."""
        return self._send(_calls.score_completions(env_id, items, args=args, scale_advantages=scale_advantages))

    # --- evaluation jobs ----------------------------------------------------------

    def create_eval(
        self,
        env_id: str | m.EvalRequest | dict[str, Any],
        *,
        model: str | None = None,
        num_examples: int | None = None,
        rollouts_per_example: int | None = None,
        max_concurrent: int | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        sampling_args: dict[str, Any] | None = None,
        env_args: dict[str, Any] | None = None,
        split: str | None = None,
        seed: int | None = None,
        max_retries: int | None = None,
        timeout_seconds: float | None = None,
        pass_threshold: float | None = None,
    ) -> m.EvalJob:
        """``POST /v1/evals``: start an evaluation job on the server's model endpoint.

        Pass an environment id and options as keywords (unset ones take the server's
        defaults), or one ``EvalRequest`` (or dict) alone. Sent once, never retried: the
        server has no idempotency key for jobs, so a repeat after a lost reply could start
        a second job. A 429 ``rate_limited`` (the server's model-request budget is in use)
        carries ``retry_after``.
        """
        options = dict(
            model=model,
            num_examples=num_examples,
            rollouts_per_example=rollouts_per_example,
            max_concurrent=max_concurrent,
            max_tokens=max_tokens,
            temperature=temperature,
            sampling_args=sampling_args,
            env_args=env_args,
            split=split,
            seed=seed,
            max_retries=max_retries,
            timeout_seconds=timeout_seconds,
            pass_threshold=pass_threshold,
        )
        return self._send(_calls.create_eval(_calls.eval_request(env_id, options)))

    def evals(self, *, status: str | None = None, limit: int | None = None) -> m.EvalJobList:
        """``GET /v1/evals``: jobs, newest first (server default: 50), optionally of one status."""
        return self._send(_calls.evals(status, limit))

    def eval(self, eval_id: str) -> m.EvalJob:
        """``GET /v1/evals/{id}``: status, progress, and the summary once the job has ended."""
        return self._send(_calls.eval_job(eval_id))

    def cancel_eval(self, eval_id: str) -> m.EvalJob:
        """``POST /v1/evals/{id}/cancel`` (idempotent): stored rollouts are kept and summarised."""
        return self._send(_calls.cancel_eval(eval_id))

    def delete_eval(self, eval_id: str) -> m.EvalDeleteResponse:
        """``DELETE /v1/evals/{id}``: remove an ended job and all its stored rollouts (save
        them first with ``eval_results``). A queued or running job raises ``EdgegymError``
        409 ``eval_running``: ``cancel_eval`` it first. Sent once, never retried (a repeat
        would answer 404 ``eval_not_found``)."""
        return self._send(_calls.delete_eval(eval_id))

    def eval_results(self, eval_id: str, *, offset: int = 0, limit: int | None = None) -> list[m.EvalRollout]:
        """``GET /v1/evals/{id}/results``: the stored rollouts in (example_id, rollout_index)
        order, parsed from JSONL. Readable while the job runs (then: the rollouts so far)."""
        call = _calls.eval_results(eval_id, offset, limit)
        return parse_lines(call, self._request(call))


class Client(_Operations):
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
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout or DEFAULT_TIMEOUT)
        self._headers = _headers(api_key)

    def _send(self, call: _calls.Call[T]) -> T:
        return _parse(call, self._request(call))

    def _request(self, call: _calls.Call[Any]) -> httpx.Response:
        """Sends ``call``, retrying it when it is idempotent; the successful response, body read."""
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            error: BaseException | None = None
            try:
                response = self._http.request(
                    call.method,
                    self.base_url + call.path,
                    json=call.json,
                    params=call.params,
                    headers={**self._headers, **call.headers},
                )
            except httpx.TransportError as exc:
                error = exc
            if response is not None and response.is_success:
                return response
            wait = _retry_wait(call, response, error, self.retry, attempt, started)
            if wait is None:
                raise _failure(call, response, error, started) from error
            time.sleep(wait)

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
                with connect_sse(self._http, call.method, self.base_url + call.path, headers={**self._headers, **call.headers}) as source:
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


class AsyncClient:
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
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=timeout or DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self._headers = _headers(api_key)
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
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            error: BaseException | None = None
            try:
                response = await self._http.request(
                    call.method,
                    self.base_url + call.path,
                    json=call.json,
                    params=call.params,
                    headers={**self._headers, **call.headers},
                )
            except httpx.TransportError as exc:
                error = exc
            if response is not None and response.is_success:
                return response
            wait = _retry_wait(call, response, error, self.retry, attempt, started)
            if wait is None:
                raise _failure(call, response, error, started) from error
            await asyncio.sleep(wait)

    async def health(self) -> m.Health:
        return await self._send(_calls.health())

    async def envs(self) -> m.EnvList:
        return await self._send(_calls.envs())

    async def env(self, env_id: str) -> m.EnvInfo:
        return await self._send(_calls.env(env_id))

    async def examples(self, env_id: str, split: str = "train", offset: int = 0, limit: int = 20) -> m.ExamplePage:
        return await self._send(_calls.examples(env_id, split, offset, limit))

    async def reset(
        self,
        env_id: str,
        *,
        split: str | None = None,
        index: int | None = None,
        seed: int | None = None,
        args: dict[str, Any] | None = None,
        ttl_seconds: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> m.ResetResponse:
        return await self._send(
            _calls.reset(
                env_id,
                split=split,
                index=index,
                seed=seed,
                args=args,
                ttl_seconds=ttl_seconds,
                metadata=metadata,
                idempotency_key=idempotency_key,
            )
        )

    async def step(
        self,
        episode_id: str,
        turn: int,
        message: m.AssistantMessage | dict[str, Any],
        sampled: m.SampledTokens | dict[str, Any] | None = None,
    ) -> m.StepResponse:
        """``POST /v1/episodes/{id}/step``: one assistant message (tool calls included) at ``turn``.

        ``sampled`` (optional): what the trainer sampled for ``message``, as
        ``SampledTokens`` or a dict ``{"token_ids": [...], "logprobs": [...],
        "template_hash": "sha256:…"}``. The server stores it with the turn and returns it
        with the episode (``Episode.turns[].sampled``); when its ``template_hash`` differs
        from the episode's previous one, the reply carries ``template_change``.
        """
        return await self._send(_calls.step(episode_id, turn, message, sampled))

    async def score(self, episode_id: str) -> m.ScoreResponse:
        """``POST /v1/episodes/{id}/score``: run the rubric (stored; scoring again returns the same)."""
        return await self._send(_calls.score(episode_id))

    async def rescore(self, episode_id: str, *, rubric: m.RescoreRubric = "episode", save: bool = False) -> m.RescoreResponse:
        """``POST /v1/episodes/{id}/rescore``: score the stored transcript again, with the
        episode's own rubric or (``rubric="current"``) the one the server runs now. No tool
        or model runs; the stored score is replaced only with ``save=True``."""
        return await self._send(_calls.rescore(episode_id, rubric=rubric, save=save))

    async def episode(self, episode_id: str, *, from_turn: int | None = None, limit: int | None = None) -> m.Episode:
        """``GET /v1/episodes/{id}``: transcript, status, score, per-turn sampled tokens.

        Without ``from_turn`` and ``limit`` the whole transcript comes back. With them, one
        page: turns ``from_turn`` … ``from_turn + limit - 1`` (``limit`` 1–1000), and
        ``next_from_turn`` says where the next page starts (None at the end). Turn 0 is the
        opening messages; turn t ≥ 1 is the t-th assistant message and the reply to it.
        """
        return await self._send(_calls.episode(episode_id, from_turn, limit))

    async def episode_pages(self, episode_id: str, *, from_turn: int = 0, page_turns: int = 100) -> AsyncIterator[m.Episode]:
        """Every page of an episode's transcript from ``from_turn`` on, ``page_turns`` turns a
        page, following ``next_from_turn`` until the end. Each page is a full ``Episode``
        (status and score as of that read); a long episode is read without holding its
        whole transcript in one response.
        """
        cursor: int | None = from_turn
        while cursor is not None:
            page = await self._send(_calls.episode(episode_id, cursor, page_turns))
            yield page
            cursor = _next_cursor(page, cursor)

    async def fork(
        self,
        episode_id: str,
        turn: int | None = None,
        n: int = 1,
        *,
        ttl_seconds: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> m.ForkResponse:
        """``POST /v1/episodes/{id}/fork``: start ``n`` (1–64) new episodes from the state
        after ``turn`` (default: the episode's current turn; 0: right after reset).

        Each new episode is active at ``ForkResponse.turn`` (send it with its first step),
        its transcript starts with the parent's turns 0…turn, and it is stepped, scored,
        closed and forked on its own; the parent is not changed. Without
        ``idempotency_key`` one is generated for this call, so its retries never start a
        second set; pass your own to make a fork safe across processes or restarts.
        """
        return await self._send(
            _calls.fork(episode_id, turn=turn, n=n, ttl_seconds=ttl_seconds, metadata=metadata, idempotency_key=idempotency_key)
        )

    async def forks(self, episode_id: str, *, limit: int | None = None, cursor: str | None = None) -> m.ForkList:
        """``GET /v1/episodes/{id}/forks``: one page of the episodes forked from this one
        (its direct children, oldest first), each with its fork turn, current turn, status
        and reward (None while unscored).

        ``limit`` is 1–200 (server default 50). Pass the page's ``next_cursor`` as ``cursor``
        for the next page; it is None on the last. Another tenant's episode raises
        ``NotFoundError`` as an unknown id does.
        """
        return await self._send(_calls.forks(episode_id, limit, cursor))

    async def close_episode(self, episode_id: str) -> m.CloseResponse:
        """``DELETE /v1/episodes/{id}``: close an episode (idempotent)."""
        return await self._send(_calls.close(episode_id))

    async def close(self, episode_id: str) -> m.CloseResponse:
        """Deprecated: use ``close_episode(episode_id)`` (``aclose()`` closes the client)."""
        warnings.warn("AsyncClient.close(episode_id) is deprecated: use close_episode(episode_id)", DeprecationWarning, stacklevel=2)
        return await self.close_episode(episode_id)

    async def score_completions(
        self,
        env_id: str,
        items: Iterable[m.ScoreItem | dict[str, Any]],
        *,
        args: dict[str, Any] | None = None,
        scale_advantages: bool = False,
    ) -> m.ScoreCompletionsResponse:
        return await self._send(_calls.score_completions(env_id, items, args=args, scale_advantages=scale_advantages))

    # --- evaluation jobs ----------------------------------------------------------

    async def create_eval(
        self,
        env_id: str | m.EvalRequest | dict[str, Any],
        *,
        model: str | None = None,
        num_examples: int | None = None,
        rollouts_per_example: int | None = None,
        max_concurrent: int | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        sampling_args: dict[str, Any] | None = None,
        env_args: dict[str, Any] | None = None,
        split: str | None = None,
        seed: int | None = None,
        max_retries: int | None = None,
        timeout_seconds: float | None = None,
        pass_threshold: float | None = None,
    ) -> m.EvalJob:
        options = dict(
            model=model,
            num_examples=num_examples,
            rollouts_per_example=rollouts_per_example,
            max_concurrent=max_concurrent,
            max_tokens=max_tokens,
            temperature=temperature,
            sampling_args=sampling_args,
            env_args=env_args,
            split=split,
            seed=seed,
            max_retries=max_retries,
            timeout_seconds=timeout_seconds,
            pass_threshold=pass_threshold,
        )
        return await self._send(_calls.create_eval(_calls.eval_request(env_id, options)))

    async def evals(self, *, status: str | None = None, limit: int | None = None) -> m.EvalJobList:
        return await self._send(_calls.evals(status, limit))

    async def eval(self, eval_id: str) -> m.EvalJob:
        return await self._send(_calls.eval_job(eval_id))

    async def cancel_eval(self, eval_id: str) -> m.EvalJob:
        return await self._send(_calls.cancel_eval(eval_id))

    async def delete_eval(self, eval_id: str) -> m.EvalDeleteResponse:
        return await self._send(_calls.delete_eval(eval_id))

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
                async with aconnect_sse(self._http, call.method, self.base_url + call.path, headers={**self._headers, **call.headers}) as source:
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
