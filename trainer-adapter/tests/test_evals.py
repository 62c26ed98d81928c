"""Evaluation jobs through the client, against the real server whose model endpoint is a
deterministic OpenAI-compatible server this module starts (support/model_server.py):
create, follow the event stream to the end, read the results, cancel, the concurrency
budget, error codes, and which calls retry (reads, cancel, the stream) and which do not
(creating a job)."""

from __future__ import annotations

import asyncio
import statistics

import httpx
import pytest

from edgegym import AsyncClient, Client, EdgegymError, RetryPolicy, models
from pydantic import ValidationError

from support.model_server import HELD_MODEL, ModelServer, expected_reward
from support.server import EdgegymServer
from support.stream_proxy import StreamingProxy

FAST = RetryPolicy(max_attempts=5, initial_backoff=0.01, max_backoff=0.05, deadline=20)
#: The model endpoint's key: the server sends it to the model, and must never send it back.
EVAL_KEY = "sk-eval-5b0d7c1e9a-never-echoed"
#: The server's budget of concurrent model requests across all jobs.
SLOTS = 8


@pytest.fixture(scope="module")
def model():
    with ModelServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def eval_server(tmp_path_factory: pytest.TempPathFactory, model: ModelServer):
    env = {
        "EDGEGYM_EVAL_BASE_URL": model.base_url,
        "EDGEGYM_EVAL_API_KEY": EVAL_KEY,
        "EDGEGYM_EVAL_MODEL": "reverse",
        "EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS": str(SLOTS),
    }
    with EdgegymServer(tmp_path_factory.mktemp("evals"), env_module=False, env=env) as srv:
        yield srv


def _follow(gym: Client, eval_id: str) -> tuple[list[models.EvalProgressEvent], models.EvalJob]:
    events = list(gym.eval_events(eval_id))
    assert isinstance(events[-1], models.EvalJob), "the last event is the ended job"
    progress = events[:-1]
    assert progress and all(isinstance(e, models.EvalProgressEvent) for e in progress)
    return progress, events[-1]  # type: ignore[return-value]


def _check_progress(progress: list[models.EvalProgressEvent], eval_id: str, total: int) -> None:
    assert all(e.eval_id == eval_id and e.progress.total == total for e in progress)
    done = [e.progress.done for e in progress]
    assert done == sorted(done), "progress never goes back"
    assert all(a != b for a, b in zip(progress, progress[1:])), "no event repeats the one before"


