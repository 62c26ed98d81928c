"""The operations ``Client`` and ``AsyncClient`` share, each written once.

An operation is a method that turns its arguments into a ``_calls.Call``; ``@operation``
makes it, on the sync client, a method that sends the call and returns the parsed reply,
and on the async one a coroutine that awaits the same. Name, parameters and docstring are
the one definition's on both, so the two clients cannot drift (tests/test_client_parity.py).
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable, Concatenate, Coroutine, Generic, Iterable, Iterator, ParamSpec, TypeVar, overload

from . import _calls
from . import models as m
from ._events import parse_lines
from ._retry import RetryPolicy
from ._version import __version__
from .errors import EdgegymError

def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": f"edgegym-python/{__version__}"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


P = ParamSpec("P")
R = TypeVar("R")


class operation(Generic[P, R]):  # noqa: N801 - used as a decorator
    """A descriptor: ``build`` on the class, a sending method on each client."""

    def __init__(self, build: Callable[Concatenate[Any, P], _calls.Call[Any]]) -> None:
        self.build = build
        self._methods: dict[bool, Callable[..., Any]] = {}

    def _method(self, awaits: bool) -> Callable[..., Any]:
        if awaits not in self._methods:
            build = self.build
            if awaits:

                async def method(client: Any, *args: Any, **kwargs: Any) -> Any:
                    return await client._send(build(client, *args, **kwargs))
            else:

                def method(client: Any, *args: Any, **kwargs: Any) -> Any:
                    return client._send(build(client, *args, **kwargs))

            functools.update_wrapper(method, build)
            # help() and IDEs show the reply's type, not the call description's.
            signature = inspect.signature(build)
            returns = signature.return_annotation
            if isinstance(returns, str) and returns.startswith("_calls.Call[") and returns.endswith("]"):
                returns = returns[len("_calls.Call[") : -1]
            method.__signature__ = signature.replace(return_annotation=returns)  # type: ignore[attr-defined]
            method.__annotations__ = {**build.__annotations__, "return": returns}
            self._methods[awaits] = method
        return self._methods[awaits]

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[..., Any]: ...
    @overload
    def __get__(self, obj: AsyncOperations, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, R]]: ...
    @overload
    def __get__(self, obj: SyncOperations, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        method = self._method(issubclass(owner, AsyncOperations))
        return method if obj is None else types.MethodType(method, obj)


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
    """The public methods, written once: each ``@operation`` builds its call, the client
    subclass sends it (``SyncOperations`` returns the reply, ``AsyncOperations`` awaits it)."""

    base_url: str
    retry: RetryPolicy
    _headers: dict[str, str]

    _owns_http: bool

    def _setup(self, base_url: str, api_key: str | None, retry: RetryPolicy | None, *, owns_http: bool) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._owns_http = owns_http
        self._headers = _headers(api_key)

    def _send(self, call: _calls.Call[Any]) -> Any:  # pragma: no cover - replaced by subclasses
        raise NotImplementedError

    def _request(self, call: _calls.Call[Any]) -> Any:  # pragma: no cover - replaced by subclasses
        raise NotImplementedError

    def _request_args(self, call: _calls.Call[Any]) -> dict[str, Any]:
        """What both clients' HTTP libraries take for ``call`` (httpx.Client / AsyncClient.request)."""
        return {
            "method": call.method,
            "url": self.base_url + call.path,
            "json": call.json,
            "params": call.params,
            "headers": {**self._headers, **call.headers},
        }

    @operation
    def health(self) -> _calls.Call[m.Health]:
        """``GET /health`` (no auth)."""
        return _calls.health()

    @operation
    def envs(self) -> _calls.Call[m.EnvList]:
        """``GET /v1/envs``: every environment the server runs."""
        return _calls.envs()

    @operation
    def env(self, env_id: str) -> _calls.Call[m.EnvInfo]:
        """``GET /v1/envs/{env_id}``."""
        return _calls.env(env_id)

    @operation
    def examples(self, env_id: str, split: str = "train", offset: int = 0, limit: int = 20) -> _calls.Call[m.ExamplePage]:
        """``GET /v1/envs/{env_id}/examples``: a page of tasks as the model sees them."""
        return _calls.examples(env_id, split, offset, limit)

    @operation
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
        agent: m.AgentSpec | dict[str, Any] | None = None,
        seats: dict[str, str] | None = None,
    ) -> _calls.Call[m.ResetResponse]:
        """``POST /v1/envs/{env_id}/episodes``: start an episode.

        Without ``idempotency_key`` one is generated for this call, so its retries are
        safe; pass your own to make a reset safe across processes or restarts.

        ``agent`` (a sandboxed environment such as ``harbor``): ``AgentSpec`` or a dict
        ``{"command", "upstream", "model", "timeout_seconds", "limits"?}``; the agent runs in
        the episode's container and each model call it makes is a turn. The reply carries
        ``model_endpoint`` (its key is given once: the server refuses to replay a harness
        reset, so a retry after a lost reply fails with ``idempotency_key_reused``). Sent
        over HTTP, never the session socket. See ``edgegym.rollouts.harness``.

        ``seats`` (a multi-player environment, ``EnvInfo.seats``): who plays each seat,
        ``"client"`` or one of the environment's ``policies``, e.g. ``{"o": "minimax"}``;
        seats left out take their default. The reply's ``to_play`` is the seat that moves
        first and ``messages`` its opening (a policy that moves first has already moved).
        """
        return _calls.reset(
            env_id,
            split=split,
            index=index,
            seed=seed,
            args=args,
            ttl_seconds=ttl_seconds,
            metadata=metadata,
            idempotency_key=idempotency_key,
            agent=agent,
            seats=seats,
        )

    @operation
    def step(
        self,
        episode_id: str,
        turn: int,
        message: m.AssistantMessage | dict[str, Any],
        sampled: m.SampledTokens | dict[str, Any] | None = None,
        *,
        seat: str | None = None,
    ) -> _calls.Call[m.StepResponse]:
        """``POST /v1/episodes/{id}/step``: one assistant message (tool calls included) at ``turn``.

        ``sampled`` (optional): what the trainer sampled for ``message``, as
        ``SampledTokens`` or a dict ``{"token_ids": [...], "logprobs": [...],
        "template_hash": "sha256:…"}``. The server stores it with the turn and returns it
        with the episode (``Episode.turns[].sampled``); when its ``template_hash`` differs
        from the episode's previous one, the reply carries ``template_change``.

        ``seat`` (a seated episode): the seat this message is for; it may be left out when
        a client plays one seat only. The reply's ``to_play`` is the seat that moves next
        and ``messages`` what that seat has been shown since its own last message (its
        whole opening before its first move); once done, ``to_play`` is None and
        ``messages`` the stepping seat's last view. ``turn`` is the episode's, shared by
        its seats. A seat stepping out of turn raises ``EdgegymError`` 409
        ``not_your_turn`` (``details["to_play"]``).
        """
        return _calls.step(episode_id, turn, message, sampled, seat)

    @operation
    def score(self, episode_id: str) -> _calls.Call[m.ScoreResponse]:
        """``POST /v1/episodes/{id}/score``: run the rubric (stored; scoring again returns the same)."""
        return _calls.score(episode_id)

    @operation
    def rescore(self, episode_id: str, *, rubric: m.RescoreRubric = "episode", save: bool = False) -> _calls.Call[m.RescoreResponse]:
        """``POST /v1/episodes/{id}/rescore``: score the stored transcript again, with the
        episode's own rubric or (``rubric="current"``) the one the server runs now. No tool
        or model runs; the stored score is replaced only with ``save=True``."""
        return _calls.rescore(episode_id, rubric=rubric, save=save)

    @operation
    def episode(self, episode_id: str, *, from_turn: int | None = None, limit: int | None = None, seat: str | None = None) -> _calls.Call[m.Episode]:
        """``GET /v1/episodes/{id}``: transcript, status, score, per-turn sampled tokens.

        Without ``from_turn`` and ``limit`` the whole transcript comes back. With them, one
        page: turns ``from_turn`` … ``from_turn + limit - 1`` (``limit`` 1–1000), and
        ``next_from_turn`` says where the next page starts (None at the end). Turn 0 is the
        opening messages; turn t ≥ 1 is the t-th assistant message and the reply to it.

        ``seat`` (a seated episode): that seat's own conversation (what it was shown and
        what it sent, without names), ready to train on; ``turns[t].message_count`` counts
        that seat's messages of turn t, and ``turns[t].sampled`` is what the seat that
        stepped turn t sampled. Without it, a seated episode's whole log (every message
        named for its seat) is answered only once the episode is done (409
        ``seat_required`` while it runs).
        """
        return _calls.episode(episode_id, from_turn, limit, seat)

    def episode_pages(self, episode_id: str, *, from_turn: int = 0, page_turns: int = 100, seat: str | None = None) -> Iterator[m.Episode]:
        """Every page of an episode's transcript from ``from_turn`` on, ``page_turns`` turns a
        page, following ``next_from_turn`` until the end. Each page is a full ``Episode``
        (status and score as of that read); a long episode is read without holding its
        whole transcript in one response. ``seat``: one seat's view, as ``episode``.
        """
        cursor: int | None = from_turn
        while cursor is not None:
            page = self._send(_calls.episode(episode_id, cursor, page_turns, seat))
            yield page
            cursor = _next_cursor(page, cursor)

    @operation
    def fork(
        self,
        episode_id: str,
        turn: int | None = None,
        n: int = 1,
        *,
        ttl_seconds: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> _calls.Call[m.ForkResponse]:
        """``POST /v1/episodes/{id}/fork``: start ``n`` (1–64) new episodes from the state
        after ``turn`` (default: the episode's current turn; 0: right after reset).

        Each new episode is active at ``ForkResponse.turn`` (send it with its first step),
        its transcript starts with the parent's turns 0…turn, and it is stepped, scored,
        closed and forked on its own; the parent is not changed. Without
        ``idempotency_key`` one is generated for this call, so its retries never start a
        second set; pass your own to make a fork safe across processes or restarts.
        """
        return _calls.fork(episode_id, turn=turn, n=n, ttl_seconds=ttl_seconds, metadata=metadata, idempotency_key=idempotency_key)

    @operation
    def forks(self, episode_id: str, *, limit: int | None = None, cursor: str | None = None) -> _calls.Call[m.ForkList]:
        """``GET /v1/episodes/{id}/forks``: one page of the episodes forked from this one
        (its direct children, oldest first), each with its fork turn, current turn, status
        and reward (None while unscored).

        ``limit`` is 1–200 (server default 50). Pass the page's ``next_cursor`` as ``cursor``
        for the next page; it is None on the last. Another tenant's episode raises
        ``NotFoundError`` as an unknown id does.
        """
        return _calls.forks(episode_id, limit, cursor)

    @operation
    def close_episode(self, episode_id: str) -> _calls.Call[m.CloseResponse]:
        """``DELETE /v1/episodes/{id}``: close an episode (idempotent)."""
        return _calls.close(episode_id)

    @operation
    def score_completions(
        self,
        env_id: str,
        items: Iterable[m.ScoreItem | dict[str, Any]],
        *,
        args: dict[str, Any] | None = None,
        scale_advantages: bool = False,
    ) -> _calls.Call[m.ScoreCompletionsResponse]:
        """``POST /v1/envs/{env_id}/score``: stateless scoring; items sharing ``group`` get GRPO advantages."""
        return _calls.score_completions(env_id, items, args=args, scale_advantages=scale_advantages)

    # --- evaluation jobs ----------------------------------------------------------

    @operation
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
    ) -> _calls.Call[m.EvalJob]:
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
        return _calls.create_eval(_calls.eval_request(env_id, options))

    @operation
    def evals(self, *, status: str | None = None, limit: int | None = None) -> _calls.Call[m.EvalJobList]:
        """``GET /v1/evals``: jobs, newest first (server default: 50), optionally of one status."""
        return _calls.evals(status, limit)

    @operation
    def eval(self, eval_id: str) -> _calls.Call[m.EvalJob]:
        """``GET /v1/evals/{id}``: status, progress, and the summary once the job has ended."""
        return _calls.eval_job(eval_id)

    @operation
    def cancel_eval(self, eval_id: str) -> _calls.Call[m.EvalJob]:
        """``POST /v1/evals/{id}/cancel`` (idempotent): stored rollouts are kept and summarised."""
        return _calls.cancel_eval(eval_id)

    @operation
    def delete_eval(self, eval_id: str) -> _calls.Call[m.EvalDeleteResponse]:
        """``DELETE /v1/evals/{id}``: remove an ended job and all its stored rollouts (save
        them first with ``eval_results``). A queued or running job raises ``EdgegymError``
        409 ``eval_running``: ``cancel_eval`` it first. Sent once, never retried (a repeat
        would answer 404 ``eval_not_found``)."""
        return _calls.delete_eval(eval_id)

    def eval_results(self, eval_id: str, *, offset: int = 0, limit: int | None = None) -> list[m.EvalRollout]:
        """``GET /v1/evals/{id}/results``: the stored rollouts in (example_id, rollout_index)
        order, parsed from JSONL. Readable while the job runs (then: the rollouts so far)."""
        call = _calls.eval_results(eval_id, offset, limit)
        return parse_lines(call, self._request(call))


class SyncOperations(_Operations):
    """Base of ``Client``: operations return their reply."""


class AsyncOperations(_Operations):
    """Base of ``AsyncClient``: operations are coroutines."""
