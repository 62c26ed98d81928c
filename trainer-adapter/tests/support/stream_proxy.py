"""A proxy in front of the real server that streams replies through (server-sent events
included) and injects the failures a real network shows, chosen per request by the test:

- ``"drop"``: forward the request, let the server handle it, then close the connection
  without a reply (a lost response: the client cannot tell whether it was applied);
- ``"503"``: answer 503 with ``Retry-After: 0.05`` without forwarding (an overloaded gateway);
- ``"cut"``: forward, pass the reply through up to its first blank line (one server-sent
  event), then close the connection (a stream that breaks mid-way).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import httpx

#: Chooses the fault for the n-th request (1-based) with this method and path; None: pass through.
FaultRule = Callable[[str, str, int], "str | None"]
#: Called with (method, path, n) once the first bytes of a passed-through reply are sent on.
FirstBytesHook = Callable[[str, str, int], None]

_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding", "keep-alive"}


class StreamingProxy:
    def __init__(self, target: str, rule: FaultRule, on_first_bytes: FirstBytesHook | None = None) -> None:
        self.target = target
        self.rule = rule
        self.on_first_bytes = on_first_bytes
        self.seen: list[str] = []
        self._lock = threading.Lock()
        self._upstream = httpx.Client(timeout=httpx.Timeout(60.0, connect=5.0))
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, the body ends when the connection closes,
            # so a streamed reply needs no length and a cut one looks like a clean end.
            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                key = f"{self.command} {self.path.split('?')[0]}"
                with proxy._lock:
                    proxy.seen.append(key)
                    n = proxy.seen.count(key)
                fault = proxy.rule(self.command, self.path.split("?")[0], n)
                if fault == "503":
                    payload = json.dumps({"error": {"code": "service_unavailable", "message": "try again", "request_id": "req_proxy"}}).encode()
                    self.send_response(503)
                    self.send_header("Retry-After", "0.05")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                with proxy._upstream.stream(self.command, proxy.target + self.path, content=body, headers=headers) as resp:
                    if fault == "drop":
                        resp.read()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self.send_response(resp.status_code)
                    for k, v in resp.headers.items():
                        if k.lower() not in _HOP:
                            self.send_header(k, v)
                    self.end_headers()
                    pending = b""
                    first = True
                    for chunk in resp.iter_bytes():
                        if fault == "cut":
                            pending += chunk
                            end = pending.find(b"\n\n")
                            if end >= 0:
                                self.wfile.write(pending[: end + 2])
                                self.wfile.flush()
                                self.close_connection = True
                                self.connection.shutdown(2)
                                return
                            continue
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if first and proxy.on_first_bytes is not None:
                            proxy.on_first_bytes(self.command, self.path.split("?")[0], n)
                        first = False

            do_GET = do_POST = do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def count(self, key: str) -> int:
        with self._lock:
            return self.seen.count(key)

    def __enter__(self) -> "StreamingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._upstream.close()
