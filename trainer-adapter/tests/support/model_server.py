"""A small OpenAI-compatible chat-completions server on 127.0.0.1 for the evaluation-job
tests: the edgegym server's model endpoint (EDGEGYM_EVAL_BASE_URL) points here.

It answers reverse-text deterministically, the way a real HTTP model endpoint would be
called (the server's own openai client, over TCP): the last user message reversed, with
``len(text) % 4`` characters cut from the end of the reversal, inside <answer> tags, so
rewards differ from row to row and a test can compute each one by hand (see
``expected_reward``). Requests for the model ``held`` are answered only ``hold_after``
times; later ones wait until ``release()``, so a test can catch a job mid-run.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HELD_MODEL = "held"


def reply_text(user_text: str) -> str:
    reversed_text = user_text[::-1]
    cut = len(user_text) % 4
    return f"<answer>{reversed_text[: len(reversed_text) - cut]}</answer>"


def expected_reward(user_text: str) -> float:
    """reverse-text's reward for ``reply_text``: LCS ratio (weight 1) plus format (weight 0.2).

    The parser trims the answer, which leaves a piece of the reversed text, so their
    longest common subsequence is the answer itself: 2·m / (m + n) for an answer of m
    characters and a text of n. The answer sits alone in its tags: format 1.
    """
    n = len(user_text)
    m = len(reply_text(user_text).removeprefix("<answer>").removesuffix("</answer>").strip())
    return 2 * m / (m + n) + 0.2


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content)
            return content or ""
    return ""


class ModelServer:
    """Start with ``with ModelServer() as model:``; ``model.base_url`` ends in /v1."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self.hold_after = 0
        self._held_answered = 0
        self._gate = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the caller gave up on this request (a cancelled job aborts it)

            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "reverse", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("authorization"))
                    n = len(server.requests)
                    wait = False
                    if body.get("model") == HELD_MODEL:
                        server._held_answered += 1
                        wait = server._held_answered > server.hold_after
                if wait:
                    server._gate.wait(timeout=60)
                user = _last_user_text(body.get("messages", []))
                content = reply_text(user)
                prompt_tokens = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4 + 1
                completion_tokens = len(content) // 4 + 1
                self._json(
                    200,
                    {
                        "id": f"chatcmpl-{n}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
                    },
                )

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def hold(self, after: int) -> None:
        """From now on, answer ``after`` requests for the ``held`` model, then hold the rest."""
        with self._lock:
            self.hold_after = after
            self._held_answered = 0
            self._gate.clear()

    def release(self) -> None:
        """Answer every held request, and every later one at once."""
        self._gate.set()

    def __enter__(self) -> "ModelServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()
