"""Every protocol operation as a transport-free description (method, path, body,
whether it may be retried, what it returns). The sync and async clients both send
these, so the two can never drift apart."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, Iterable, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from . import models as m

T = TypeVar("T", bound=BaseModel)

#: Most turns one page of ``GET /v1/episodes/{id}`` holds (the server's ``MAX_PAGE_TURNS``).
MAX_PAGE_TURNS = 1000
#: Most forks one page of ``GET /v1/episodes/{id}/forks`` holds (the server's ``MAX_FORKS_PAGE``).
MAX_FORKS_PAGE = 200


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    returns: type[T]
    #: Safe to send again: the server answers a repeat the same way without applying it twice.
    idempotent: bool
    json: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: The same request as a ``/v1/ws`` frame (without its id), for the operations the session
    #: socket carries (docs/websocket.md); None for the rest, which go over HTTP.
    socket: dict[str, Any] | None = None


#: A path segment that needs no quoting (every id the server makes): checked before ``quote``,
#: which is most of the cost of building a step call that then goes over the socket.
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_.~-]+")


def _seg(value: str) -> str:
    return value if _PLAIN_SEGMENT.fullmatch(value) else quote(value, safe="")


def envs() -> Call[m.EnvList]:
    return Call("GET", "/v1/envs", m.EnvList, idempotent=True)


def env(env_id: str) -> Call[m.EnvInfo]:
    return Call("GET", f"/v1/envs/{_seg(env_id)}", m.EnvInfo, idempotent=True)


def examples(env_id: str, split: str, offset: int, limit: int) -> Call[m.ExamplePage]:
    return Call(
        "GET",
        f"/v1/envs/{_seg(env_id)}/examples",
        m.ExamplePage,
        idempotent=True,
        params={"split": split, "offset": offset, "limit": limit},
    )


def reset(
    env_id: str,
    *,
    split: str | None,
    index: int | None,
    seed: int | None,
    args: dict[str, Any] | None,
    ttl_seconds: int | None,
    metadata: dict[str, Any] | None,
    idempotency_key: str | None,
    agent: m.AgentSpec | dict[str, Any] | None = None,
    seats: dict[str, str] | None = None,
) -> Call[m.ResetResponse]:
    spec = agent if agent is None or isinstance(agent, m.AgentSpec) else m.AgentSpec.model_validate(agent)
    body = m.ResetRequest(split=split, index=index, seed=seed, args=args, ttl_seconds=ttl_seconds, metadata=metadata, agent=spec, seats=seats)
    # One key per logical reset, made before the first attempt: every retry carries it,
    # so a reset whose reply was lost comes back as the same episode, never a second one.
    key = idempotency_key or f"edgegym-py-{uuid.uuid4().hex}"
    json = body.model_dump(exclude_none=True)
    return Call(
        "POST",
        f"/v1/envs/{_seg(env_id)}/episodes",
        m.ResetResponse,
        idempotent=True,
        json=json,
        headers={"Idempotency-Key": key},
        # A harness reset goes over HTTP: the server builds the episode's endpoint URLs from
        # the request's origin, which a socket frame does not carry.
        socket=None if spec is not None else {"op": "reset", "env_id": env_id, "body": json, "idempotency_key": key},
    )


def step(
    episode_id: str,
    turn: int,
    message: m.AssistantMessage | dict[str, Any],
    sampled: m.SampledTokens | dict[str, Any] | None = None,
    seat: str | None = None,
) -> Call[m.StepResponse]:
    msg = message if isinstance(message, m.AssistantMessage) else m.AssistantMessage.model_validate(message)
    tokens = sampled if sampled is None or isinstance(sampled, m.SampledTokens) else m.SampledTokens.model_validate(sampled)
    if tokens is not None and tokens.logprobs is not None and len(tokens.logprobs) != len(tokens.token_ids):
        # The server refuses it too (400); saying so here names the caller's bug before a round trip.
        raise ValueError(f"sampled: {len(tokens.logprobs)} logprobs for {len(tokens.token_ids)} token ids")
    body = m.StepRequest(turn=turn, message=msg, sampled=tokens, seat=seat)
    # The turn makes a repeat safe: the server answers a step it already applied with the
    # stored reply, byte for byte (and keeps the first request's ``sampled``).
    json = body.model_dump(exclude_none=True)
    return Call(
        "POST",
        f"/v1/episodes/{_seg(episode_id)}/step",
        m.StepResponse,
        idempotent=True,
        json=json,
        socket={"op": "step", "episode_id": episode_id, "body": json},
    )


def score(episode_id: str) -> Call[m.ScoreResponse]:
    return Call(
        "POST",
        f"/v1/episodes/{_seg(episode_id)}/score",
        m.ScoreResponse,
        idempotent=True,
        socket={"op": "score", "episode_id": episode_id},
    )


def rescore(episode_id: str, *, rubric: m.RescoreRubric, save: bool) -> Call[m.RescoreResponse]:
    body = m.RescoreRequest(rubric=rubric, save=save)
    # Without save it changes nothing; with it, a repeat stores the same score again.
    return Call(
        "POST",
        f"/v1/episodes/{_seg(episode_id)}/rescore",
        m.RescoreResponse,
        idempotent=True,
        json=body.model_dump(),
    )


def episode(episode_id: str, from_turn: int | None = None, limit: int | None = None, seat: str | None = None) -> Call[m.Episode]:
    if from_turn is not None and from_turn < 0:
        raise ValueError(f"from_turn must be >= 0, not {from_turn}")
    if limit is not None and not 1 <= limit <= MAX_PAGE_TURNS:
        raise ValueError(f"limit must be 1..{MAX_PAGE_TURNS}, not {limit}")
    params = {k: v for k, v in {"from_turn": from_turn, "limit": limit, "seat": seat}.items() if v is not None}
    frame: dict[str, Any] = {"op": "get", "episode_id": episode_id}
    if params:
        frame["query"] = params
    return Call("GET", f"/v1/episodes/{_seg(episode_id)}", m.Episode, idempotent=True, params=params or None, socket=frame)


def fork(
    episode_id: str,
    *,
    turn: int | None,
    n: int,
    ttl_seconds: int | None,
    metadata: dict[str, Any] | None,
    idempotency_key: str | None,
) -> Call[m.ForkResponse]:
    body = m.ForkRequest(turn=turn, n=n, ttl_seconds=ttl_seconds, metadata=metadata)
    # As for reset: one key per logical fork, so a fork whose reply was lost comes back as
    # the same n episodes on retry, never 2n.
    key = idempotency_key or f"edgegym-py-{uuid.uuid4().hex}"
    return Call(
        "POST",
        f"/v1/episodes/{_seg(episode_id)}/fork",
        m.ForkResponse,
        idempotent=True,
        json=body.model_dump(exclude_none=True),
        headers={"Idempotency-Key": key},
    )


def forks(episode_id: str, limit: int | None = None, cursor: str | None = None) -> Call[m.ForkList]:
    if limit is not None and not 1 <= limit <= MAX_FORKS_PAGE:
        raise ValueError(f"limit must be 1..{MAX_FORKS_PAGE}, not {limit}")
    params = {k: v for k, v in {"limit": limit, "cursor": cursor}.items() if v is not None}
    return Call("GET", f"/v1/episodes/{_seg(episode_id)}/forks", m.ForkList, idempotent=True, params=params or None)


def close(episode_id: str) -> Call[m.CloseResponse]:
    return Call(
        "DELETE",
        f"/v1/episodes/{_seg(episode_id)}",
        m.CloseResponse,
        idempotent=True,
        socket={"op": "close", "episode_id": episode_id},
    )


def score_completions(
    env_id: str,
    items: Iterable[m.ScoreItem | dict[str, Any]],
    *,
    args: dict[str, Any] | None,
    scale_advantages: bool,
) -> Call[m.ScoreCompletionsResponse]:
    parsed = [i if isinstance(i, m.ScoreItem) else m.ScoreItem.model_validate(i) for i in items]
    body = m.ScoreCompletionsRequest(items=parsed, args=args, scale_advantages=scale_advantages)
    # Stateless and pure: repeating it changes nothing on the server.
    return Call(
        "POST",
        f"/v1/envs/{_seg(env_id)}/score",
        m.ScoreCompletionsResponse,
        idempotent=True,
        json=body.model_dump(exclude_none=True),
    )


def health() -> Call[m.Health]:
    return Call("GET", "/health", m.Health, idempotent=True)


# --- evaluation jobs --------------------------------------------------------------


def create_eval(request: m.EvalRequest) -> Call[m.EvalJob]:
    # Not idempotent: the server takes no Idempotency-Key here, so a repeat after a lost
    # reply would start a second job. Sent once; a failure is the caller's to handle.
    return Call("POST", "/v1/evals", m.EvalJob, idempotent=False, json=request.model_dump(exclude_none=True))


def evals(status: str | None, limit: int | None) -> Call[m.EvalJobList]:
    params = {k: v for k, v in {"status": status, "limit": limit}.items() if v is not None}
    return Call("GET", "/v1/evals", m.EvalJobList, idempotent=True, params=params or None)


def eval_job(eval_id: str) -> Call[m.EvalJob]:
    return Call("GET", f"/v1/evals/{_seg(eval_id)}", m.EvalJob, idempotent=True)


def cancel_eval(eval_id: str) -> Call[m.EvalJob]:
    # The server makes cancelling idempotent: a repeat answers the cancelled (or ended) job.
    return Call("POST", f"/v1/evals/{_seg(eval_id)}/cancel", m.EvalJob, idempotent=True)


def delete_eval(eval_id: str) -> Call[m.EvalDeleteResponse]:
    # Not retried: a repeat after a lost reply would find the job gone and answer 404
    # eval_not_found, hiding that the first attempt worked. Sent once.
    return Call("DELETE", f"/v1/evals/{_seg(eval_id)}", m.EvalDeleteResponse, idempotent=False)


def eval_events(eval_id: str) -> Call[m.EvalProgressEvent]:
    # A read: reconnecting starts again from the job's current progress.
    return Call("GET", f"/v1/evals/{_seg(eval_id)}/events", m.EvalProgressEvent, idempotent=True)


def eval_results(eval_id: str, offset: int, limit: int | None) -> Call[m.EvalRollout]:
    """Answered as JSONL: one ``returns`` per line."""
    params: dict[str, Any] = {"offset": offset}
    if limit is not None:
        params["limit"] = limit
    return Call("GET", f"/v1/evals/{_seg(eval_id)}/results", m.EvalRollout, idempotent=True, params=params)


def eval_request(
    env_id: str | m.EvalRequest | dict[str, Any],
    options: dict[str, Any],
) -> m.EvalRequest:
    """An EvalRequest from an env id plus keyword options, or from a whole request (then no options)."""
    given = {k: v for k, v in options.items() if v is not None}
    if isinstance(env_id, str):
        return m.EvalRequest(env_id=env_id, **given)
    if given:
        raise TypeError(f"create_eval: pass options either in the request or as keywords, not both ({sorted(given)})")
    return env_id if isinstance(env_id, m.EvalRequest) else m.EvalRequest.model_validate(env_id)
