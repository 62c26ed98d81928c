"""tic-tac-toe-2p games for the seat tests: random self-play games played over the client,
and each seat's view of them as supervised transcripts, so the tiny test model learns to
answer ``<move>N</move>`` before reinforcement learning (a model that only writes noise
forfeits as x before o ever moves, and there would be no o trajectory to test)."""

from __future__ import annotations

import random
from typing import Any

from edgegym import Client

from .tiny_model import transcript_ids

ENV = "tic-tac-toe-2p"


def random_game(gym: Client, seed: int, rng: random.Random) -> str:
    """A self-play game to its end, both seats taking random free cells; its episode id."""
    ep = gym.reset(ENV, seed=seed)
    free = list(range(1, 10))
    rng.shuffle(free)
    turn, to_play = 0, ep.to_play
    while to_play is not None:
        step = gym.step(ep.episode_id, turn, {"role": "assistant", "content": f"<move>{free.pop()}</move>"}, seat=to_play)
        turn, to_play = step.turn, step.to_play
    return ep.episode_id


def seat_transcripts(server_url: str, tokenizer: Any, games: int = 24, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """(ids, mask) of each seat's conversation in ``games`` random games, masked to its moves."""
    rng = random.Random(seed)
    out: list[tuple[list[int], list[int]]] = []
    with Client(server_url) as gym:
        for g in range(games):
            episode_id = random_game(gym, 10_000 + g, rng)
            for seat in ("x", "o"):
                view = [m.model_dump(exclude_none=True) for m in gym.episode(episode_id, seat=seat).messages]
                out.append(transcript_ids(tokenizer, view))
            gym.close_episode(episode_id)
    return out
