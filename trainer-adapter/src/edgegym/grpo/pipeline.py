"""Generation running ahead of training, on its own thread and event loop.

Batch ``n`` may start once the policy has reached version ``n - num_batches_ahead``,
so with ``num_batches_ahead = 1`` the rollouts of step n+1 are generated while step n
trains, and with 0 every batch waits for the previous update (synchronous, on-policy).
"""

from __future__ import annotations

import asyncio
import queue
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from ..rollouts.types import RolloutGroup, TaskRef


class TaskSampler:
    """Which tasks each step trains on: a seeded shuffle of a finite split, epoch after epoch,
    or consecutive seeds of a procedural split. Each task also gets an episode seed, shared
    by its whole group."""

    def __init__(self, size: int | None, split: str, seed: int, position: int = 0) -> None:
        self.size = size
        self.split = split
        self.seed = seed
        self.position = position

    def next(self, n: int) -> list[TaskRef]:
        out = []
        for _ in range(n):
            k = self.position
            self.position += 1
            if self.size is None:
                index = self.seed * 1_000_003 + k
            else:
                if self.size == 0:
                    raise ValueError(f"split {self.split!r} has no rows")
                epoch, offset = divmod(k, self.size)
                order = list(range(self.size))
                random.Random(f"{self.seed}:{epoch}").shuffle(order)
                index = order[offset]
            episode_seed = random.Random(f"{self.seed}:episode:{k}").randrange(2**32)
            out.append(TaskRef(index=index % (2**31), seed=episode_seed, split=self.split))
        return out


@dataclass
class GeneratedBatch:
    step: int
    groups: list[RolloutGroup]
    policy_version: int
    seconds: float


class RolloutPipeline:
    """Produces batches on a background thread; ``get()`` hands them to the trainer in order."""

    def __init__(
        self,
        produce: Callable[[int], Awaitable[list[RolloutGroup]]],
        *,
        num_batches_ahead: int,
        first_step: int,
        policy_version: Callable[[], int],
        on_loop_start: Callable[[], Awaitable[Any]] | None = None,
        on_loop_stop: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.produce = produce
        self.ahead = num_batches_ahead
        self.next_step = first_step
        self.policy_version = policy_version
        self.on_loop_start = on_loop_start
        self.on_loop_stop = on_loop_stop
        self._out: queue.Queue[GeneratedBatch | BaseException] = queue.Queue()
        self._version_changed = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, max_step: int) -> None:
        self.max_step = max_step
        self._thread = threading.Thread(target=self._run, name="edgegym-rollouts", daemon=True)
        self._thread.start()

    def notify_version(self) -> None:
        with self._version_changed:
            self._version_changed.notify_all()

    def _wait_for_version(self, needed: int) -> bool:
        with self._version_changed:
            while self.policy_version() < needed and not self._stop.is_set():
                self._version_changed.wait(timeout=0.5)
        return not self._stop.is_set()

    def _run(self) -> None:
        async def main() -> None:
            if self.on_loop_start:
                await self.on_loop_start()
            try:
                while self.next_step < self.max_step and not self._stop.is_set():
                    step = self.next_step
                    ok = await asyncio.to_thread(self._wait_for_version, step - self.ahead)
                    if not ok:
                        break
                    started = time.monotonic()
                    version = self.policy_version()
                    groups = await self.produce(step)
                    self._out.put(GeneratedBatch(step=step, groups=groups, policy_version=version, seconds=time.monotonic() - started))
                    self.next_step += 1
            finally:
                if self.on_loop_stop:
                    await self.on_loop_stop()

        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the trainer thread
            self._out.put(exc)

    def get(self, timeout: float | None = None) -> GeneratedBatch:
        item = self._out.get(timeout=timeout)
        if isinstance(item, BaseException):
            raise RuntimeError(f"rollout generation failed: {item}") from item
        return item

    def stop(self) -> None:
        self._stop.set()
        self.notify_version()
        if self._thread is not None:
            self._thread.join(timeout=60)