def test_eval_job_end_to_end(eval_server, model):
    with Client(eval_server.url, retry=FAST) as gym:
        asked_before = len(model.requests)
        job = gym.create_eval("reverse-text", num_examples=3, rollouts_per_example=2, max_concurrent=4, temperature=0.0)
        assert job.eval_id.startswith("ev_") and job.env_id == "reverse-text" and job.model == "reverse"
        assert job.status in ("queued", "running", "completed") and job.progress.total == 6
        # The server echoes the options with its defaults filled in (and the split it chose).
        assert (job.request.num_examples, job.request.rollouts_per_example, job.request.max_concurrent) == (3, 2, 4)
        assert (job.request.seed, job.request.max_retries, job.request.split, job.request.temperature) == (0, 3, "eval", 0.0)

        progress, ended = _follow(gym, job.eval_id)
        _check_progress(progress, job.eval_id, 6)
        assert ended.status == "completed" and ended.ended and ended.error is None and ended.finished_at
        assert ended.progress.done == 6 and ended.progress.errors == 0
        assert gym.eval(job.eval_id) == ended

        rows = gym.eval_results(job.eval_id)
        assert [(r.example_id, r.rollout_index) for r in rows] == [(i, k) for i in range(3) for k in range(2)]
        # Each row's prompt is the eval split's row as the examples route shows it.
        examples = {e.index: e for e in gym.examples("reverse-text", split="eval", offset=0, limit=3).examples}
        for row in rows:
            user = row.prompt[-1]
            assert isinstance(user, models.UserMessage)
            assert user.content == examples[row.example_id].prompt[-1].content
            want = expected_reward(models.content_text(user.content))
            assert row.reward == pytest.approx(want, abs=1e-12)
            scores = {c.name: c.score for c in row.components}
            assert scores["format"] == 1.0 and scores["lcs_ratio"] == pytest.approx(want - 0.2, abs=1e-12)
            assert row.metrics["lcs_ratio"] == scores["lcs_ratio"]
            assert row.model_extra is not None and row.model_extra["lcs_ratio"] == row.metrics["lcs_ratio"], "metrics repeated top-level"
            assert row.task == "reverse-text" and row.is_completed and not row.is_truncated
            assert row.stop_condition == "single_turn" and row.error is None and row.finish_reasons == ["stop"]
            assert row.token_usage.output_tokens > 0 and row.timing.total_ms >= 0

        # The summary is over exactly these rows.
        summary = ended.summary
        assert summary is not None and summary.rollouts == 6 and summary.errors == 0 and summary.error_rate == 0
        rewards = [r.reward for r in rows]
        assert summary.reward.mean == pytest.approx(statistics.fmean(rewards), abs=1e-9)
        assert (summary.reward.min, summary.reward.max) == (pytest.approx(min(rewards)), pytest.approx(max(rewards)))
        assert ended.progress.mean_reward == pytest.approx(statistics.fmean(rewards), abs=1e-9)
        assert summary.stop_conditions == {"single_turn": 6}
        assert sum(b.count for b in summary.histogram) == 6
        assert {c.name for c in summary.components} == {"lcs_ratio", "format"}

        assert gym.eval_results(job.eval_id, offset=2, limit=3) == rows[2:5]
        assert job.eval_id in [j.eval_id for j in gym.evals(status="completed").evals]
        assert job.eval_id not in [j.eval_id for j in gym.evals(status="running").evals]

    # The model endpoint got one request per rollout, with the server's key and the options.
    asked = model.requests[asked_before:]
    assert len(asked) == 6 and all(r["model"] == "reverse" and r["temperature"] == 0.0 for r in asked)
    assert model.authorizations[asked_before:] == [f"Bearer {EVAL_KEY}"] * 6

    # Neither the key nor the endpoint comes back on any route (raw bodies, not models).
    for path in (f"/v1/evals/{job.eval_id}", "/v1/evals", f"/v1/evals/{job.eval_id}/events", f"/v1/evals/{job.eval_id}/results"):
        text = httpx.get(eval_server.url + path, timeout=30).text
        assert EVAL_KEY not in text and model.base_url not in text, path


def test_async_client_follows_a_job(eval_server):
    async def main() -> tuple[list, list[models.EvalRollout], models.EvalJobList]:
        async with AsyncClient(eval_server.url, retry=FAST) as gym:
            job = await gym.create_eval(models.EvalRequest(env_id="reverse-text", num_examples=2, rollouts_per_example=2, split="train"))
            events = [e async for e in gym.eval_events(job.eval_id)]
            return events, await gym.eval_results(job.eval_id), await gym.evals(limit=1)

    events, rows, listed = asyncio.run(main())
    ended = events[-1]
    assert isinstance(ended, models.EvalJob) and ended.status == "completed" and ended.request.split == "train"
    _check_progress(events[:-1], ended.eval_id, 4)
    assert len(rows) == 4 and [r.example_id for r in rows] == [0, 0, 1, 1]
    assert all(r.reward == pytest.approx(expected_reward(models.content_text(r.prompt[-1].content))) for r in rows)
    assert [j.eval_id for j in listed.evals] == [ended.eval_id], "newest first"


