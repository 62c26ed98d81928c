"""When and how long to wait before retrying a call. Shared by the sync and async clients."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

import httpx

# Statuses that say "try again later" without saying the request was wrong.
RETRYABLE_STATUS = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and full jitter, under an overall deadline.

    Only idempotent calls retry (reads, close, score, stateless scoring, a step with
    its turn, a reset with an idempotency key); the server makes each of those safe to
    repeat. ``Retry-After`` on 429/503 is honoured (never waiting past the deadline).
    """

    #: Attempts in all, the first included. 1 turns retries off.
    max_attempts: int = 6
    #: First backoff; doubles each retry.
    initial_backoff: float = 0.2
    #: Ceiling of one backoff.
    max_backoff: float = 10.0
    #: Seconds from the first attempt after which no new attempt starts.
    deadline: float = 120.0

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """Full jitter (uniform in [0, cap]) spreads retries of many clients apart."""
        cap = min(self.max_backoff, self.initial_backoff * (2 ** (attempt - 1)))
        return (rng or random).uniform(0, cap)


NO_RETRY = RetryPolicy(max_attempts=1)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def is_retryable_exception(exc: BaseException) -> bool:
    """Connection failures and timeouts: the request may or may not have arrived."""
    return isinstance(exc, httpx.TransportError)


def next_wait(policy: RetryPolicy, attempt: int, started: float, retry_after: float | None) -> float | None:
    """Seconds to sleep before attempt ``attempt + 1``, or None when retries are used up."""
    if attempt >= policy.max_attempts:
        return None
    wait = retry_after if retry_after is not None else policy.backoff(attempt)
    remaining = policy.deadline - (time.monotonic() - started)
    if remaining <= 0 or wait > remaining:
        return None
    return wait
