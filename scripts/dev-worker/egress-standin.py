#!/usr/bin/env python3
"""edgegym's stand-in for Cloudflare's container networking sidecar (`cloudflare/proxy-everything`).

Dev only: `wrangler dev` (workerd) starts one sidecar per container instance and puts the app
container in its network namespace; on machines that cannot pull Cloudflare's image,
scripts/dev-worker/containers-dev.mjs points MINIFLARE_CONTAINER_EGRESS_IMAGE at an image of this
file (scripts/dev-worker/egress-standin-image.sh). It is never part of a deploy.

What it does, on the ingress address workerd passes (`--http-ingress-address HOST:PORT`):
- `CONNECT` with header `X-Dst-Addr: ip:port` (else the request target): dials that address
  (the app container, which shares this network namespace), answers 200 and tunnels both ways;
- `PUT /egress`: reads the egress configuration workerd sends and answers 200 (ignoring it);
- `GET /ca`: the PEM of a self-signed test-only certificate (workerd reads it at every start);
- anything else: 404.
The other flags workerd passes (`--http-egress-port N`, `--docker-gateway-cidr CIDR`,
`--dns-enabled`, `--tls-intercept`, `--disable-ipv6`, ...) are accepted and ignored.

NOT emulated: egress policy. Nothing intercepts the container's outbound traffic, so
`enableInternet: false` is not enforced locally, outbound handlers (`outboundByHost`, ...) never
run, and no DNS filtering or TLS interception happens; the container reaches whatever the Docker
bridge reaches. Python 3 standard library only; one thread per connection, at most
EDGEGYM_EGRESS_MAX_CONNECTIONS (default 256) at once.
"""

import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_CA = "/etc/edgegym-egress/ca.pem"
DIAL_TIMEOUT_S = 10.0
BUFFER = 64 * 1024


def log(message):
    print(f"egress-standin: {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    """The ingress address and the CA file; every other argument is ignored (see the module doc)."""
    ingress = "0.0.0.0:39001"
    ca = os.environ.get("EDGEGYM_EGRESS_CA", DEFAULT_CA)
    ignored = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in ("--http-ingress-address", "--ca-file"):
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            if name == "--http-ingress-address":
                ingress = value
            else:
                ca = value
        else:
            ignored.append(arg)
        i += 1
    return ingress, ca, ignored


def split_host_port(address):
    """`ip:port`, `host:port` or `[v6]:port` into (host, port)."""
    host, _, port = address.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not a host:port: {address!r}")
    return host, int(port)


def pump(source_read, dest):
    """Copies until EOF, then half-closes dest so the other side sees the end."""
    try:
        while True:
            data = source_read(BUFFER)
            if not data:
                break
            dest.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dest.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "edgegym-egress-standin"
    ca_pem = b""

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        if os.environ.get("EDGEGYM_EGRESS_VERBOSE"):
            log(format % args)

    def reply(self, status, body=b"", content_type="text/plain; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def discard_body(self):
        """Reads the request body (sized or chunked) so that the connection can be reused."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            while True:
                size_line = self.rfile.readline(1024)
                if not size_line:
                    self.close_connection = True
                    return
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    self.close_connection = True
                    return
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailer fields
                    return
                self.rfile.read(size + 2)
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            chunk = self.rfile.read(min(length, BUFFER))
            if not chunk:
                break
            length -= len(chunk)

    def do_CONNECT(self):
        target = self.headers.get("X-Dst-Addr") or self.path
        try:
            host, port = split_host_port(target)
            upstream = socket.create_connection((host, port), timeout=DIAL_TIMEOUT_S)
        except (OSError, ValueError) as err:
            # A container that is still starting refuses connections: workerd retries, so no log.
            self.close_connection = True
            self.reply(502, f"cannot reach {target}: {err}\n".encode())
            return
        upstream.settimeout(None)
        self.close_connection = True
        self.send_response(200)
        self.end_headers()
        self.wfile.flush()
        back = threading.Thread(target=pump, args=(upstream.recv, self.connection), daemon=True)
        back.start()
        # rfile first: it may hold bytes the client sent right after the CONNECT head.
        pump(self.rfile.read1, upstream)
        back.join()
        upstream.close()

    def do_PUT(self):
        self.discard_body()
        self.reply(200 if self.path.split("?")[0] == "/egress" else 404)

    def do_GET(self):
        if self.path.split("?")[0] == "/ca" and self.ca_pem:
            self.reply(200, self.ca_pem, "application/x-pem-file")
        else:
            self.reply(404, b"not found\n")

    def fallback(self):
        self.discard_body()
        self.reply(404, b"not found\n")

    do_POST = do_DELETE = do_PATCH = do_HEAD = fallback


class BoundedServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, max_connections):
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.address_family = family
        self.slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        # Blocks the accept loop while all slots are taken: further clients wait in the backlog.
        self.slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def main(argv):
    ingress, ca_path, ignored = parse_args(argv)
    host, port = split_host_port(ingress)
    try:
        with open(ca_path, "rb") as f:
            Handler.ca_pem = f.read()
    except OSError as err:
        log(f"no CA certificate at {ca_path} ({err}): GET /ca answers 404")
    max_connections = int(os.environ.get("EDGEGYM_EGRESS_MAX_CONNECTIONS") or 256)
    server = BoundedServer((host, port), Handler, max_connections)
    # As a container's PID 1, SIGTERM is ignored unless handled: exit on it (docker stop).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log(f"listening on {ingress} (CONNECT with X-Dst-Addr, PUT /egress, GET /ca); egress policy is not emulated")
    if ignored:
        log(f"ignoring arguments: {' '.join(ignored)}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