def test_cancel_keeps_stored_rollouts_and_frees_the_budget(eval_server, model):
    model.hold(after=2)  # two rollouts answer, the rest wait: the job is caught mid-run
    try:
        with Client(eval_server.url, retry=FAST) as gym:
            job = gym.create_eval("reverse-text", model=HELD_MODEL, num_examples=6, rollouts_per_example=2, max_concurrent=SLOTS)
            for event in gym.eval_events(job.eval_id):
                assert isinstance(event, models.EvalProgressEvent), "the job cannot end while held"
                if event.progress.done == 2:
                    break

            # It holds every model-request slot: another job is refused, with when to retry.
            with pytest.raises(EdgegymError) as err:
                gym.create_eval("reverse-text", num_examples=1, rollouts_per_example=1)
            assert (err.value.status, err.value.code) == (429, "rate_limited")
            assert err.value.retry_after == 10 and err.value.details == {"limit": SLOTS, "in_use": SLOTS, "requested": 1}

            cancelled = gym.cancel_eval(job.eval_id)
            assert cancelled.status == "cancelled" and cancelled.progress.done == 2
            assert gym.cancel_eval(job.eval_id).status == "cancelled", "cancelling again is fine"
            _, ended = _follow(gym, job.eval_id)
            assert ended.status == "cancelled"
            assert ended.summary is not None and ended.summary.rollouts == 2
            assert len(gym.eval_results(job.eval_id)) == 2

            # The slots are free again.
            model.release()
            again = gym.create_eval("reverse-text", num_examples=1, rollouts_per_example=1)
            assert _follow(gym, again.eval_id)[1].status == "completed"
    finally:
        model.release()


def test_eval_error_codes(eval_server):
    with Client(eval_server.url, retry=FAST) as gym:
        missing = "ev_00000000000000000000000000000000"
        for call in (
            lambda: gym.eval(missing),
            lambda: gym.cancel_eval(missing),
            lambda: gym.eval_results(missing),
            lambda: list(gym.eval_events(missing)),
            lambda: gym.delete_eval(missing),
        ):
            with pytest.raises(EdgegymError) as err:
                call()
            assert (err.value.status, err.value.code) == (404, "eval_not_found") and err.value.request_id
        with pytest.raises(EdgegymError) as err:
            gym.create_eval("no-such-env")
        assert (err.value.status, err.value.code) == (404, "env_not_found")
        with pytest.raises(EdgegymError) as err:  # could never fit the server's budget
            gym.create_eval("reverse-text", num_examples=5, rollouts_per_example=2, max_concurrent=SLOTS + 1)
        assert (err.value.status, err.value.code) == (400, "invalid_request") and str(SLOTS) in err.value.message
        with pytest.raises(EdgegymError) as err:
            gym.evals(status="bogus")
        assert (err.value.status, err.value.code) == (400, "invalid_request")

        # Checked before sending: the server would refuse these too.
        with pytest.raises(ValidationError):
            gym.create_eval("reverse-text", num_examples=0)
        with pytest.raises(ValidationError):  # an endpoint is server configuration, never a request field
            gym.create_eval({"env_id": "reverse-text", "base_url": "http://example.invalid/v1"})
        with pytest.raises(TypeError):
            gym.create_eval({"env_id": "reverse-text"}, num_examples=2)


def test_delete_eval_removes_an_ended_job_and_refuses_a_live_one(eval_server, model):
    model.hold(after=1)  # one rollout answers, the rest wait: the job stays running
    try:
        with Client(eval_server.url, retry=FAST) as gym:
            live = gym.create_eval("reverse-text", model=HELD_MODEL, num_examples=3, rollouts_per_example=1, max_concurrent=1)
            for event in gym.eval_events(live.eval_id):
                if event.progress.done == 1:
                    break
            with pytest.raises(EdgegymError) as err:
                gym.delete_eval(live.eval_id)
            assert (err.value.status, err.value.code) == (409, "eval_running") and "cancel" in err.value.message
            assert gym.eval(live.eval_id).status == "running" and len(gym.eval_results(live.eval_id)) == 1, "nothing lost"

            # Cancelled, it has ended: the delete takes it and its one stored rollout.
            assert gym.cancel_eval(live.eval_id).status == "cancelled"
            gone = gym.delete_eval(live.eval_id)
            assert gone == models.EvalDeleteResponse(eval_id=live.eval_id, deleted=True, rollouts_deleted=1)
            for call in (lambda: gym.eval(live.eval_id), lambda: gym.eval_results(live.eval_id), lambda: gym.delete_eval(live.eval_id)):
                with pytest.raises(EdgegymError) as err:
                    call()
                assert (err.value.status, err.value.code) == (404, "eval_not_found")
            assert live.eval_id not in [j.eval_id for j in gym.evals(limit=200).evals]
    finally:
        model.release()

    async def main() -> tuple[models.EvalDeleteResponse, int]:
        async with AsyncClient(eval_server.url, retry=FAST) as gym:
            job = await gym.create_eval("reverse-text", num_examples=2, rollouts_per_example=2)
            _ = [e async for e in gym.eval_events(job.eval_id)]
            gone = await gym.delete_eval(job.eval_id)
            with pytest.raises(EdgegymError) as err:
                await gym.eval(job.eval_id)
            return gone, err.value.status or 0

    gone, status = asyncio.run(main())
    assert gone.deleted and gone.rollouts_deleted == 4 and status == 404


