"""Following an evaluation job's server-sent events, and reading its JSONL results:
the parts shared by the sync and async clients (the clients only move the bytes).

The event stream sends a ``progress`` event (an EvalProgressEvent) at once and as
rollouts land, then one ``done`` event (the whole EvalJob) and closes. Reading it is
safe to repeat, so a dropped connection, a retryable status, or a stream that closes
before ``done`` (a server restarting) reconnects under the client's RetryPolicy. The
policy's attempts and deadline count from the last event received, so a long job is
followed for as long as it runs while a server that stays away still ends the wait.
"""

from __future__ import annotations

import time
from typing import Union

import httpx
from httpx_sse import ServerSentEvent
from pydantic import BaseModel, ValidationError

from . import _calls
from . import models as m
from ._retry import RETRYABLE_STATUS, RetryPolicy, is_retryable_exception, next_wait, parse_retry_after
from .errors import EdgegymError

#: What following a job yields: progress, then the ended job (always last).
EvalEvent = Union[m.EvalProgressEvent, m.EvalJob]


def _invalid(call: _calls.Call[BaseModel], status: int, request_id: str | None, exc: Exception) -> EdgegymError:
    return EdgegymError(
        f"{call.method} {call.path}: response does not match the protocol: {exc}",
        status=status,
        code="invalid_response",
        request_id=request_id,
    )


class EventFollower:
    """State of one ``eval_events`` call across reconnects."""

    def __init__(self, call: _calls.Call[m.EvalProgressEvent], policy: RetryPolicy) -> None:
        self.call = call
        self.policy = policy
        self.started = time.monotonic()
        self.attempt = 0
        self.last: m.EvalProgressEvent | None = None
        self.finished = False

    def begin_attempt(self) -> None:
        self.attempt += 1

    def invalid(self, response: httpx.Response | None, exc: Exception) -> EdgegymError:
        status = response.status_code if response is not None else None
        request_id = response.headers.get("x-request-id") if response is not None else None
        return EdgegymError(
            f"{self.call.method} {self.call.path}: not an event stream: {exc}",
            status=status,
            code="invalid_response",
            request_id=request_id,
        )

    def on_event(self, sse: ServerSentEvent, response: httpx.Response) -> EvalEvent | None:
        """The parsed event to yield, or None for one to skip (a reconnect's repeat, an unknown kind)."""
        request_id = response.headers.get("x-request-id")
        if sse.event == "done":
            try:
                job = m.EvalJob.model_validate_json(sse.data)
            except ValidationError as exc:
                raise _invalid(self.call, response.status_code, request_id, exc) from exc
            self.finished = True
            return job
        if sse.event != "progress":
            return None  # a kind this client does not know yet: additive, skip it
        try:
            event = m.EvalProgressEvent.model_validate_json(sse.data)
        except ValidationError as exc:
            raise _invalid(self.call, response.status_code, request_id, exc) from exc
        # The stream is alive: the retry budget starts over.
        self.attempt = 0
        self.started = time.monotonic()
        if event == self.last:
            return None  # the first event after a reconnect repeats what was already seen
        self.last = event
        return event

    def wait_before_retry(self, response: httpx.Response | None, error: BaseException | None) -> float:
        """Seconds to wait before reconnecting, or raises when this failure is final.

        ``response`` is the failed or closed-early response (its body read), ``error`` the
        transport error; both None never happens.
        """
        if response is not None and not response.is_success:
            retryable = response.status_code in RETRYABLE_STATUS
            retry_after = parse_retry_after(response.headers.get("retry-after"))
        else:
            retryable = error is None or is_retryable_exception(error)
            retry_after = None
        wait = next_wait(self.policy, max(self.attempt, 1), self.started, retry_after) if retryable else None
        if wait is not None:
            return wait
        if response is not None and not response.is_success:
            raise EdgegymError.from_response(response, retry_after) from error
        why = f"{type(error).__name__}: {error}" if error is not None else "the stream closed before the job ended"
        raise EdgegymError(
            f"{self.call.method} {self.call.path}: {why} (gave up after {self.attempt} attempts)",
            status=None,
            code="network_error",
        ) from error


def parse_lines(call: _calls.Call[m.EvalRollout], response: httpx.Response) -> list[m.EvalRollout]:
    """A JSONL body as one model per non-empty line."""
    rows: list[m.EvalRollout] = []
    for n, line in enumerate(response.content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(call.returns.model_validate_json(line))
        except ValidationError as exc:
            raise _invalid(call, response.status_code, response.headers.get("x-request-id"), ValueError(f"line {n}: {exc}")) from exc
    return rows
