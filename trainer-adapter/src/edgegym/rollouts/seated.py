"""Seated episodes (docs/multi-agent.md): one episode, several players, one trajectory per seat.

The server answers every reset and step with ``to_play`` (the seat that moves next) and
the messages that seat has been shown since its own last message (its whole opening
before its first move). So each seat's conversation is built from the replies addressed
to it alone, and each seat keeps its own tokens: its prompt, its sampled ids (mask 1) and,
between its moves, the environment's text as a chat-template delta (mask 0). What another
seat wrote never enters a seat's tokens except as the environment shows it (in
tic-tac-toe: "X played 5", never X's reasoning). Every client-played seat is sampled from
the same generator, so in self-play both seats are one policy.

A seat's trajectory is rebuilt from the server (``RolloutCollector.rollout_from_server``
with ``seat``) from its view, ``GET /v1/episodes/{id}?seat=``, cut by ``seat_turns`` at
its own moves into the turns ``rebuild`` reads.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .. import models as m
from ..models import message_dict
from .chat_tokens import ChatTokens
from .generator import Generation, SamplingParams
from .trajectory import StoredEpisode, StoredTurn, rebuild
from .types import Rollout, TaskRef

if TYPE_CHECKING:
    from .collector import RolloutCollector


@dataclass
class _SeatPlay:
    """One client seat during play: its rollout (tokens so far), its conversation, and its
    last generation (needed to close its turn when the environment next speaks to it)."""

    rollout: Rollout
    history: list[dict[str, Any]] = field(default_factory=list)
    last: Generation | None = None

    def show(self, chat: ChatTokens, messages: list[dict[str, Any]]) -> None:
        """What the server shows this seat before its move: its opening the first time, then
        the environment's tokens since its last move (mask 0), never re-tokenising earlier text."""
        r = self.rollout
        if self.last is None and not r.prompt_ids:
            self.history = list(messages)
            r.prompt_ids = chat.prompt_ids(self.history)
            return
        if self.last is None:  # pragma: no cover - the server shows a seat its opening once
            raise RuntimeError(f"seat {r.seat} was shown its opening twice")
        delta = chat.env_delta_ids(self.history, messages, self.last.completion_ids, self.last.finish_reason == "stop")
        r.completion_ids.extend(delta)
        r.logprobs.extend([0.0] * len(delta))
        r.env_mask.extend([0] * len(delta))
        self.history.extend(messages)


async def play_seated(collector: "RolloutCollector", env_id: str, task: TaskRef, seats: list[str]) -> dict[str, Rollout]:
    """One seated episode with ``collector``'s generator playing every seat in ``seats``
    (the seats the reset gives the client). Returns each seat's rollout. Never raises: a
    failure of the episode goes on every seat's rollout; a seat that never moved (the game
    ended before its turn) carries its own error. Each is left out of training."""
    version = collector.policy_version()
    plays = {seat: _SeatPlay(Rollout(env_id=env_id, task=task, policy_version=version, seat=seat)) for seat in seats}
    rollouts = {seat: p.rollout for seat, p in plays.items()}
    episode: list[str] = []
    try:
        await _play(collector, env_id, task, plays, episode)
    except Exception as exc:  # noqa: BLE001 - reported on the rollouts, never dropped
        lines = float(len(traceback.format_exc().splitlines()))
        for r in rollouts.values():
            r.error = f"{type(exc).__name__}: {exc}"
            r.reward = None
            r.metrics["traceback_lines"] = lines
    finally:
        if episode and collector.settings.close_episodes:
            try:
                await collector.client.close_episode(episode[0])
            except Exception:  # noqa: BLE001 - closing is housekeeping; the TTL reaps it anyway
                pass
    return rollouts


async def _play(collector: "RolloutCollector", env_id: str, task: TaskRef, plays: dict[str, _SeatPlay], episode: list[str]) -> None:
    s = collector.settings
    client = collector.client
    reset = await client.reset(env_id, split=task.split, index=task.index, seed=task.seed, args=s.env_args, seats=s.seats)
    episode.append(reset.episode_id)
    for p in plays.values():
        p.rollout.episode_id = reset.episode_id
        p.rollout.index, p.rollout.seed = reset.index, reset.seed
    chat = collector._chat(reset.tools)
    turn, done, to_play, shown = 0, reset.done, reset.to_play, reset.messages
    stepped: _SeatPlay | None = None
    stop_reason: str | None = None
    truncated = False
    while not done:
        if to_play is None:
            raise RuntimeError(f"episode {reset.episode_id} is not done but names no seat to play (is {env_id} a seated environment?)")
        play = plays.get(to_play)
        if play is None:
            raise RuntimeError(f"seat {to_play!r} is to play in episode {reset.episode_id}, but this collector plays {sorted(plays)}")
        play.show(chat, [message_dict(x) for x in shown])
        r = play.rollout
        room = s.max_seq_len - len(r.prompt_ids) - len(r.completion_ids)
        if room <= 0:
            r.completion_truncated = True
            truncated, stop_reason = True, "context_limit"
            break
        sampling = s.sampling if s.sampling.max_tokens <= room else SamplingParams(**{**s.sampling.__dict__, "max_tokens": room})
        gen = await collector.generator.generate(r.prompt_ids + r.completion_ids, sampling)
        if not gen.completion_ids:
            raise RuntimeError("the generator returned no tokens")
        if len(gen.logprobs) != len(gen.completion_ids):
            raise RuntimeError(f"generator returned {len(gen.logprobs)} logprobs for {len(gen.completion_ids)} tokens")
        start = len(r.completion_ids)
        r.completion_ids.extend(gen.completion_ids)
        r.logprobs.extend(gen.logprobs)
        r.env_mask.extend([1] * len(gen.completion_ids))
        r.turn_spans.append((start, len(r.completion_ids)))
        r.completion_truncated = gen.finish_reason == "length"
        r.turns += 1
        message = collector.tool_parser.parse(gen.text, turn)
        sampled = m.SampledTokens(token_ids=gen.completion_ids, logprobs=gen.logprobs, template_hash=collector.template_hash) if s.send_sampled else None
        step = await client.step(reset.episode_id, turn, message, sampled, seat=to_play)
        if step.template_change is not None:
            from .collector import TemplateChanged  # noqa: PLC0415 - the collector imports this module

            raise TemplateChanged(step.template_change, reset.episode_id)
        play.history.append(message)
        play.last = gen
        stepped = play
        turn, done, to_play, shown = step.turn, step.done, step.to_play, step.messages
        truncated, stop_reason = step.truncated, step.stop_reason
    if done and stepped is not None:
        # The last reply is the stepping seat's final view (the result): its transcript, not its tokens.
        stepped.history.extend(message_dict(x) for x in shown)
    for p in plays.values():
        r = p.rollout
        # Environment tokens after a seat's last move are never trained on (only a context-limit stop leaves some).
        while r.env_mask and r.env_mask[-1] == 0:
            r.env_mask.pop()
            r.logprobs.pop()
            r.completion_ids.pop()
        r.messages = p.history
        r.truncated, r.stop_reason = truncated, stop_reason
    await _score(client, reset.episode_id, plays)