def test_creating_a_job_is_never_retried(eval_server):
    # The server handles the POST, the reply is lost: a retry would start a second job.
    def rule(method: str, path: str, n: int) -> str | None:
        return "drop" if (method, path, n) == ("POST", "/v1/evals", 1) else None

    with Client(eval_server.url) as direct:
        before = {j.eval_id for j in direct.evals(limit=200).evals}
    with StreamingProxy(eval_server.url, rule) as proxy, Client(proxy.url, retry=FAST) as gym:
        with pytest.raises(EdgegymError) as err:
            gym.create_eval("reverse-text", num_examples=1, rollouts_per_example=1)
        assert err.value.status is None and err.value.code == "network_error"
        assert proxy.count("POST /v1/evals") == 1
    with Client(eval_server.url) as direct:
        made = [j for j in direct.evals(limit=200).evals if j.eval_id not in before]
        assert len(made) == 1, "the server made exactly the one job it was asked for"
        assert _follow(direct, made[0].eval_id)[1].status == "completed"


def test_reads_retry_and_the_event_stream_reconnects(eval_server, model):
    # Every model request waits until the stream has reconnected, so the reconnect's first
    # event is the same as the one before the break (done 0): the client must not repeat it.
    model.hold(after=0)

    def rule(method: str, path: str, n: int) -> str | None:
        if path.endswith("/events"):
            return "cut" if n == 1 else None  # the first stream breaks after one event
        if method == "GET" and n == 1 and path != "/v1/evals":
            return "503"  # each read's first attempt meets an overloaded gateway
        return None

    def on_first_bytes(method: str, path: str, n: int) -> None:
        if path.endswith("/events") and n == 2:
            model.release()  # the reconnect has had its first event: let the job finish

    try:
        with StreamingProxy(eval_server.url, rule, on_first_bytes) as proxy, Client(proxy.url, retry=FAST) as gym:
            job = gym.create_eval("reverse-text", model=HELD_MODEL, num_examples=1, rollouts_per_example=3, max_concurrent=1)
            events = list(gym.eval_events(job.eval_id))
            assert proxy.count(f"GET /v1/evals/{job.eval_id}/events") == 2
            ended = events[-1]
            assert isinstance(ended, models.EvalJob) and ended.status == "completed"
            _check_progress(events[:-1], job.eval_id, 3)

            assert gym.eval(job.eval_id) == ended
            assert proxy.count(f"GET /v1/evals/{job.eval_id}") == 2
            rows = gym.eval_results(job.eval_id)
            assert proxy.count(f"GET /v1/evals/{job.eval_id}/results") == 2 and len(rows) == 3
            assert gym.cancel_eval(job.eval_id).status == "completed", "cancelling an ended job changes nothing"
    finally:
        model.release()


def test_event_stream_gives_up_when_the_server_stays_away():
    gym = Client("http://127.0.0.1:9", retry=RetryPolicy(max_attempts=2, initial_backoff=0.01, deadline=2))
    with pytest.raises(EdgegymError) as err:
        next(iter(gym.eval_events("ev_x")))
    assert err.value.status is None and err.value.code == "network_error"
