"""One asyncio load generator for `npm run bench:peers` (bench/peers.ts starts the servers).

Drives 20-turn echo episodes at each concurrency level against:
  - openenv-core's own server (bench/support/openenv_echo.py), over its /ws session, with a
    new session per episode and with one session reused across episodes;
  - edgegym over HTTP (raw aiohttp) and over its session socket /v1/ws (raw frames);
  - edgegym's own AsyncClient, over the socket and over HTTP (httpx), to show what the
    client costs against the raw aiohttp loop on the same server.
Each path runs for a bounded time per level, 127.0.0.1 only. Prints a markdown table
(steps/s, p50/p99, server CPU per step), the ratios, and idle memory per open episode.

    python bench/peers_load.py '{"edgegym": {"url": ..., "pid": ...}, "openenv": {"url": ..., "pid": ...}, ...}'
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import aiohttp

TURNS = 20
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
ACTION_TEXT = "one two three"


# --- the server's side: CPU, memory, threads of a process tree ------------------------------


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (edgegym serve may run workers as children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    out, pending = [], [pid]
    while pending:
        p = pending.pop()
        out.append(p)
        pending.extend(children.get(p, []))
    return out


def cpu_seconds(pid: int) -> float:
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime + stime
        except OSError:
            pass
    return total / CLK_TCK


def rss_and_threads(pid: int) -> tuple[int, int]:
    rss = threads = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Threads:"):
                        threads += int(line.split()[1])
        except OSError:
            pass
    return rss, threads


# --- sessions: each runs episodes until `until`, recording each step's latency ---------------

Record = Callable[[float], None]
Session = Callable[[Record, float], Awaitable[int]]


async def goodbye(ws: aiohttp.ClientWebSocketResponse) -> None:
    """OpenEnv's close message, then its server's close handshake: it logs a traceback for a
    socket the client closes first."""
    await ws.send_str('{"type":"close"}')
    try:
        await ws.receive(timeout=5)
    except (asyncio.TimeoutError, aiohttp.ClientError):
        pass


def openenv_session(http: aiohttp.ClientSession, url: str, reuse: bool) -> Session:
    ws_url = url.replace("http", "ws", 1) + "/ws"

    async def episode(ws: aiohttp.ClientWebSocketResponse, record: Record, until: float) -> int:
        errors = 0
        await ws.send_str('{"type":"reset","data":{}}')
        if json.loads(await ws.receive_str())["type"] != "observation":
            errors += 1
        for _ in range(TURNS):
            if time.perf_counter() >= until:
                break
            t0 = time.perf_counter()
            await ws.send_str(json.dumps({"type": "step", "data": {"message": ACTION_TEXT}}))
            reply = json.loads(await ws.receive_str())
            record(time.perf_counter() - t0)
            if reply["type"] != "observation":
                errors += 1
            elif reply["data"].get("done"):
                break
        return errors

    async def run(record: Record, until: float) -> int:
        errors = 0
        if reuse:
            async with http.ws_connect(ws_url, max_msg_size=0) as ws:
                while time.perf_counter() < until:
                    errors += await episode(ws, record, until)
                await goodbye(ws)
            return errors
        while time.perf_counter() < until:
            async with http.ws_connect(ws_url, max_msg_size=0) as ws:
                errors += await episode(ws, record, until)
                await goodbye(ws)
        return errors

    return run


def edgegym_http_session(http: aiohttp.ClientSession, url: str) -> Session:
    async def run(record: Record, until: float) -> int:
        errors = 0
        while time.perf_counter() < until:
            async with http.post(f"{url}/v1/envs/bench-echo/episodes", json={}) as r:
                if r.status != 201:
                    errors += 1
                    continue
                episode_id = (await r.json())["episode_id"]
            for turn in range(TURNS):
                if time.perf_counter() >= until:
                    break
                t0 = time.perf_counter()
                async with http.post(f"{url}/v1/episodes/{episode_id}/step", json={"turn": turn, "message": {"role": "assistant", "content": ACTION_TEXT}}) as r:
                    body = await r.json()
                    record(time.perf_counter() - t0)
                    if r.status != 200:
                        errors += 1
                        break
                if body["done"]:
                    break
        return errors

    return run


class RawSocket:
    """Raw frames on one /v1/ws socket shared by every session of a run, matched by id."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            frame = json.loads(msg.data)
            fut = self.pending.pop(frame["id"], None)
            if fut is not None:
                fut.set_result(frame)

    async def ask(self, frame: dict[str, Any]) -> dict[str, Any]:
        rid = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        await self.ws.send_str(json.dumps({"id": rid, **frame}))
        return await fut


