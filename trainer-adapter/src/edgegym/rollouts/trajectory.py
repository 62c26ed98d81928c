"""A rollout's token trajectory, rebuilt from what the server stored with each turn.

The collector sends each step's sampled token ids, their logprobs and a hash of the
tokenizer and chat template (``template_hash``); the server keeps them per turn. From an
episode's stored turns this module rebuilds exactly what the collector built in memory:
``prompt_ids``, then per turn the sampled ids (mask 1, their logprobs) and between turns
the environment's tokens as a chat-template delta (mask 0). A trainer that crashed
mid-rollout rebuilds its batch from the server instead of rolling out again, and a fork
rebuilds the token prefix its branches continue from.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Sequence

from .. import models as m
from ..models import message_dict
from .chat_tokens import ChatTokens


def template_hash(tokenizer: Any, template_kwargs: dict[str, Any] | None = None) -> str:
    """``"sha256:" + hex`` of what decides how a conversation becomes tokens.

    Hashed (as one canonical JSON document): the chat template text
    (``tokenizer.chat_template``; a dict of named templates as is), the keyword
    arguments the collector passes to it (``template_kwargs``, e.g.
    ``{"enable_thinking": False}``), and the vocabulary (every token string and its id,
    special tokens included; a tokenizer-like object without ``get_vocab`` hashes its
    template alone). Not hashed: the tokenizer's name or path, so the same
    tokenizer loaded from another directory or machine (a trainer resuming elsewhere)
    hashes the same, while a retrained vocabulary or an edited template does not.
    Computed once per collector (reading a 150k-token vocabulary takes a fraction of a
    second).
    """
    get_vocab = getattr(tokenizer, "get_vocab", None)
    vocab = get_vocab() if callable(get_vocab) else {}
    vocab_digest = hashlib.sha256(json.dumps(sorted(vocab.items()), ensure_ascii=False).encode()).hexdigest()
    document = {
        "chat_template": getattr(tokenizer, "chat_template", None),
        "template_kwargs": template_kwargs or {},
        "vocab_sha256": vocab_digest,
    }
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False, default=repr)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def stop_token_ids(tokenizer: Any, extra: Sequence[int] = ()) -> frozenset[int]:
    """Token ids that end a model turn: the tokenizer's EOS (one or several) and ``extra``."""
    eos = getattr(tokenizer, "eos_token_id", None)
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    return frozenset(int(i) for i in ids | set(extra))


@dataclass
class StoredTurn:
    """One turn as the server stored it: turn 0 holds the opening messages; turn t ≥ 1 the
    t-th assistant message followed by the environment's reply."""

    turn: int
    messages: list[dict[str, Any]]
    sampled: m.SampledTokens | None


@dataclass
class StoredEpisode:
    """An episode read page by page: its last page (status, score, parent, template
    changes) and every turn from 0 to the last one read."""

    episode: m.Episode
    turns: list[StoredTurn] = field(default_factory=list)


def split_turns(page: m.Episode) -> list[StoredTurn]:
    """A page's ``messages`` cut into its turns by ``turns[].message_count``."""
    counted = sum(t.message_count for t in page.turns)
    if counted != len(page.messages):
        raise ValueError(f"episode {page.episode_id}: turns count {counted} messages, the page holds {len(page.messages)}")
    out: list[StoredTurn] = []
    at = 0
    for t in page.turns:
        msgs = [message_dict(x) for x in page.messages[at : at + t.message_count]]
        at += t.message_count
        out.append(StoredTurn(turn=t.turn, messages=msgs, sampled=t.sampled))
    return out


async def read_episode(client: Any, episode_id: str, *, upto_turn: int | None = None, page_turns: int = 100, seat: str | None = None) -> StoredEpisode:
    """Reads an episode's turns 0 … ``upto_turn`` (default: all) through the paged GET, so a
    long episode never comes back as one response. ``client`` is an ``AsyncClient``.
    ``seat``: one seat's view of a seated episode (each turn then holds that seat's messages)."""
    stored: StoredEpisode | None = None
    pages: AsyncIterator[m.Episode] = client.episode_pages(episode_id, page_turns=page_turns, **({"seat": seat} if seat else {}))
    async for page in pages:
        turns = split_turns(page)
        if stored is None:
            stored = StoredEpisode(episode=page)
        stored.episode = page
        stored.turns.extend(t for t in turns if upto_turn is None or t.turn <= upto_turn)
        if upto_turn is not None and turns and turns[-1].turn >= upto_turn:
            break
    if stored is None:  # pragma: no cover - the iterator yields at least one page
        raise ValueError(f"episode {episode_id}: no page")
    expected = list(range(len(stored.turns)))
    if [t.turn for t in stored.turns] != expected:
        raise ValueError(f"episode {episode_id}: turns read are not 0…{len(expected) - 1} in order")
    return stored


