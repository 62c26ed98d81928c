"""bench/echo-env.js for openenv-core: twenty turns, each answered with a short feedback
message ("turn N: W words"), done at the twentieth, reward = words written. Served by
openenv-core's own create_app under uvicorn (one process, state in memory), with room for
1024 concurrent sessions, for `npm run bench:peers`.

    python bench/support/openenv_echo.py PORT
"""

from __future__ import annotations

import random
import sys
from uuid import uuid4

import uvicorn
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

TURNS = 20


class EchoAction(Action):
    message: str


class EchoObservation(Observation):
    feedback: str = ""


class EchoEnvironment(Environment):
    """One instance per WebSocket session (openenv-core's factory mode)."""

    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._words = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: object) -> EchoObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self._words = 0
        # The task, as echo-env.js draws it: a number of words per turn.
        return EchoObservation(feedback=f"Write {random.Random(seed).randint(2, 9)} words per turn.", done=False, reward=0.0)

    def step(self, action: EchoAction, timeout_s: float | None = None, **kwargs: object) -> EchoObservation:  # type: ignore[override]
        self._state.step_count += 1
        words = len(action.message.split())
        self._words += words
        done = self._state.step_count >= TURNS
        return EchoObservation(feedback=f"turn {self._state.step_count - 1}: {words} words", done=done, reward=float(self._words) if done else 0.0)

    @property
    def state(self) -> State:
        return self._state


app = create_app(EchoEnvironment, EchoAction, EchoObservation, env_name="bench_echo", max_concurrent_envs=1024)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
