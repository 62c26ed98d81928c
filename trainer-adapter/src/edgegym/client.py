"""``Client`` and ``AsyncClient``: the edgegym protocol over httpx, one method per operation.

Both send the same call descriptions (``_calls``) and share the retry rules
(``_retry``); only the sending loop differs.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Iterable, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from . import _calls
from . import models as m
from ._retry import RETRYABLE_STATUS, RetryPolicy, is_retryable_exception, next_wait, parse_retry_after
from .errors import EdgegymError

T = TypeVar("T", bound=BaseModel)

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": "edgegym-python/0.1"}
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


class _Operations:
    """The public methods, written once over ``_send``; each client supplies ``_send``."""

    def _send(self, call: _calls.Call[Any]) -> Any:  # pragma: no cover - replaced by subclasses
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

    def step(self, episode_id: str, turn: int, message: m.AssistantMessage | dict[str, Any]) -> m.StepResponse:
        """``POST /v1/episodes/{id}/step``: one assistant message (tool calls included) at ``turn``."""
        return self._send(_calls.step(episode_id, turn, message))

    def score(self, episode_id: str) -> m.ScoreResponse:
        """``POST /v1/episodes/{id}/score``: run the rubric (stored; scoring again returns the same)."""
        return self._send(_calls.score(episode_id))

    def episode(self, episode_id: str) -> m.Episode:
        """``GET /v1/episodes/{id}``: transcript, status, score."""
        return self._send(_calls.episode(episode_id))

    def close(self, episode_id: str) -> m.CloseResponse:
        """``DELETE /v1/episodes/{id}`` (idempotent)."""
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
                return _parse(call, response)
            retryable = call.idempotent and (
                (error is not None and is_retryable_exception(error))
                or (response is not None and response.status_code in RETRYABLE_STATUS)
            )
            retry_after = parse_retry_after(response.headers.get("retry-after")) if response is not None else None
            wait = next_wait(self.retry, attempt, started, retry_after) if retryable else None
            if wait is None:
                raise _failure(call, response, error, started) from error
            time.sleep(wait)

    def close_client(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_client()


class AsyncClient:
    """Asynchronous client: the same methods as ``Client``, awaited.

    >>> async with AsyncClient("http://127.0.0.1:8787") as gym:
    ...     ep = await gym.reset("reverse-text", index=0)
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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=timeout or DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self._headers = _headers(api_key)

    async def _send(self, call: _calls.Call[T]) -> T:
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
                return _parse(call, response)
            retryable = call.idempotent and (
                (error is not None and is_retryable_exception(error))
                or (response is not None and response.status_code in RETRYABLE_STATUS)
            )
            retry_after = parse_retry_after(response.headers.get("retry-after")) if response is not None else None
            wait = next_wait(self.retry, attempt, started, retry_after) if retryable else None
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

    async def step(self, episode_id: str, turn: int, message: m.AssistantMessage | dict[str, Any]) -> m.StepResponse:
        return await self._send(_calls.step(episode_id, turn, message))

    async def score(self, episode_id: str) -> m.ScoreResponse:
        return await self._send(_calls.score(episode_id))

    async def episode(self, episode_id: str) -> m.Episode:
        return await self._send(_calls.episode(episode_id))

    async def close(self, episode_id: str) -> m.CloseResponse:
        return await self._send(_calls.close(episode_id))

    async def score_completions(
        self,
        env_id: str,
        items: Iterable[m.ScoreItem | dict[str, Any]],
        *,
        args: dict[str, Any] | None = None,
        scale_advantages: bool = False,
    ) -> m.ScoreCompletionsResponse:
        return await self._send(_calls.score_completions(env_id, items, args=args, scale_advantages=scale_advantages))

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
