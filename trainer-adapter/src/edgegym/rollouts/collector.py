"""Runs many episodes at once against the edgegym server and a model, keeping exact token provenance."""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .. import models as m
from ..client import AsyncClient
from ..models import message_dict
from .chat_tokens import ChatTokens
from .generator import Generator, SamplingParams
from .seated import load_seat_rollout, play_seated
from .tool_calls import HermesToolCallParser, ToolCallParser
from .trajectory import TrajectoryUnavailable, read_episode, rebuild, stop_token_ids, template_hash
from .types import Rollout, RolloutGroup, ScaleRewards, TaskRef, assign_advantages


class TemplateChanged(RuntimeError):
    """The server reported that a step's tokens came from another tokenizer or chat
    template than the turns before it: the trajectory mixes two tokenizations."""

    def __init__(self, change: m.TemplateChange, episode_id: str) -> None:
        super().__init__(
            f"template_changed: episode {episode_id} turn {change.turn} was sampled under {change.to}, "
            f"the turns before it under {change.from_}; not trained on"
        )
        self.change = change


def _check_fork(n: int, turn: int | None) -> None:
    """Refuses a fork the server would refuse, before any rollout or token is spent on it."""
    if not 1 <= n <= MAX_FORKS:
        raise ValueError(f"n must be 1..{MAX_FORKS} forks (the server's limit per request), not {n}")
    if turn is not None and turn < 0:
        raise ValueError(f"the fork turn must be >= 0, not {turn}")


#: Most episodes one fork request starts (the server's ``MAX_FORKS_PER_REQUEST``).
MAX_FORKS = 64


@dataclass
class CollectorSettings:
    #: Sampling for each assistant turn.
    sampling: SamplingParams = SamplingParams()
    #: Episodes in flight at once (each holds one model request or one server call at a time).
    max_concurrency: int = 64
    #: Prompt + completion tokens an episode may reach; the episode stops (truncated) there.
    max_seq_len: int = 4096
    #: Environment arguments sent with every reset.
    env_args: dict[str, Any] | None = None
    #: Passed to the chat template (e.g. {"enable_thinking": False}).
    template_kwargs: dict[str, Any] | None = None
    #: Close each episode after scoring, so the server can reap it early.
    close_episodes: bool = True
    #: How GRPO advantages are scaled ("group" std, "batch" std, or "none").
    scale_rewards: ScaleRewards = "group"
    #: Send each step's sampled token ids, logprobs and template hash (``StepRequest.sampled``)
    #: so the server stores the trajectory and reports template changes. Off: steps carry the
    #: message only (as before), and rollouts cannot be rebuilt from the server.
    send_sampled: bool = True
    #: The ``template_hash`` sent with every step. Default: ``trajectory.template_hash`` of the
    #: tokenizer and ``template_kwargs``, computed once.
    template_hash: str | None = None
    #: A multi-player environment's reset ``seats``: who plays each seat, "client" or one of the
    #: environment's policies (``{"o": "minimax"}``); seats left out take the environment's default
    #: (tic-tac-toe-2p: both "client", self-play). Every client seat is played by the generator.
    seats: dict[str, str] | None = None