def edgegym_socket_session(sock: RawSocket) -> Session:
    async def run(record: Record, until: float) -> int:
        errors = 0
        while time.perf_counter() < until:
            reset = await sock.ask({"op": "reset", "env_id": "bench-echo"})
            if reset["status"] != 201:
                errors += 1
                continue
            episode_id = reset["body"]["episode_id"]
            for turn in range(TURNS):
                if time.perf_counter() >= until:
                    break
                t0 = time.perf_counter()
                reply = await sock.ask({"op": "step", "episode_id": episode_id, "body": {"turn": turn, "message": {"role": "assistant", "content": ACTION_TEXT}}})
                record(time.perf_counter() - t0)
                if reply["status"] != 200:
                    errors += 1
                    break
                if reply["body"]["done"]:
                    break
        return errors

    return run


def edgegym_client_session(gym: Any) -> Session:
    async def run(record: Record, until: float) -> int:
        while time.perf_counter() < until:
            ep = await gym.reset("bench-echo")
            for turn in range(TURNS):
                if time.perf_counter() >= until:
                    break
                t0 = time.perf_counter()
                reply = await gym.step(ep.episode_id, turn, {"role": "assistant", "content": ACTION_TEXT})
                record(time.perf_counter() - t0)
                if reply.done:
                    break
        return 0

    return run


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Result:
    steps: int
    errors: int
    per_second: float
    p50_ms: float
    p99_ms: float
    cpu_us_per_step: float


async def measure(pid: int, level: int, seconds: float, session: Session) -> Result:
    latencies: list[float] = []
    cpu0 = cpu_seconds(pid)
    start = time.perf_counter()
    until = start + seconds
    errors = sum(await asyncio.gather(*[session(latencies.append, until) for _ in range(level)]))
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu0
    latencies.sort()
    n = len(latencies)
    pct = lambda p: latencies[min(n - 1, int(p / 100 * n))] * 1000 if n else float("nan")  # noqa: E731
    return Result(n, errors, n / elapsed, pct(50), pct(99), cpu / n * 1e6 if n else float("nan"))


async def idle_memory(cfg: dict[str, Any], http: aiohttp.ClientSession, count: int) -> list[str]:
    """Server memory per open episode: `count` episodes reset and left open (edgegym: over
    one socket, stored in SQLite; OpenEnv: one session, and so one environment, per socket)."""
    lines = []
    edge = cfg["edgegym"]
    rss0, thr0 = rss_and_threads(edge["pid"])
    async with http.ws_connect(edge["url"].replace("http", "ws", 1) + "/v1/ws", max_msg_size=0) as ws:
        sock = RawSocket(ws)
        for chunk in range(0, count, 64):
            await asyncio.gather(*[sock.ask({"op": "reset", "env_id": "bench-echo"}) for _ in range(min(64, count - chunk))])
        await asyncio.sleep(0.5)
        rss1, thr1 = rss_and_threads(edge["pid"])
    lines.append(f"| edgegym (SQLite, {count} episodes open) | {(rss1 - rss0) / count / 1024:.1f} | {thr1 - thr0} |")
    oe = cfg["openenv"]
    n = min(count, oe.get("max_sessions", 256))
    rss0, thr0 = rss_and_threads(oe["pid"])
    sockets = []
    try:
        for _ in range(n):
            ws = await http.ws_connect(oe["url"].replace("http", "ws", 1) + "/ws", max_msg_size=0)
            await ws.send_str('{"type":"reset","data":{}}')
            await ws.receive_str()
            sockets.append(ws)
        await asyncio.sleep(0.5)
        rss1, thr1 = rss_and_threads(oe["pid"])
    finally:
        await asyncio.gather(*[goodbye(ws) for ws in sockets])
        for ws in sockets:
            await ws.close()
    lines.append(f"| openenv-core {oe.get('version', '')} ({n} sessions open) | {(rss1 - rss0) / n / 1024:.1f} | {thr1 - thr0} |")
    return lines


