"""Harness episodes as training data: an agent program (mini-swe-agent, Claude Code, …) ran
in the episode's sandbox and every call it made to the model went through the server's
per-episode endpoint, stored as one turn: ``turns[t].call`` (the request, the reply, the
status) and, from a vLLM upstream, ``turns[t].sampled`` (``prompt_token_ids``,
``token_ids``, ``logprobs``).

Each call is one sample: its prompt ids, then its completion ids (trained on) with their
logprobs. Calls are merged into one sequence while each call's ``prompt_token_ids`` starts
with the whole sequence so far (the previous prompt + completion, then whatever the harness
added, as tokens the upstream really saw): the new prompt tokens go in with mask 0 and
logprob 0.0, the new completion with mask 1. A call whose prompt does not extend the
sequence (the harness rewrote or trimmed its history, a chat template re-rendered an
earlier turn differently, a sub-agent started its own conversation) starts a new sequence.
Nothing is ever re-tokenised: every token is one the sampler saw or produced.

``harness_trajectories`` returns an episode's sequences as ``Trajectory`` objects (the
layout ``rebuild`` gives ordinary episodes); ``harness_rollouts`` the same as ``Rollout``
objects with the episode's reward on every one, which the GRPO trainer's ``train_on`` and
``collate`` take as they are; ``harness_group`` / ``assign_harness_advantages`` give GRPO
advantages per episode (not per sequence); ``HarnessCollector`` starts harness episodes,
waits for their agents, scores them and returns groups.

The functions take the episode as the JSON of ``GET /v1/episodes/{id}`` or as the
``models.Episode`` the client returns (``EpisodeTurn.call``, ``SampledTokens.prompt_token_ids``
and ``Episode.agent`` are in the models); ``read_harness_episode`` and ``wait_done`` return
JSON, so fields newer than the installed models are kept too.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Literal, Mapping, Sequence, Union

from pydantic import BaseModel

from .. import _calls
from .. import models as m
from .trajectory import Trajectory, TrajectoryUnavailable
from .types import Rollout, RolloutGroup, ScaleRewards, TaskRef, assign_advantages

#: What to do with a failed call (status not 2xx, or an error) that a successful call
#: follows: ``"raise"`` (``TrajectoryUnavailable``), or ``"skip"`` it when it carries no
#: tokens (the agent got no reply, so no token of it is in any later prompt; the next
#: call's prompt is checked against the sequence as any other). Failed calls after the
#: last successful one (an agent killed by its timeout or a call limit mid-call) are
#: always dropped.
FailedCalls = Literal["raise", "skip"]

#: An episode as the functions here take it: JSON (``read_harness_episode``) or the client's model.
EpisodeLike = Union[Mapping[str, Any], m.Episode]


def _as_json(episode: EpisodeLike) -> Mapping[str, Any]:
    if isinstance(episode, m.Episode):
        # Messages as the server sends them (no null fields), the rest as the models read it.
        return {**episode.model_dump(mode="json", by_alias=True), "messages": [m.message_dict(x) for x in episode.messages]}
    if isinstance(episode, BaseModel):
        return episode.model_dump(mode="json", by_alias=True)
    return episode


def _failed(call: Mapping[str, Any]) -> bool:
    status = call.get("status")
    return call.get("error") is not None or not (isinstance(status, int) and 200 <= status < 300)


def _error_text(call: Mapping[str, Any]) -> str:
    err = call.get("error")
    if isinstance(err, Mapping):
        err = err.get("message", err)
    return f"status {call.get('status')}" + (f": {err}" if err is not None else "")


def _cut_by_length(call: Mapping[str, Any]) -> bool:
    """The reply ended on its token limit (no stop), in whichever API the agent called."""
    reply = call.get("response")
    if not isinstance(reply, Mapping):
        return False
    wire = call.get("wire")
    if wire == "responses":
        return reply.get("status") == "incomplete"
    if wire == "messages":
        return reply.get("stop_reason") == "max_tokens"
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0].get("finish_reason") == "length"
    return False


def _messages_by_turn(episode: Mapping[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """``messages`` cut into turns by ``turns[].message_count`` (as ``split_turns`` does)."""
    messages = list(episode.get("messages") or [])
    turns = episode.get("turns") or []
    counted = sum(int(t.get("message_count", 0)) for t in turns)
    if counted != len(messages):
        return {}  # a partial read: the history is for inspection only, the tokens do not need it
    out: dict[int, list[dict[str, Any]]] = {}
    at = 0
    for t in turns:
        n = int(t.get("message_count", 0))
        out[int(t["turn"])] = [dict(x) for x in messages[at : at + n]]
        at += n
    return out


def _request_messages(call: Mapping[str, Any]) -> list[dict[str, Any]]:
    request = call.get("request")
    if not isinstance(request, Mapping):
        return []
    items = request.get("messages") if call.get("wire") != "responses" else request.get("input")
    return [dict(x) for x in items if isinstance(x, Mapping)] if isinstance(items, list) else []


def harness_trajectories(episode: EpisodeLike, *, failed_calls: FailedCalls = "raise") -> list[Trajectory]:
    """The token sequences of a harness episode's model calls, in call order.

    ``episode`` is the JSON of ``GET /v1/episodes/{id}`` with every page's ``turns`` and
    ``messages`` (``read_harness_episode`` reads it so), or that read as ``models.Episode``
    (one ``client.episode(id)`` without paging). Each ``Trajectory`` has
    ``prompt_ids`` (its first call's prompt), ``completion_ids`` (that call's completion,
    then for each merged call the prompt tokens it added (``env_mask`` 0, logprob 0.0) and
    its completion (``env_mask`` 1, the sampler's logprobs)), ``turn_spans`` (each call's
    completion in ``completion_ids``), ``turns`` (the episode turn of each span),
    ``completion_truncated`` (its last call's reply ended on the token limit) and
    ``history`` (its last call's request messages, then the assistant message stored for
    it; for inspection). ``completion_ids`` always ends on a model token.

    Raises ``TrajectoryUnavailable`` when a turn after 0 has no ``call`` (not a harness
    episode: use ``RolloutCollector.rollout_from_server``), when a successful call carries
    no ``token_ids`` or ``prompt_token_ids`` (its upstream returns no token ids: only a vLLM
    upstream does), when its logprobs are not one per token id, when a failed call comes
    before a successful one (see ``FailedCalls``), or when no call succeeded.
    """
    episode = _as_json(episode)
    episode_id = episode.get("episode_id", "?")
    turns = [t for t in (episode.get("turns") or []) if int(t.get("turn", 0)) >= 1]
    numbers = [int(t["turn"]) for t in turns]
    if numbers != sorted(set(numbers)):
        raise ValueError(f"episode {episode_id}: turns are not in order without repeats: {numbers[:20]}")
    for t in turns:
        if not isinstance(t.get("call"), Mapping):
            raise TrajectoryUnavailable(
                f"episode {episode_id}: turn {t['turn']} has no model call: not a harness episode "
                "(rebuild an ordinary episode with RolloutCollector.rollout_from_server)"
            )
    ok_at = [i for i, t in enumerate(turns) if not _failed(t["call"])]
    if not ok_at:
        raise TrajectoryUnavailable(f"episode {episode_id}: no successful model call ({len(turns)} calls)")
    last_ok = ok_at[-1]
    stored = _messages_by_turn(episode)

    out: list[Trajectory] = []
    seq: Trajectory | None = None
    seq_tokens: list[int] = []  # prompt_ids + completion_ids of ``seq``
    for i, t in enumerate(turns[: last_ok + 1]):
        n, call, sampled = int(t["turn"]), t["call"], t.get("sampled")
        if _failed(call):
            if failed_calls == "skip" and not (isinstance(sampled, Mapping) and sampled.get("token_ids")):
                continue
            nxt = next(int(u["turn"]) for u in turns[i + 1 :] if not _failed(u["call"]))
            raise TrajectoryUnavailable(
                f"episode {episode_id}: model call of turn {n} failed ({_error_text(call)}) and the agent went on "
                f"(turn {nxt} succeeded); pass failed_calls='skip' to train on the calls around it"
            )
        where = f"episode {episode_id}: model call of turn {n} (upstream {call.get('upstream')!r}, wire {call.get('wire')!r})"
        if not isinstance(sampled, Mapping) or not sampled.get("token_ids"):
            raise TrajectoryUnavailable(f"{where} carries no token ids: its upstream did not return them (a vLLM upstream does)")
        ids = [int(x) for x in sampled["token_ids"]]
        prompt = sampled.get("prompt_token_ids")
        if not prompt:
            raise TrajectoryUnavailable(f"{where} carries no prompt_token_ids: the sequence it continues cannot be checked")
        prompt = [int(x) for x in prompt]
        logprobs = sampled.get("logprobs")
        if not isinstance(logprobs, list) or len(logprobs) != len(ids):
            got = "none" if not isinstance(logprobs, list) else str(len(logprobs))
            raise TrajectoryUnavailable(f"{where} carries {got} logprobs for {len(ids)} token ids")

        if seq is None or prompt[: len(seq_tokens)] != seq_tokens:
            seq = Trajectory(prompt_ids=prompt)
            out.append(seq)
            seq_tokens = list(prompt)
        else:
            delta = prompt[len(seq_tokens) :]
            seq.completion_ids.extend(delta)
            seq.logprobs.extend([0.0] * len(delta))
            seq.env_mask.extend([0] * len(delta))
            seq_tokens.extend(delta)
        start = len(seq.completion_ids)
        seq.completion_ids.extend(ids)
        seq.logprobs.extend(float(x) for x in logprobs)
        seq.env_mask.extend([1] * len(ids))
        seq.turn_spans.append((start, len(seq.completion_ids)))
        seq.turns.append(n)
        seq.completion_truncated = _cut_by_length(call)
        seq.history = _request_messages(call) + stored.get(n, [])[:1]
        seq_tokens.extend(ids)
    return out


def _task_of(episode: Mapping[str, Any]) -> TaskRef:
    return TaskRef(index=episode.get("index"), seed=episode.get("seed"), split=episode.get("split") or "train")


def harness_rollouts(
    episode: EpisodeLike,
    *,
    failed_calls: FailedCalls = "raise",
    task: TaskRef | None = None,
    policy_version: int = 0,
) -> list[Rollout]:
    """``harness_trajectories`` as ``Rollout`` objects, one per sequence, each carrying the
    episode's reward (``score.reward``), components and metrics, its id, stop reason and
    ``truncated``; ``turns`` is the number of calls in the sequence. A score that could not
    be given (``score.failure``) fails every rollout (``error``), as the collector does.

    Advantages are left at 0: set them per episode with ``assign_harness_advantages`` (or
    build the group with ``harness_group``). Raises ``ValueError`` while the episode is
    active or unscored (``wait_done`` waits and scores), and ``TrajectoryUnavailable`` as
    ``harness_trajectories`` does.
    """
    episode = _as_json(episode)
    episode_id = episode.get("episode_id")
    if episode.get("status") == "active":
        raise ValueError(f"episode {episode_id} is still active (its agent runs): wait for it first (wait_done)")
    score = episode.get("score")
    if not isinstance(score, Mapping):
        raise ValueError(f"episode {episode_id} is not scored: POST /v1/episodes/{episode_id}/score first (wait_done scores it)")
    trajectories = harness_trajectories(episode, failed_calls=failed_calls)
    components = {str(c["name"]): float(c["score"]) for c in score.get("components") or []}
    metrics = {str(k): float(v) for k, v in (score.get("metrics") or {}).items()}
    # A component that could not be scored (verifier timeout, no reward file): ``Score.failure``.
    failure = m.Score.model_validate(score).failure
    out: list[Rollout] = []
    for traj in trajectories:
        out.append(
            Rollout(
                env_id=str(episode.get("env_id", "")),
                task=task or _task_of(episode),
                episode_id=episode_id,
                index=episode.get("index"),
                seed=episode.get("seed"),
                prompt_ids=traj.prompt_ids,
                completion_ids=traj.completion_ids,
                logprobs=traj.logprobs,
                env_mask=traj.env_mask,
                messages=traj.history,
                turns=len(traj.turns),
                reward=float(score["reward"]),
                components=dict(components),
                metrics=dict(metrics),
                truncated=bool(episode.get("truncated", False)),
                completion_truncated=traj.completion_truncated,
                stop_reason=episode.get("stop_reason"),
                error=f"score_failed: {failure}" if failure is not None else None,
                policy_version=policy_version,
                turn_spans=traj.turn_spans,
            )
        )
    return out


def assign_harness_advantages(groups: Sequence[RolloutGroup], scale: ScaleRewards = "group", eps: float = 1e-4) -> None:
    """GRPO advantages over episodes, not sequences: the rollouts of one episode (same
    ``episode_id``) count once in their group's mean and std (``assign_advantages``, TRL's
    rule), and each of them gets its episode's advantage. A failed episode (any of its
    rollouts not ``ok``) gets 0 on every rollout and is left out of the statistics."""
    episodes: list[list[list[Rollout]]] = []
    stand_ins: list[RolloutGroup] = []
    for g in groups:
        by_episode: dict[Any, list[Rollout]] = {}
        for r in g.rollouts:
            by_episode.setdefault(r.episode_id if r.episode_id is not None else id(r), []).append(r)
        members = list(by_episode.values())
        episodes.append(members)
        reps = []
        for rs in members:
            bad = next((r for r in rs if not r.ok), None)
            reps.append(Rollout(env_id=rs[0].env_id, task=g.task, reward=rs[0].reward, error=None if bad is None else (bad.error or "no reward")))
        stand_ins.append(RolloutGroup(task=g.task, rollouts=reps))
    assign_advantages(stand_ins, scale, eps)
    for members, stand_in in zip(episodes, stand_ins):
        for rs, rep in zip(members, stand_in.rollouts):
            for r in rs:
                r.advantage = rep.advantage


def harness_group(
    episodes: Sequence[EpisodeLike],
    *,
    task: TaskRef | None = None,
    failed_calls: FailedCalls = "raise",
    scale_rewards: ScaleRewards | None = "group",
    policy_version: int = 0,
) -> RolloutGroup:
    """One GRPO group from N harness episodes of the same task (JSON, read whole and
    scored): every sequence of every episode as a rollout (``harness_rollouts``). An episode
    that cannot be made into tokens, or is active or unscored, is one failed rollout
    (``error`` says why; no tokens), left out of training and of the statistics. Advantages
    are assigned per episode (``assign_harness_advantages``) unless ``scale_rewards`` is
    None (then do it over the whole batch, e.g. with ``"batch"``)."""
    episodes = [_as_json(ep) for ep in episodes]
    rollouts: list[Rollout] = []
    for ep in episodes:
        try:
            rollouts.extend(harness_rollouts(ep, failed_calls=failed_calls, task=task, policy_version=policy_version))
        except (TrajectoryUnavailable, ValueError) as exc:
            rollouts.append(
                Rollout(
                    env_id=str(ep.get("env_id", "")),
                    task=task or _task_of(ep),
                    episode_id=ep.get("episode_id"),
                    index=ep.get("index"),
                    seed=ep.get("seed"),
                    stop_reason=ep.get("stop_reason"),
                    error=f"{type(exc).__name__}: {exc}",
                    policy_version=policy_version,
                )
            )
    group = RolloutGroup(task=task or (_task_of(episodes[0]) if episodes else TaskRef(index=None, seed=None)), rollouts=rollouts)
    if scale_rewards is not None:
        assign_harness_advantages([group], scale_rewards)
    return group


# --- starting harness episodes and waiting for them (AsyncClient) ------------------------


async def _get_json(client: Any, call: _calls.Call[Any]) -> dict[str, Any]:
    """``call`` sent over HTTP with the client's retries, its reply as JSON (not parsed into
    a model, so fields newer than the installed models are kept)."""
    response = await client._request(call)
    return response.json()


async def start_harness_episode(
    client: Any,
    env_id: str,
    agent: Mapping[str, Any] | m.AgentSpec,
    *,
    split: str | None = None,
    index: int | None = None,
    seed: int | None = None,
    args: dict[str, Any] | None = None,
    ttl_seconds: int | None = None,
    metadata: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """``POST /v1/envs/{env_id}/episodes`` with ``agent`` (``{"command", "upstream",
    "model", "timeout_seconds", "limits"?}``): a reset whose agent starts in the episode's
    sandbox. Returns the reply JSON (``episode_id``, …, ``model_endpoint``); ``client.reset(…,
    agent=agent)`` is the same call with the reply as ``models.ResetResponse``. Sent over HTTP
    and retried as ``client.reset`` is, under one idempotency key (the server does not replay
    a harness reset: a retry after a lost reply fails with ``idempotency_key_reused``).
    ``client`` is an ``AsyncClient``."""
    spec = agent if isinstance(agent, m.AgentSpec) else dict(agent)
    call = _calls.reset(env_id, split=split, index=index, seed=seed, args=args, ttl_seconds=ttl_seconds, metadata=metadata, idempotency_key=idempotency_key, agent=spec)
    return await _get_json(client, call)


async def read_harness_episode(client: Any, episode_id: str, *, page_turns: int = 100) -> dict[str, Any]:
    """``GET /v1/episodes/{id}`` page by page: the last page's JSON with every page's
    ``turns`` and ``messages`` (turns 0 … end, in order)."""
    cursor: int | None = 0
    whole: dict[str, Any] | None = None
    turns: list[Any] = []
    messages: list[Any] = []
    while cursor is not None:
        page = await _get_json(client, _calls.episode(episode_id, cursor, page_turns))
        turns.extend(page.get("turns") or [])
        messages.extend(page.get("messages") or [])
        whole = page
        nxt = page.get("next_from_turn")
        if nxt is not None and not (cursor < nxt <= int(page.get("turn", nxt))):
            raise ValueError(f"episode {episode_id}: next_from_turn {nxt} does not move on from {cursor}")
        cursor = nxt
    assert whole is not None
    numbers = [int(t["turn"]) for t in turns]
    if numbers != list(range(len(numbers))):
        raise ValueError(f"episode {episode_id}: turns read are not 0…{len(numbers) - 1} in order")
    return {**whole, "from_turn": 0, "next_from_turn": None, "turns": turns, "messages": messages}


async def wait_done(
    client: Any,
    episode_id: str,
    *,
    timeout: float = 3600.0,
    poll_seconds: float = 2.0,
    score: bool = True,
    page_turns: int = 100,
) -> dict[str, Any]:
    """Polls the episode (a one-turn page) until its status is no longer ``"active"`` (the
    agent exited, timed out, hit a limit, or the episode was closed), scores it when
    ``score`` and it is ``"done"`` and unscored (``POST …/score``; stored, so a repeat is
    the same score), and returns the whole episode (``read_harness_episode``). Raises
    ``TimeoutError`` after ``timeout`` seconds of ``"active"``."""
    deadline = time.monotonic() + timeout
    while True:
        page = await _get_json(client, _calls.episode(episode_id, 0, 1))
        if page.get("status") != "active":
            break
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"episode {episode_id} still active after {timeout:.0f} s (turn {page.get('turn')})")
        await asyncio.sleep(min(poll_seconds, left))
    if score and page.get("status") == "done" and page.get("score") is None:
        await client.score(episode_id)
    return await read_harness_episode(client, episode_id, page_turns=page_turns)


class HarnessCollector:
    """Runs harness episodes: reset with an agent, wait for it, score, read the calls'
    tokens. The model is whatever the agent's ``upstream`` serves (give it a vLLM upstream
    that returns token ids, on the weights being trained); nothing is generated here.

    >>> collector = HarnessCollector(gym, {"command": "mini …", "upstream": "vllm", "model": "Qwen/Qwen3-0.6B", "timeout_seconds": 600})
    >>> groups = await collector.collect("harbor", [TaskRef(index=0, seed=0)], num_generations=8)
    >>> trainer.train_on([r for g in groups for r in g.rollouts if r.ok])
    """

    def __init__(
        self,
        client: Any,
        agent: Mapping[str, Any] | m.AgentSpec,
        *,
        env_args: dict[str, Any] | None = None,
        max_concurrency: int = 16,
        poll_seconds: float = 2.0,
        wait_grace_seconds: float = 300.0,
        close_episodes: bool = True,
        scale_rewards: ScaleRewards = "group",
        failed_calls: FailedCalls = "raise",
        policy_version: Callable[[], int] = lambda: 0,
    ) -> None:
        self.client = client
        self.agent = agent.model_dump(exclude_none=True) if isinstance(agent, m.AgentSpec) else dict(agent)
        self.env_args = env_args
        self.poll_seconds = poll_seconds
        #: Waited beyond the agent's ``timeout_seconds`` (sandbox start, the agent's teardown).
        self.wait_grace_seconds = wait_grace_seconds
        self.close_episodes = close_episodes
        self.scale_rewards = scale_rewards
        self.failed_calls = failed_calls
        self.policy_version = policy_version
        self._slots = asyncio.Semaphore(max_concurrency)

    async def start(self, env_id: str, task: TaskRef) -> dict[str, Any]:
        """Resets an episode of ``task`` with this collector's agent and ``env_args``:
        ``start_harness_episode``'s reply JSON."""
        return await start_harness_episode(self.client, env_id, self.agent, split=task.split, index=task.index, seed=task.seed, args=self.env_args)

    async def wait_done(self, episode_id: str, timeout: float | None = None) -> dict[str, Any]:
        """``wait_done`` (poll until not active, score, read whole); ``timeout`` defaults to
        the agent's ``timeout_seconds`` plus ``wait_grace_seconds``."""
        if timeout is None:
            timeout = float(self.agent.get("timeout_seconds", 3600)) + self.wait_grace_seconds
        return await wait_done(self.client, episode_id, timeout=timeout, poll_seconds=self.poll_seconds)

    async def rollouts(self, episode_id: str) -> list[Rollout]:
        """A finished harness episode's sequences as rollouts (``harness_rollouts``), scored
        first when it is done and unscored. Advantages 0: see ``assign_harness_advantages``."""
        episode = await self.wait_done(episode_id, timeout=0.0)
        return harness_rollouts(episode, failed_calls=self.failed_calls, policy_version=self.policy_version())

    async def run_episode(self, env_id: str, task: TaskRef) -> dict[str, Any]:
        """One harness episode of ``task``, to its end, scored: its JSON (all turns)."""
        async with self._slots:
            reset = await self.start(env_id, task)
            episode_id = str(reset["episode_id"])
            try:
                return await self.wait_done(episode_id)
            finally:
                if self.close_episodes:
                    try:
                        await self.client.close_episode(episode_id)
                    except Exception:  # noqa: BLE001 - housekeeping; the TTL reaps it anyway
                        pass

    async def collect(self, env_id: str, tasks: Sequence[TaskRef], num_generations: int) -> list[RolloutGroup]:
        """``num_generations`` harness episodes of each task, all started together (at most
        ``max_concurrency`` at once). One group per task, holding every sequence of every
        episode; advantages per episode (``scale_rewards`` over the batch when ``"batch"``).
        An episode that fails (reset refused, timeout, no tokens) is one failed rollout."""
        version = self.policy_version()

        async def one(task: TaskRef) -> Mapping[str, Any] | Exception:
            try:
                return await self.run_episode(env_id, task)
            except Exception as exc:  # noqa: BLE001 - reported on the rollout, never dropped
                return exc

        per_task = [[asyncio.create_task(one(task)) for _ in range(num_generations)] for task in tasks]
        groups: list[RolloutGroup] = []
        for task, jobs in zip(tasks, per_task):
            episodes = list(await asyncio.gather(*jobs))
            read = [e for e in episodes if not isinstance(e, Exception)]
            group = harness_group(read, task=task, failed_calls=self.failed_calls, scale_rewards=None, policy_version=version)
            group.rollouts.extend(
                Rollout(env_id=env_id, task=task, error=f"{type(e).__name__}: {e}", policy_version=version) for e in episodes if isinstance(e, Exception)
            )
            groups.append(group)
        assign_harness_advantages(groups, self.scale_rewards)
        return groups
