"""The client against the real server: round trips, error codes, retries that never double-apply,
and the pydantic models checked against the checked-in OpenAPI document."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from edgegym import AsyncClient, Client, EdgegymError, RetryPolicy, models
from edgegym._retry import parse_retry_after

from support.server import REPO, EdgegymServer

FAST = RetryPolicy(max_attempts=5, initial_backoff=0.01, max_backoff=0.05, deadline=10)


def test_round_trip(server):
    with Client(server.url) as gym:
        assert gym.health().status == "ok"
        ids = [e.id for e in gym.envs().envs]
        assert {"letter-a", "guess-number", "calculator", "reverse-text"} <= set(ids)
        calc = gym.env("calculator")
        assert calc.kind == "tool" and calc.tools[0].function.name == "add"
        page = gym.examples("reverse-text", split="train", offset=2, limit=3)
        assert [e.index for e in page.examples] == [2, 3, 4] and page.total is not None

        ep = gym.reset("calculator", index=5, seed=9, metadata={"run": "t"})
        assert ep.turn == 0 and ep.index == 5 and ep.seed == 9 and ep.tools
        call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": json.dumps({"a": 2, "b": 3})}}
        step = gym.step(ep.episode_id, 0, {"role": "assistant", "content": None, "tool_calls": [call]})
        assert step.turn == 1 and not step.done
        assert isinstance(step.messages[0], models.ToolMessage) and step.messages[0].content == "5"
        done = gym.step(ep.episode_id, 1, models.AssistantMessage(content="The sum is 5."))
        assert done.done and done.stop_reason == "no_tool_calls"
        scored = gym.score(ep.episode_id)
        assert {c.name for c in scored.score.components} == {"correct", "tool_calls"}
        assert scored.score.metrics["tool_calls"] == 1
        full = gym.episode(ep.episode_id)
        assert full.metadata == {"run": "t"} and full.score is not None and len(full.messages) == len(ep.messages) + 3
        assert ep.env_hash.startswith("sha256:") and full.env_hash == ep.env_hash == calc.hash
        again = gym.rescore(ep.episode_id, rubric="current")
        assert again.score == scored.score and again.previous_score == scored.score and not again.saved
        assert again.env_hash == again.episode_env_hash == ep.env_hash
        assert gym.close_episode(ep.episode_id).status in ("closed", "done")

        result = gym.score_completions(
            "letter-a",
            [{"prompt": "Pick", "completion": "A", "group": "g"}, {"prompt": "Pick", "completion": "B", "group": "g"}],
            scale_advantages=False,
        )
        assert [r.score.reward for r in result.results] == [1.0, 0.0]
        assert [r.advantage for r in result.results] == [0.5, -0.5]


def test_async_client_same_methods(server):
    async def main():
        async with AsyncClient(server.url) as gym:
            ep = await gym.reset("guess-number", index=3, seed=3)
            step = await gym.step(ep.episode_id, 0, {"role": "assistant", "content": "5"})
            assert step.turn == 1
            eps = await asyncio.gather(*[gym.reset("letter-a", index=i) for i in range(8)])
            assert len({e.episode_id for e in eps}) == 8
            return await gym.score(ep.episode_id)

    assert asyncio.run(main()).score.reward in (0.0, 1.0)


def test_error_codes(server):
    with Client(server.url, retry=FAST) as gym:
        with pytest.raises(EdgegymError) as err:
            gym.env("nope")
        assert err.value.status == 404 and err.value.code == "env_not_found" and err.value.request_id
        with pytest.raises(EdgegymError) as err:
            gym.step("ep_missing", 0, {"role": "assistant", "content": "x"})
        assert (err.value.status, err.value.code) == (404, "episode_not_found")
        with pytest.raises(EdgegymError) as err:
            gym.reset("reverse-text", index=10_000)
        assert (err.value.status, err.value.code) == (422, "task_out_of_range")
        with pytest.raises(EdgegymError) as err:
            gym.reset("letter-a", args={"unknown": 1})
        assert (err.value.status, err.value.code) == (422, "invalid_env_args")

        ep = gym.reset("guess-number", index=1, seed=1)
        gym.step(ep.episode_id, 0, {"role": "assistant", "content": "1"})
        with pytest.raises(EdgegymError) as err:  # a different message at a turn already taken
            gym.step(ep.episode_id, 0, {"role": "assistant", "content": "2"})
        assert (err.value.status, err.value.code) == (409, "turn_conflict")
        with pytest.raises(EdgegymError) as err:
            gym.reset("letter-a", index=1, idempotency_key="k-1")
            gym.reset("letter-a", index=2, idempotency_key="k-1")
        assert (err.value.status, err.value.code) == (409, "idempotency_key_reused")


def test_auth_error(tmp_path):
    with EdgegymServer(tmp_path, env_module=False, api_keys="sk-test") as srv:
        with pytest.raises(EdgegymError) as err:
            Client(srv.url).envs()
        assert (err.value.status, err.value.code) == (401, "unauthorized")
        assert Client(srv.url, api_key="sk-test").envs().envs


class FaultyProxy:
    """Forwards to the real server, but drops the first reply of chosen requests after the
    server has handled them (the client sees a broken connection or a 503 with
    Retry-After), the way a lost response looks on a real network."""

    def __init__(self, target: str, mode: str):
        self.target = target
        self.mode = mode  # "drop" or "503"
        self.seen: dict[str, int] = {}
        self.forwarded: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _handle(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                key = f"{self.command} {self.path.split('?')[0]}"
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                resp = httpx.request(self.command, proxy.target + self.path, content=body, headers=headers)
                proxy.forwarded.append(key)
                n = proxy.seen.get(key, 0)
                proxy.seen[key] = n + 1
                if n == 0 and self.command == "POST":
                    if proxy.mode == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self.send_response(503)
                    self.send_header("Retry-After", "0.05")
                    self.send_header("Content-Type", "application/json")
                    payload = json.dumps({"error": {"code": "service_unavailable", "message": "try again", "request_id": "req_proxy"}}).encode()
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(resp.status_code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(resp.content)))
                self.end_headers()
                self.wfile.write(resp.content)

            do_GET = do_POST = do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("mode", ["drop", "503"])
def test_retries_do_not_double_apply(server, mode):
    with FaultyProxy(server.url, mode) as proxy, Client(proxy.url, retry=FAST) as gym:
        ep = gym.reset("calculator", index=2, seed=2)  # first reply lost: the retry must return the same episode
        assert proxy.forwarded.count("POST /v1/envs/calculator/episodes") == 2
        call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'}}
        step = gym.step(ep.episode_id, 0, {"role": "assistant", "content": None, "tool_calls": [call]})
        assert proxy.forwarded.count(f"POST /v1/episodes/{ep.episode_id}/step") == 2
        assert step.turn == 1
        gym.step(ep.episode_id, 1, {"role": "assistant", "content": "2"})
        score = gym.score(ep.episode_id)
    with Client(server.url) as direct:
        full = direct.episode(ep.episode_id)
    # Reset applied once (the transcript has one opening), the tool ran once, two assistant turns.
    assert full.turn == 2
    assert [m.role for m in full.messages].count("assistant") == 2
    assert score.score.metrics["tool_calls"] == 1
    assert full.score is not None and full.score.metrics["tool_calls"] == 1


def test_retry_of_a_lost_fork_reply_starts_no_second_set(server):
    with FaultyProxy(server.url, "drop") as proxy, Client(proxy.url, retry=FAST) as gym:
        ep = gym.reset("guess-number", index=4, seed=4)
        forked = gym.fork(ep.episode_id, n=3)  # first reply lost: the retry carries the same key
        assert proxy.forwarded.count(f"POST /v1/episodes/{ep.episode_id}/fork") == 2
    with Client(server.url) as gym:
        again = gym.fork(ep.episode_id, n=3, idempotency_key="same")
        replay = gym.fork(ep.episode_id, n=3, idempotency_key="same")
        assert [e.episode_id for e in replay.episodes] == [e.episode_id for e in again.episodes]
        with pytest.raises(EdgegymError) as err:
            gym.fork(ep.episode_id, n=2, idempotency_key="same")
        assert (err.value.status, err.value.code) == (409, "idempotency_key_reused")
    assert len({e.episode_id for e in forked.episodes}) == 3 and forked.turn == 0


# --- long-horizon: paging, forks, sampled tokens -------------------------------------------------------


def _guess(gym, episode_id, turn, text, tokens=None, template="sha256:t1"):
    sampled = None if tokens is None else {"token_ids": tokens, "logprobs": [-0.5] * len(tokens), "template_hash": template}
    return gym.step(episode_id, turn, {"role": "assistant", "content": text}, sampled)


def _wrong_guesses(secret):
    """Three guesses that miss, so an episode runs all its turns."""
    return [g for g in range(1, 10) if g != secret][:3]


def test_paging_forks_and_sampled_tokens(server):
    with Client(server.url) as gym:
        ep = gym.reset("guess-number", index=7, seed=7)
        secret = int(gym.examples("guess-number", offset=7, limit=1).examples[0].answer or 0)
        g1, g2, _ = _wrong_guesses(secret)
        first = _guess(gym, ep.episode_id, 0, str(g1), tokens=[5, 6, 7])
        assert first.template_change is None and first.turn == 1
        second = _guess(gym, ep.episode_id, 1, str(g2), tokens=[8, 9], template="sha256:t2")
        assert second.template_change is not None
        assert (second.template_change.turn, second.template_change.from_, second.template_change.to) == (2, "sha256:t1", "sha256:t2")

        full = gym.episode(ep.episode_id)
        assert full.from_turn == 0 and full.next_from_turn is None and full.parent is None
        assert [t.turn for t in full.turns] == [0, 1, 2] and full.turns[0].sampled is None
        assert full.turns[1].sampled.token_ids == [5, 6, 7] and full.turns[1].sampled.logprobs == [-0.5] * 3
        assert [c.turn for c in full.template_changes] == [2]
        assert sum(t.message_count for t in full.turns) == len(full.messages)

        page = gym.episode(ep.episode_id, from_turn=1, limit=1)
        assert page.from_turn == 1 and page.next_from_turn == 2 and [t.turn for t in page.turns] == [1]
        assert page.messages[0].content == str(g1)
        pages = list(gym.episode_pages(ep.episode_id, page_turns=1))
        assert [p.from_turn for p in pages] == [0, 1, 2]
        assert [m for p in pages for m in p.messages] == full.messages
        assert gym.episode(ep.episode_id, from_turn=99).messages == []

        forked = gym.fork(ep.episode_id, turn=1, n=2, metadata={"node": "a"})
        assert forked.turn == 1 and forked.parent.episode_id == ep.episode_id and len(forked.episodes) == 2
        a, b = (e.episode_id for e in forked.episodes)
        # Independent branches from the same state: the same message gives the parent's reply.
        replay = _guess(gym, a, 1, str(g2), tokens=[8, 9])
        assert [m.content for m in replay.messages] == [m.content for m in second.messages]
        other = _guess(gym, b, 1, str(secret), tokens=[1])
        assert other.done and other.stop_reason == "solved"
        fa = gym.episode(a)
        assert fa.parent.episode_id == ep.episode_id and fa.parent.turn == 1 and fa.metadata == {"node": "a"}
        assert fa.turns[1].sampled.token_ids == [5, 6, 7]  # the prefix's tokens come with the fork
        assert fa.messages[: len(full.messages)] == full.messages and fa.template_changes == []
        assert gym.episode(ep.episode_id).turn == 2  # the parent is unchanged

        # The parent lists its forks, a page at a time; b scored itself by finishing (done, reward set on score).
        gym.score(b)
        first = gym.forks(ep.episode_id, limit=1)
        second = gym.forks(ep.episode_id, limit=1, cursor=first.next_cursor)
        assert first.next_cursor is not None and second.next_cursor is None
        listed = {f.episode_id: f for f in first.forks + second.forks}
        assert set(listed) == {a, b} and all(f.fork_turn == 1 for f in listed.values())
        assert listed[b].status == "done" and listed[b].reward is not None and listed[a].reward is None
        assert gym.forks(a).forks == [] and gym.forks(a).next_cursor is None
        with pytest.raises(ValueError):
            gym.forks(a, limit=201)
        with pytest.raises(EdgegymError) as err:
            gym.forks("ep_none")
        assert (err.value.status, err.value.code) == (404, "episode_not_found")

        with pytest.raises(EdgegymError) as err:
            gym.fork(ep.episode_id, turn=9)
        assert (err.value.status, err.value.code) == (409, "turn_conflict")
        with pytest.raises(EdgegymError) as err:
            gym.fork(b)  # b is done at its current turn: nothing to step
        assert (err.value.status, err.value.code) == (409, "episode_done")
        with pytest.raises(ValueError):
            gym.step(a, 2, {"role": "assistant", "content": "1"}, {"token_ids": [1, 2], "logprobs": [0.0], "template_hash": "h"})
        with pytest.raises(ValueError):
            gym.episode(a, limit=1001)
        with pytest.raises(Exception):  # not a template hash: spaces are refused before sending
            gym.step(a, 2, {"role": "assistant", "content": "1"}, {"token_ids": [1], "template_hash": ""})


def test_async_paging_and_forks(server):
    async def main():
        async with AsyncClient(server.url) as gym:
            ep = await gym.reset("guess-number", index=8, seed=8)
            await gym.step(ep.episode_id, 0, {"role": "assistant", "content": "x"}, {"token_ids": [3], "logprobs": [-1.0], "template_hash": "h1"})
            forked = await gym.fork(ep.episode_id, n=2, idempotency_key="async-k")
            again = await gym.fork(ep.episode_id, n=2, idempotency_key="async-k")
            pages = [p async for p in gym.episode_pages(forked.episodes[0].episode_id, page_turns=1)]
            page = await gym.episode(ep.episode_id, from_turn=1, limit=1)
            listed = await gym.forks(ep.episode_id)
            return forked, again, pages, page, listed

    forked, again, pages, page, listed = asyncio.run(main())
    assert forked.turn == 1 and [e.episode_id for e in forked.episodes] == [e.episode_id for e in again.episodes]
    assert sorted(f.episode_id for f in listed.forks) == sorted(e.episode_id for e in forked.episodes) and listed.next_cursor is None
    assert [p.from_turn for p in pages] == [0, 1] and pages[1].turns[0].sampled.token_ids == [3]
    assert page.turns[0].sampled.template_hash == "h1"


def test_a_page_cursor_that_does_not_advance_is_refused(server):
    """A hostile or broken server answering the same cursor again must not page forever."""
    with Client(server.url) as gym:
        ep = gym.reset("guess-number", index=9, seed=9)
        gym.step(ep.episode_id, 0, {"role": "assistant", "content": "x"})
        page = gym.episode(ep.episode_id, from_turn=0, limit=1).model_dump(mode="json", by_alias=True)
    assert page["next_from_turn"] == 1
    served: list[str] = []

    class Stuck(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            served.append(self.path)
            body = json.dumps({**page, "next_from_turn": int(self.path.rsplit("from_turn=", 1)[1].split("&")[0])}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Stuck)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{httpd.server_address[1]}") as stuck:
            with pytest.raises(EdgegymError) as err:
                list(stuck.episode_pages(ep.episode_id, page_turns=1))
        assert err.value.code == "invalid_response" and len(served) == 1
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_clients_have_the_same_long_horizon_methods():
    import inspect

    for name in ("step", "episode", "episode_pages", "fork"):
        sync, aio = getattr(Client, name), getattr(AsyncClient, name)
        assert inspect.signature(sync) == inspect.signature(aio) or str(inspect.signature(sync)).replace("Iterator", "AsyncIterator") == str(inspect.signature(aio)), name
        assert sync.__doc__ == aio.__doc__, name


def test_retry_gives_up_on_deadline_and_honours_retry_after():
    hits: list[float] = []

    class Busy(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            hits.append(time.monotonic())
            payload = b'{"error":{"code":"rate_limited","message":"slow down","request_id":"req_1"}}'
            self.send_response(429)
            self.send_header("Retry-After", "0.2")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        gym = Client(f"http://127.0.0.1:{httpd.server_address[1]}", retry=RetryPolicy(max_attempts=10, deadline=0.7))
        with pytest.raises(EdgegymError) as err:
            gym.envs()
        assert err.value.status == 429 and err.value.code == "rate_limited" and err.value.retry_after == pytest.approx(0.2)
        gaps = [b - a for a, b in zip(hits, hits[1:])]
        assert 2 <= len(hits) <= 4 and all(g >= 0.19 for g in gaps)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)


def test_network_error_is_edgegym_error():
    gym = Client("http://127.0.0.1:9", retry=RetryPolicy(max_attempts=2, initial_backoff=0.01, deadline=2))
    with pytest.raises(EdgegymError) as err:
        gym.health()
    assert err.value.status is None and err.value.code == "network_error"


# --- the models match openapi/openapi.json -----------------------------------------------------------


def _aliases(model):
    return {f.alias or name for name, f in model.model_fields.items()}


def _required(model):
    return {f.alias or name for name, f in model.model_fields.items() if f.is_required()}


def _check_object(name, schema, model, problems):
    props = set(schema.get("properties", {}))
    if props != _aliases(model):
        problems.append(f"{name}: properties {sorted(props)} vs {model.__name__} fields {sorted(_aliases(model))}")
    required = set(schema.get("required", []))
    # A field the server always sends may be optional in a request model when it has a default there.
    model_required = _required(model)
    if not model_required <= required:
        problems.append(f"{name}: {model.__name__} requires {sorted(model_required - required)} that the schema does not")
    if issubclass(model, models._Response) and required - model_required - _defaults_none(model):
        problems.append(f"{name}: schema requires {sorted(required - model_required)} but {model.__name__} makes them optional")


def _defaults_none(model):
    return {n for n, f in model.model_fields.items() if not f.is_required()}


def _nested_schema(schema, path, schemas):
    """The schema at a NESTED_MODELS path: dotted property names, ``[]`` for an array's items
    (a ``$ref`` to a component, alone or as the one member of ``allOf``, is followed)."""

    def deref(s):
        if "allOf" in s and len(s["allOf"]) == 1:
            s = s["allOf"][0]
        return schemas[s["$ref"].split("/")[-1]] if "$ref" in s else s

    for part in path.split("."):
        schema = deref(deref(schema)["properties"][part.removesuffix("[]")])
        if part.endswith("[]"):
            schema = deref(schema["items"])
    return schema


def test_models_match_openapi():
    doc = json.loads((REPO / "openapi" / "openapi.json").read_text())
    schemas = doc["components"]["schemas"]
    problems: list[str] = []
    for name, schema in schemas.items():
        if name in models.SCHEMA_UNIONS:
            refs = {s["$ref"].split("/")[-1] for s in schema.get("oneOf", schema.get("anyOf", []))}
            members = {m.__name__ for m in models.SCHEMA_UNIONS[name]}
            if refs != members:
                problems.append(f"{name}: union of {sorted(refs)} vs {sorted(members)}")
            continue
        model = models.SCHEMA_MODELS.get(name)
        if model is None:
            problems.append(f"schema {name} has no pydantic model: add it to edgegym/models.py and SCHEMA_MODELS")
            continue
        _check_object(name, schema, model, problems)
        for (owner, path), nested in models.NESTED_MODELS.items():
            if owner == name:
                _check_object(f"{name}.{path}", _nested_schema(schema, path, schemas), nested, problems)
    assert not problems, "\n".join(problems)
    # Every documented error code is one the models know.
    codes = set(schemas["Error"]["properties"]["error"]["properties"]["code"]["enum"])
    assert codes == set(models.ErrorCode.__args__)


def test_models_parse_the_documents_examples():
    doc = json.loads((Path(REPO) / "openapi" / "openapi.json").read_text())
    for name, schema in doc["components"]["schemas"].items():
        if "example" in schema and name in models.SCHEMA_MODELS:
            models.SCHEMA_MODELS[name].model_validate(schema["example"])