class RolloutCollector:
    """Drives episodes: reset, then each turn ask the model and step the episode with its
    message (tool calls included), until done; then score.

    For each episode it builds ``prompt_ids``, ``completion_ids``, ``logprobs`` and
    ``env_mask`` from the tokens the generator actually sampled; the environment's
    messages are tokenised as a template delta, never by re-tokenising earlier turns.

    Each step carries what was sampled (token ids, logprobs, ``template_hash``) unless
    ``settings.send_sampled`` is off, so ``rollout_from_server`` rebuilds a rollout from
    the server after a crash. A step the server answers with ``template_change`` fails
    its rollout (``error`` starts with ``TemplateChanged: template_changed``): it is left
    out of training and of its group's advantages rather than trained on.

    A seated environment (``EnvInfo.seats``, docs/multi-agent.md) is played seat by seat:
    one model call per move of a client seat, each seat's trajectory kept apart with its own
    tokens and mask (``edgegym.rollouts.seated``), every client seat sampled from the same
    generator (self-play shares one policy). ``collect`` then groups per seat: a group is one
    task's seat across the ``num_generations`` episodes, its advantages from
    ``score.seats[seat].reward``, and only seats that are client-played and ``trainable``
    make groups (a simulated user's seat is never trained on).

    >>> collector = RolloutCollector(gym, generator, tokenizer)
    >>> groups = await collector.collect("my-env", [TaskRef(index=0, seed=1)], num_generations=8)
    """

    def __init__(
        self,
        client: AsyncClient,
        generator: Generator,
        tokenizer: Any,
        settings: CollectorSettings | None = None,
        *,
        tool_parser: ToolCallParser | None = None,
        policy_version: Callable[[], int] = lambda: 0,
    ) -> None:
        self.client = client
        self.generator = generator
        self.tokenizer = tokenizer
        self.settings = settings or CollectorSettings()
        self.tool_parser = tool_parser or HermesToolCallParser()
        self.policy_version = policy_version
        self._slots = asyncio.Semaphore(self.settings.max_concurrency)
        self.template_hash = self.settings.template_hash or template_hash(tokenizer, self.settings.template_kwargs)
        self._stop_ids = stop_token_ids(tokenizer, self.settings.sampling.stop_token_ids)
        self._envs: dict[str, m.EnvInfo] = {}

    async def env_info(self, env_id: str) -> m.EnvInfo:
        """``GET /v1/envs/{env_id}``, read once per collector (whether it has seats, and which)."""
        if env_id not in self._envs:
            self._envs[env_id] = await self.client.env(env_id)
        return self._envs[env_id]

    async def collect(self, env_id: str, tasks: Sequence[TaskRef], num_generations: int) -> list[RolloutGroup]:
        """``num_generations`` rollouts of each task, all in flight together (bounded by max_concurrency).

        A seated environment gives one group per task and trainable client seat (see the
        class); raises ``ValueError`` when no seat is both, or when ``settings.seats`` is set
        for a one-player environment."""
        info = await self.env_info(env_id)
        if info.seats:
            return await self._collect_seated(env_id, info, tasks, num_generations)
        if self.settings.seats:
            raise ValueError(f"{env_id} has one player and no seats: leave CollectorSettings.seats unset")
        per_task = [
            [asyncio.create_task(self.run_episode(env_id, task)) for _ in range(num_generations)] for task in tasks
        ]
        groups = [RolloutGroup(task=task, rollouts=list(await asyncio.gather(*jobs))) for task, jobs in zip(tasks, per_task)]
        assign_advantages(groups, self.settings.scale_rewards)
        return groups

    async def _collect_seated(self, env_id: str, info: m.EnvInfo, tasks: Sequence[TaskRef], num_generations: int) -> list[RolloutGroup]:
        trainable = {s.name for s in info.seats or [] if s.trainable}
        train = [seat for seat in info.client_seats(self.settings.seats) if seat in trainable]
        if not train:
            raise ValueError(
                f"{env_id}: no seat is both played by the client and trainable under seats={self.settings.seats or {}} "
                f"(seats: {[(s.name, s.default, s.trainable) for s in info.seats or []]}): nothing to train on"
            )
        per_task = [[asyncio.create_task(self.run_seated_episode(env_id, task)) for _ in range(num_generations)] for task in tasks]
        groups: list[RolloutGroup] = []
        for task, jobs in zip(tasks, per_task):
            episodes = await asyncio.gather(*jobs)
            groups.extend(RolloutGroup(task=task, rollouts=[ep[seat] for ep in episodes], seat=seat) for seat in train)
        assign_advantages(groups, self.settings.scale_rewards)
        return groups

    async def run_seated_episode(self, env_id: str, task: TaskRef) -> dict[str, Rollout]:
        """One episode of a seated environment, the generator playing every client seat (under
        ``settings.seats``, trainable or not): each seat's rollout, by seat. A failure of the
        episode goes on the rollouts (``seated.play_seated``); raises only when the
        environment cannot be read or leaves the client no seat."""
        info = await self.env_info(env_id)
        seats = info.client_seats(self.settings.seats)
        if not seats:
            raise ValueError(f"{env_id} has no seat the client plays under seats={self.settings.seats}")
        async with self._slots:
            return await play_seated(self, env_id, task, seats)

    async def run_episode(self, env_id: str, task: TaskRef) -> Rollout:
        """One episode. Never raises: a failure is reported on the rollout with its error.

        With ``settings.seats`` leaving the client one seat of a seated environment (e.g.
        ``{"o": "minimax"}``) that seat is played here as a one-player episode (its steps may
        leave their seat out); self-play needs ``run_seated_episode``."""
        rollout = Rollout(env_id=env_id, task=task, policy_version=self.policy_version())
        async with self._slots:
            await self._guarded(rollout, self._run(env_id, task, rollout))
        return rollout

    async def _guarded(self, rollout: Rollout, work: Any, *, close: bool | None = None) -> None:
        """Runs ``work``; a failure goes on the rollout (no reward), never up. Closes the
        rollout's episode after, when the settings say so."""
        try:
            await work
        except Exception as exc:  # noqa: BLE001 - reported on the rollout, never dropped
            rollout.error = f"{type(exc).__name__}: {exc}"
            rollout.reward = None
            rollout.metrics["traceback_lines"] = float(len(traceback.format_exc().splitlines()))
        finally:
            if rollout.episode_id and (self.settings.close_episodes if close is None else close):
                try:
                    await self.client.close_episode(rollout.episode_id)
                except Exception:  # noqa: BLE001 - closing is housekeeping; the TTL reaps it anyway
                    pass

    def _chat(self, tools: Sequence[m.ToolDefinition]) -> ChatTokens:
        dicts = [t.model_dump(exclude_none=True) for t in tools]
        return ChatTokens(self.tokenizer, tools=dicts or None, template_kwargs=self.settings.template_kwargs)

    async def _run(
        self, env_id: str, task: TaskRef, rollout: Rollout, stop_at_turn: int | None = None
    ) -> tuple[list[dict[str, Any]], int, bool]:
        """Reset, then play to the end (or to ``stop_at_turn``: then nothing is trimmed or
        scored, and the tokens end on the next turn's generation prompt). Returns the
        transcript, the turn reached and whether the episode is done."""
        s = self.settings
        reset = await self.client.reset(env_id, split=task.split, index=task.index, seed=task.seed, args=s.env_args, seats=s.seats)
        rollout.episode_id = reset.episode_id
        rollout.index, rollout.seed = reset.index, reset.seed
        chat = self._chat(reset.tools)
        history = [message_dict(m) for m in reset.messages]
        rollout.prompt_ids = chat.prompt_ids(history)
        turn, done = await self._play(rollout, chat, history, 0, reset.done, stop_at_turn)
        if stop_at_turn is None or done:
            await self._finish(rollout, history, turn, first_turn=0)
        return history, turn, done

    async def _play(
        self,
        rollout: Rollout,
        chat: ChatTokens,
        history: list[dict[str, Any]],
        turn: int,
        done: bool,
        stop_at_turn: int | None = None,
    ) -> tuple[int, bool]:
        """Turns from ``turn`` until done, the context limit, or ``stop_at_turn``; the model's
        tokens and the environment's go onto ``rollout``. Returns the turn reached and done."""
        s = self.settings
        assert rollout.episode_id is not None
        ids = rollout.completion_ids  # completion side: model and environment tokens in order
        while not done and (stop_at_turn is None or turn < stop_at_turn):
            room = s.max_seq_len - len(rollout.prompt_ids) - len(ids)
            if room <= 0:
                rollout.truncated = True
                rollout.completion_truncated = True
                rollout.stop_reason = "context_limit"
                break
            sampling = s.sampling
            if sampling.max_tokens > room:
                sampling = SamplingParams(**{**sampling.__dict__, "max_tokens": room})
            gen = await self.generator.generate(rollout.prompt_ids + ids, sampling)
            if not gen.completion_ids:
                raise RuntimeError("the generator returned no tokens")
            if len(gen.logprobs) != len(gen.completion_ids):
                raise RuntimeError(f"generator returned {len(gen.logprobs)} logprobs for {len(gen.completion_ids)} tokens")
            start = len(ids)
            ids.extend(gen.completion_ids)
            rollout.logprobs.extend(gen.logprobs)
            rollout.env_mask.extend([1] * len(gen.completion_ids))
            rollout.turn_spans.append((start, len(ids)))
            rollout.completion_truncated = gen.finish_reason == "length"
            message = self.tool_parser.parse(gen.text, turn)
            sampled = (
                m.SampledTokens(token_ids=gen.completion_ids, logprobs=gen.logprobs, template_hash=self.template_hash)
                if s.send_sampled
                else None
            )
            step = await self.client.step(rollout.episode_id, turn, message, sampled)
            if step.template_change is not None:
                raise TemplateChanged(step.template_change, rollout.episode_id)
            turn = step.turn
            history.append(message)
            env_messages = [message_dict(m) for m in step.messages]
            history.extend(env_messages)
            done = step.done
            rollout.truncated = step.truncated
            rollout.stop_reason = step.stop_reason
            if done:
                break
            delta = chat.env_delta_ids(history[: len(history) - len(env_messages)], env_messages, gen.completion_ids, gen.finish_reason == "stop")
            ids.extend(delta)
            rollout.logprobs.extend([0.0] * len(delta))
            rollout.env_mask.extend([0] * len(delta))
        return turn, done

    async def _finish(self, rollout: Rollout, history: list[dict[str, Any]], turn: int, *, first_turn: int) -> None:
        """Trims a trailing environment span, then scores."""
        assert rollout.episode_id is not None
        rollout.turns = turn - first_turn
        # The environment's last tokens after the final model turn are never trained on: drop a trailing
        # environment span (there is none unless the context limit stopped the episode mid-way).
        while rollout.env_mask and rollout.env_mask[-1] == 0:
            rollout.env_mask.pop()
            rollout.logprobs.pop()
            rollout.completion_ids.pop()
        rollout.messages = history
        await self._score(rollout)
        if not rollout.completion_ids:
            raise RuntimeError("episode ended before the model generated anything")

    async def _score(self, rollout: Rollout) -> None:
        assert rollout.episode_id is not None
        scored = await self.client.score(rollout.episode_id)
        rollout.reward = scored.score.reward
        rollout.components = {c.name: c.score for c in scored.score.components}
        rollout.metrics = dict(scored.score.metrics)
        # A score that could not be given (the task's tests timed out, no reward file) is no
        # 0 the model earned: the rollout is failed, so training leaves it out.
        if scored.score.failure is not None:
            rollout.error = f"score_failed: {scored.score.failure}"

    # --- forks: continuations of one mid-episode state ---------------------------------

    async def collect_forks(
        self,
        env_id: str,
        task: TaskRef,
        fork_turn: int,
        n: int,
        *,
        idempotency_key: str | None = None,
    ) -> RolloutGroup:
        """Step-level GRPO and pass@k from a mid-episode state.

        Rolls one episode of ``task`` (the trunk) to ``fork_turn`` with the generator,
        forks it ``n`` times there (``POST /v1/episodes/{id}/fork``), rolls every fork out
        to its end and scores it. Returns a group whose advantages compare the forks with
        each other only: each fork's ``prompt_ids`` are the trunk's tokens up to the fork
        (shared, never trained on) and its ``completion_ids`` its own turns. The trunk is
        not scored and is closed after forking when ``close_episodes`` is on.

        Raises ``ValueError`` only for arguments the server would refuse (``n`` outside
        1–64, a negative turn); otherwise never: when the trunk fails or ends before
        ``fork_turn``, or the fork is refused, every rollout of the group carries that
        error (and the group trains nothing).
        """
        _check_fork(n, fork_turn)
        trunk = Rollout(env_id=env_id, task=task, policy_version=self.policy_version())
        reached: list[Any] = []

        async def grow() -> None:
            reached.extend(await self._run(env_id, task, trunk, stop_at_turn=fork_turn))

        async with self._slots:  # released before the forks take slots of their own
            await self._guarded(trunk, grow(), close=False)
        try:
            if trunk.error is None:
                history, turn, done = reached
                if done or turn < fork_turn:
                    why = f"done ({trunk.stop_reason})" if done else f"stopped ({trunk.stop_reason})"
                    trunk.error = f"the trunk episode {trunk.episode_id} ended at turn {turn}, {why}: no state to fork after turn {fork_turn}"
            if trunk.error is not None or trunk.episode_id is None:
                failed = [Rollout(env_id=env_id, task=task, error=f"trunk: {trunk.error}", policy_version=trunk.policy_version) for _ in range(n)]
                return RolloutGroup(task=task, rollouts=failed, parent_episode_id=trunk.episode_id, fork_turn=fork_turn)
            return await self._fork_rollouts(
                trunk.episode_id, fork_turn, n, trunk.prompt_ids + trunk.completion_ids, history, env_id, task, (trunk.index, trunk.seed), idempotency_key
            )
        except Exception as exc:  # noqa: BLE001 - the fork call itself failed: reported on the group
            failed = [Rollout(env_id=env_id, task=task, error=f"fork: {type(exc).__name__}: {exc}") for _ in range(n)]
            return RolloutGroup(task=task, rollouts=failed, parent_episode_id=trunk.episode_id, fork_turn=fork_turn)
        finally:
            if trunk.episode_id and self.settings.close_episodes:
                try:
                    await self.client.close_episode(trunk.episode_id)
                except Exception:  # noqa: BLE001 - housekeeping; the TTL reaps it anyway
                    pass

    async def fork_group(self, episode_id: str, n: int, *, turn: int | None = None, idempotency_key: str | None = None) -> RolloutGroup:
        """As ``collect_forks``, from an episode that already exists (any status the server
        forks: active, done, closed, scored), at ``turn`` (default: its current turn).

        The prefix's tokens are rebuilt from the server: each turn's stored sampled ids,
        and the environment's messages as template deltas. When a prefix turn was stepped
        without sampled tokens, the prefix is the chat template's rendering of its
        messages instead (context only: the forks' tokens are still exact, but
        ``rollout_from_server`` cannot rebuild them later). Raises ``TrajectoryUnavailable``
        when the prefix was sampled under another tokenizer or chat template (continuing
        it would mix two tokenizations), and ``EdgegymError`` when the read or the fork
        fails; each fork's own failure goes on its rollout.
        """
        _check_fork(n, turn)
        stored = await read_episode(self.client, episode_id, upto_turn=turn)
        ep = stored.episode
        at = ep.turn if turn is None else turn
        if at > stored.turns[-1].turn:
            raise ValueError(f"episode {episode_id} is at turn {stored.turns[-1].turn}; cannot fork after turn {at}")
        changes = [c for c in ep.template_changes if c.turn <= at]
        if changes:
            raise TrajectoryUnavailable(f"episode {episode_id}: the template changed at turn {changes[0].turn} ({changes[0].from_} -> {changes[0].to})")
        foreign = [t.turn for t in stored.turns if t.sampled is not None and t.sampled.template_hash != self.template_hash]
        if foreign:
            raise TrajectoryUnavailable(f"episode {episode_id}: turn {foreign[0]} was sampled under another template than {self.template_hash}")
        chat = self._chat(ep.tools)
        if all(t.sampled is not None for t in stored.turns[1:]):
            traj = rebuild(stored.turns, chat, expected_hash=self.template_hash, stop_ids=self._stop_ids, prompt_through=at)
            prefix, history = traj.prompt_ids, traj.history
        else:
            history = [msg for t in stored.turns for msg in t.messages]
            prefix = chat.prompt_ids(history)
        task = TaskRef(index=ep.index, seed=ep.seed, split=ep.split)
        return await self._fork_rollouts(episode_id, at, n, prefix, history, ep.env_id, task, (ep.index, ep.seed), idempotency_key)

    async def _fork_rollouts(
        self,
        parent_id: str,
        fork_turn: int,
        n: int,
        prefix_ids: list[int],
        history: list[dict[str, Any]],
        env_id: str,
        task: TaskRef,
        index_seed: tuple[int | None, int | None],
        idempotency_key: str | None,
    ) -> RolloutGroup:
        forked = await self.client.fork(parent_id, fork_turn, n, idempotency_key=idempotency_key)
        chat = self._chat(forked.tools)

        async def one(ep: m.ForkedEpisode) -> Rollout:
            r = Rollout(
                env_id=env_id,
                task=task,
                episode_id=ep.episode_id,
                index=index_seed[0],
                seed=index_seed[1],
                prompt_ids=list(prefix_ids),
                policy_version=self.policy_version(),
                parent_episode_id=parent_id,
                fork_turn=forked.turn,
            )
            transcript = list(history)

            async def play() -> None:
                turn, _ = await self._play(r, chat, transcript, forked.turn, False)
                await self._finish(r, transcript, turn, first_turn=forked.turn)

            async with self._slots:
                await self._guarded(r, play())
            return r

        rollouts = await asyncio.gather(*(one(e) for e in forked.episodes))
        group = RolloutGroup(task=task, rollouts=list(rollouts), parent_episode_id=parent_id, fork_turn=forked.turn)
        assign_advantages([group], self.settings.scale_rewards)
        return group

    # --- rebuilding from the server ----------------------------------------------------

    async def rollout_from_server(self, episode_id: str, *, prompt_through: int | None = None, policy_version: int = 0, seat: str | None = None) -> Rollout:
        """The rollout of a stored episode, rebuilt from the tokens its steps carried: what
        a trainer that crashed mid-batch needs instead of rolling out again.

        The tokens are the ones this collector would have built (same tokenizer, template
        and settings): ``prompt_ids`` through turn ``prompt_through`` (default: a fork's
        parent turn, else 0, as ``collect_forks`` and ``collect`` lay them out), then each
        later turn's sampled ids and the environment's deltas. The reward is the stored
        score (the episode is scored when it is done but was not yet).

        Never raises: the rollout carries an error, and is left out of training, when a
        turn has no sampled tokens or was sampled under another template, when the
        episode's ``template_changes`` is not empty, or when it is still active unscored
        (unfinished).

        ``seat``: one seat's trajectory of a seated episode, as ``collect`` built it, from
        that seat's view (``seated.seat_turns``); its turns (and ``prompt_through``) count
        the seat's own moves, and its reward is ``score.seats[seat]``.
        """
        r = Rollout(env_id="", task=TaskRef(index=None, seed=None), episode_id=episode_id, policy_version=policy_version, seat=seat)

        async def load() -> None:
            stored = await read_episode(self.client, episode_id, seat=seat)
            ep = stored.episode
            if seat is not None:
                await load_seat_rollout(self, r, stored, seat, prompt_through or 0)
                return
            through = prompt_through if prompt_through is not None else (ep.parent.turn if ep.parent else 0)
            r.env_id, r.index, r.seed = ep.env_id, ep.index, ep.seed
            r.task = TaskRef(index=ep.index, seed=ep.seed, split=ep.split)
            if ep.parent is not None:
                r.parent_episode_id, r.fork_turn = ep.parent.episode_id, ep.parent.turn
            traj = rebuild(stored.turns, self._chat(ep.tools), expected_hash=self.template_hash, stop_ids=self._stop_ids, prompt_through=through)
            r.prompt_ids, r.completion_ids, r.logprobs = traj.prompt_ids, traj.completion_ids, traj.logprobs
            r.env_mask, r.turn_spans, r.messages = traj.env_mask, traj.turn_spans, traj.history
            r.completion_truncated = traj.completion_truncated
            r.turns = ep.turn - through
            r.truncated, r.stop_reason = ep.truncated, ep.stop_reason
            if ep.template_changes:
                c = ep.template_changes[0]
                raise TemplateChanged(c, episode_id)
            if ep.score is None and ep.status == "active" and not ep.done:
                raise RuntimeError(f"episode {episode_id} is unfinished (active at turn {ep.turn}, unscored)")
            if ep.score is not None:
                r.reward = ep.score.reward
                r.components = {c.name: c.score for c in ep.score.components}
                r.metrics = dict(ep.score.metrics)
                if ep.score.failure is not None:
                    r.error = f"score_failed: {ep.score.failure}"
            else:
                await self._score(r)
            if not r.completion_ids:
                raise RuntimeError(f"episode {episode_id} has no model turn after turn {through}")

        await self._guarded(r, load(), close=False)
        return r

    async def groups_from_server(self, groups: Sequence[Sequence[str | tuple[str, str]]], *, policy_version: int = 0) -> list[RolloutGroup]:
        """A batch rebuilt from the server: ``groups`` lists each group's episode ids (as
        ``[[r.episode_id for r in g.rollouts] for g in groups]`` saved before a crash), or for
        a seated environment ``(episode_id, seat)`` pairs
        (``[[(r.episode_id, r.seat) for r in g.rollouts] for g in groups]``).
        Every rollout is rebuilt with ``rollout_from_server`` (at most ``max_concurrency``
        reads at once), each group's task is its first rollout's, and GRPO advantages are
        assigned as ``collect`` assigns them; a rollout that cannot be rebuilt carries its
        error and gets advantage 0."""

        async def one(entry: str | tuple[str, str]) -> Rollout:
            episode_id, seat = (entry, None) if isinstance(entry, str) else entry
            async with self._slots:
                return await self.rollout_from_server(episode_id, policy_version=policy_version, seat=seat)

        rebuilt = [await asyncio.gather(*(one(e) for e in ids)) for ids in groups]
        out: list[RolloutGroup] = []
        for rollouts in rebuilt:
            first = rollouts[0] if rollouts else None
            task = first.task if first is not None else TaskRef(index=None, seed=None)
            forked = {(r.parent_episode_id, r.fork_turn) for r in rollouts}
            parent, turn = forked.pop() if len(forked) == 1 else (None, None)
            seats = {r.seat for r in rollouts}
            seat = seats.pop() if len(seats) == 1 else None
            out.append(RolloutGroup(task=task, rollouts=list(rollouts), parent_episode_id=parent, fork_turn=turn, seat=seat))
        assign_advantages(out, self.settings.scale_rewards)
        return out