async def _score(client: Any, episode_id: str, plays: dict[str, _SeatPlay]) -> None:
    """Each seat's reward, components and metrics from ``score.seats``; a seat that never
    moved, or whose score could not be given, is failed (no reward it earned by its tokens)."""
    scored = (await client.score(episode_id)).score
    for seat, p in plays.items():
        r = p.rollout
        mine = (scored.seats or {}).get(seat)
        if mine is None:
            r.error = f"the score of episode {episode_id} has no seat {seat!r} (seats: {sorted(scored.seats or {})})"
            continue
        r.reward = mine.reward
        r.components = {c.name: c.score for c in mine.components}
        r.metrics = dict(mine.metrics)
        if mine.failure is not None:
            r.error = f"score_failed: {mine.failure}"
        elif not r.completion_ids:
            r.error = f"seat {seat} never moved: episode {episode_id} ended ({r.stop_reason}) before its turn"


def seat_turns(turns: Sequence[StoredTurn]) -> list[StoredTurn]:
    """One seat's stored view cut into the turns ``rebuild`` reads.

    ``turns`` are the episode's turns as ``read_episode(..., seat=seat)`` returns them (each
    holding that seat's messages of the turn, and the tokens of whichever seat stepped it).
    Out come the seat's own turns, numbered 0 … k: turn 0 is everything it was shown
    before its first move (its opening, and what other seats did first); each later turn
    is one of its moves (the assistant message, with the tokens its step carried) followed
    by everything it was shown until its next move.
    """
    out: list[StoredTurn] = [StoredTurn(turn=0, messages=[], sampled=None)]
    for t in turns:
        if t.messages and t.messages[0].get("role") == "assistant":
            # The seat stepped this turn: its message opens it, and what the step carried is its own.
            out.append(StoredTurn(turn=len(out), messages=list(t.messages), sampled=t.sampled))
        else:
            out[-1].messages.extend(t.messages)
    return out


async def load_seat_rollout(collector: "RolloutCollector", r: Rollout, stored: StoredEpisode, seat: str, through: int) -> None:
    """Fills ``r`` with ``seat``'s trajectory rebuilt from ``stored`` (read with ``seat``), as
    ``play_seated`` built it: the body of ``RolloutCollector.rollout_from_server(seat=)``."""
    ep = stored.episode
    r.env_id, r.index, r.seed = ep.env_id, ep.index, ep.seed
    r.task = TaskRef(index=ep.index, seed=ep.seed, split=ep.split)
    turns = seat_turns(stored.turns)
    if len(turns) < 2:
        raise RuntimeError(f"seat {seat} of episode {ep.episode_id} made no move")
    traj = rebuild(turns, collector._chat(ep.tools), expected_hash=collector.template_hash, stop_ids=collector._stop_ids, prompt_through=through)
    r.prompt_ids, r.completion_ids, r.logprobs = traj.prompt_ids, traj.completion_ids, traj.logprobs
    r.env_mask, r.turn_spans, r.messages = traj.env_mask, traj.turn_spans, traj.history
    r.completion_truncated = traj.completion_truncated
    r.turns = len(turns) - 1 - through
    r.truncated, r.stop_reason = ep.truncated, ep.stop_reason
    if ep.template_changes:
        from .collector import TemplateChanged  # noqa: PLC0415 - the collector imports this module

        raise TemplateChanged(ep.template_changes[0], ep.episode_id)
    score = ep.score
    if score is None:
        if ep.status == "active" and not ep.done:
            raise RuntimeError(f"episode {ep.episode_id} is unfinished (active at turn {ep.turn}, unscored)")
        score = (await collector.client.score(ep.episode_id)).score
    mine = (score.seats or {}).get(seat)
    if mine is None:
        raise RuntimeError(f"the score of episode {ep.episode_id} has no seat {seat!r}")
    r.reward = mine.reward
    r.components = {c.name: c.score for c in mine.components}
    r.metrics = dict(mine.metrics)
    if mine.failure is not None:
        r.error = f"score_failed: {mine.failure}"
