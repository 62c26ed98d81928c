"""The one error type of the client: what the server said, or why it could not be reached."""

from __future__ import annotations

from typing import Any

import httpx


class EdgegymError(Exception):
    """A failed call.

    ``status`` is the HTTP status (None when no response came back), ``code`` the
    server's stable error code (``turn_conflict``, ``episode_not_found``, …; or
    ``network_error`` / ``deadline_exceeded`` / ``invalid_response`` / ``socket_refused``
    (the server answered the ``/v1/ws`` upgrade with that status) from the client
    itself), ``message`` the server's explanation and ``request_id`` the id to find
    the request in the server's log.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        code: str,
        request_id: str | None = None,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.details = details
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" [{self.status} {self.code}]" if self.status is not None else f" [{self.code}]"
        rid = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.message}{where}{rid}"

    def __repr__(self) -> str:
        return f"EdgegymError(status={self.status!r}, code={self.code!r}, message={self.message!r}, request_id={self.request_id!r})"

    @classmethod
    def from_response(cls, response: httpx.Response, retry_after: float | None = None) -> "EdgegymError":
        """Parses the server's error body; a body that is not one still gives a usable error."""
        request_id = response.headers.get("x-request-id")
        try:
            body = response.json()
            err = body["error"]
            return cls(
                str(err.get("message", "")),
                status=response.status_code,
                code=str(err.get("code", "unknown_error")),
                request_id=str(err.get("request_id") or request_id or "") or None,
                details=err.get("details"),
                retry_after=retry_after,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            text = response.text[:500]
            return cls(
                f"HTTP {response.status_code} without an edgegym error body: {text!r}",
                status=response.status_code,
                code="http_error",
                request_id=request_id,
                retry_after=retry_after,
            )