def fmt(x: float, digits: int = 1) -> str:
    return "–" if x != x else f"{x:,.{digits}f}"


async def main(cfg: dict[str, Any]) -> None:
    levels = [int(x) for x in cfg.get("levels", [1, 16, 64, 256])]
    seconds = float(cfg.get("seconds", 3))
    warmup = float(cfg.get("warmup", 1))
    edge, oe = cfg["edgegym"], cfg["openenv"]
    sys.path.insert(0, cfg["client_path"])
    from edgegym import AsyncClient  # the client under test, from this checkout

    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar()) as http:
        raw_ws = await http.ws_connect(edge["url"].replace("http", "ws", 1) + "/v1/ws", max_msg_size=0)
        sock = RawSocket(raw_ws)
        client_ws = AsyncClient(edge["url"], transport="websocket")
        client_http = AsyncClient(edge["url"], transport="http")
        paths: list[tuple[str, int, Session]] = [
            (f"OpenEnv {oe.get('version', '')}, new session per episode", oe["pid"], openenv_session(http, oe["url"], reuse=False)),
            (f"OpenEnv {oe.get('version', '')}, reused session", oe["pid"], openenv_session(http, oe["url"], reuse=True)),
            ("edgegym HTTP (aiohttp)", edge["pid"], edgegym_http_session(http, edge["url"])),
            ("edgegym /v1/ws (raw frames)", edge["pid"], edgegym_socket_session(sock)),
            ("edgegym AsyncClient, websocket", edge["pid"], edgegym_client_session(client_ws)),
            ("edgegym AsyncClient, http (httpx)", edge["pid"], edgegym_client_session(client_http)),
        ]
        skip = set(cfg.get("skip", []))
        paths = [p for p in paths if not any(s in p[0] for s in skip)]
        print(f"{len(paths)} paths × levels {levels}: {seconds:g} s each after {warmup:g} s warm-up; 20-turn echo episodes; server CPU per step is the server process tree's user+system time over steps")
        print()
        print("| path | concurrent | steps/s | p50 ms | p99 ms | server CPU µs/step | errors |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        results: dict[tuple[str, int], Result] = {}
        for level in levels:
            for name, pid, session in paths:
                if warmup > 0:
                    await measure(pid, min(level, 16), warmup, session)
                r = await measure(pid, level, seconds, session)
                results[(name, level)] = r
                print(f"| {name} | {level} | {fmt(r.per_second, 0)} | {fmt(r.p50_ms, 2)} | {fmt(r.p99_ms, 2)} | {fmt(r.cpu_us_per_step, 0)} | {r.errors} |", flush=True)
        await client_ws.aclose()
        await client_http.aclose()
        await raw_ws.close()

        def ratio(a: str, b: str, level: int) -> str:
            ra = next((v for k, v in results.items() if k[1] == level and a in k[0]), None)
            rb = next((v for k, v in results.items() if k[1] == level and b in k[0]), None)
            return "–" if ra is None or rb is None or not rb.per_second else f"{ra.per_second / rb.per_second:.2f}×"

        print()
        print("| ratio of steps/s | " + " | ".join(str(level) for level in levels) + " |")
        print("|---|" + "---:|" * len(levels))
        for label, a, b in [
            ("edgegym /v1/ws ÷ OpenEnv reused session", "/v1/ws", "reused session"),
            ("edgegym /v1/ws ÷ OpenEnv new session per episode", "/v1/ws", "new session"),
            ("edgegym HTTP ÷ OpenEnv reused session", "edgegym HTTP", "reused session"),
            ("AsyncClient websocket ÷ raw aiohttp HTTP", "AsyncClient, websocket", "edgegym HTTP"),
            ("AsyncClient websocket ÷ raw /v1/ws frames", "AsyncClient, websocket", "/v1/ws"),
            ("AsyncClient http (httpx) ÷ raw aiohttp HTTP", "AsyncClient, http", "edgegym HTTP"),
        ]:
            print(f"| {label} | " + " | ".join(ratio(a, b, level) for level in levels) + " |")

        count = int(cfg.get("idle_episodes", 1000))
        print()
        print("| idle memory | KB of server RSS per open episode | threads added |")
        print("|---|---:|---:|")
        for line in await idle_memory(cfg, http, count):
            print(line)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