class TrajectoryUnavailable(ValueError):
    """The stored turns cannot be rebuilt into the tokens the model saw (a turn carries no
    sampled tokens, or they were sampled under another tokenizer or chat template)."""


@dataclass
class Trajectory:
    """Tokens rebuilt from stored turns, in the collector's layout (see ``Rollout``)."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    #: The last model turn rebuilt did not end on a stop token (max_tokens or the context cut it).
    completion_truncated: bool = False
    #: The episode turns whose model tokens it holds, one per ``turn_spans`` entry (set for
    #: harness episodes by ``harness_trajectories``; empty for ``rebuild``).
    turns: list[int] = field(default_factory=list)


def _sampled_of(turn: StoredTurn, expected_hash: str) -> m.SampledTokens:
    s = turn.sampled
    if s is None:
        raise TrajectoryUnavailable(f"turn {turn.turn} carries no sampled tokens (stepped without them)")
    if s.template_hash != expected_hash:
        raise TrajectoryUnavailable(
            f"turn {turn.turn} was sampled under template {s.template_hash}, this tokenizer is {expected_hash}"
        )
    if s.logprobs is None or len(s.logprobs) != len(s.token_ids):
        raise TrajectoryUnavailable(f"turn {turn.turn} does not carry one logprob per token id")
    return s


def rebuild(
    turns: Sequence[StoredTurn],
    chat: ChatTokens,
    *,
    expected_hash: str,
    stop_ids: frozenset[int],
    prompt_through: int = 0,
    open_end: bool = False,
) -> Trajectory:
    """Tokens of ``turns`` (0 … k, in order) as the collector laid them out.

    Turns 1 … ``prompt_through`` go into ``prompt_ids`` with the opening messages (a
    fork's prefix: context, never trained on), each as its sampled ids then the
    environment's delta, ending on the generation prompt of the next turn. Later turns
    are the completion. ``open_end`` keeps the environment's tokens after the last turn
    (the prompt of a turn still to come); otherwise the completion ends on the model's
    last token, as the collector trims it. Whether a turn ended on a stop token (which
    decides how the template's end-of-turn text is added) is read from its last token
    being in ``stop_ids``, the rule both generators follow.
    """
    if not turns or turns[0].turn != 0:
        raise TrajectoryUnavailable("the stored turns do not start at turn 0")
    if not 0 <= prompt_through <= turns[-1].turn:
        raise ValueError(f"prompt_through {prompt_through} is outside turns 0…{turns[-1].turn}")
    history = list(turns[0].messages)
    tokens: list[int] = chat.prompt_ids(history)
    out = Trajectory(prompt_ids=[])
    prompt_len = len(tokens)
    for i, turn in enumerate(turns[1:], start=1):
        sampled = _sampled_of(turn, expected_hash)
        ids = list(sampled.token_ids)
        if not ids:
            raise TrajectoryUnavailable(f"turn {turn.turn} carries no token ids")
        if len(turn.messages) < 1 or turn.messages[0].get("role") != "assistant":
            raise TrajectoryUnavailable(f"turn {turn.turn} does not start with the assistant message")
        in_prompt = turn.turn <= prompt_through
        start = len(tokens)
        tokens.extend(ids)
        if not in_prompt:
            out.logprobs.extend(float(x) for x in sampled.logprobs or [])
            out.env_mask.extend([1] * len(ids))
            out.turn_spans.append((start - prompt_len, len(tokens) - prompt_len))
        assistant, env_messages = turn.messages[0], turn.messages[1:]
        history.append(assistant)
        ended_on_stop = ids[-1] in stop_ids
        out.completion_truncated = not ended_on_stop
        last = i == len(turns) - 1
        if not last or open_end or in_prompt:
            delta = chat.env_delta_ids(history, env_messages, ids, ended_on_stop)
            tokens.extend(delta)
            if not in_prompt:
                out.logprobs.extend([0.0] * len(delta))
                out.env_mask.extend([0] * len(delta))
        history.extend(env_messages)
        if in_prompt:
            prompt_len = len(tokens)
    out.prompt_ids = tokens[:prompt_len]
    out.completion_ids = tokens[prompt_len:]
    out.history = history
    return out
