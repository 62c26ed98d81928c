"""Drives edgegym's ORS wire with the `openreward` package's own client (test/ors-client.test.ts runs it).

Usage: python drive_ors.py BASE_URL [API_KEY]

Everything goes through openreward 0.1.167's public API (OpenReward, environments.get, Environment's
splits and tasks, Session's prompt, tools, call_tool and score_group; AsyncOpenReward for calls sent
at once on one session) except the resume check, which calls the client's own `resumable_sse` with a
task id, as the client does itself after a stream is cut. Then one episode through TRL 1.16.0's ORS
adapter (OpenRewardSpec's environment_factory and reward_funcs, as GRPOTrainer calls them). Prints
one JSON line of what it saw; any failed check exits non-zero.
"""

import asyncio
import json
import os
import sys

os.environ.setdefault("OPENREWARD_DISABLE_UPDATE_CHECK", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import aiohttp  # noqa: E402
from openreward import AsyncOpenReward, GroupCandidate, Message, OpenReward  # noqa: E402
from openreward.api._session.http import AuthenticationError, resumable_sse, set_retry_policy  # noqa: E402
from openreward.api.environments.client import Task  # noqa: E402
from openreward.api.environments.types import TextBlock  # noqa: E402
from openreward.api.errors import ToolCallError  # noqa: E402

BASE = sys.argv[1].rstrip("/")
KEY = sys.argv[2] if len(sys.argv) > 2 else None
# The calculator expression for tool-math's task 11 (the mean of its eight numbers), as the native test sends it.
TOOL_MATH_EXPRESSION = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8"

# As docs/ors.md prints it: the environment's URL is given to environments.get, so the
# platform's own hosts (api./sessions. subdomains of base_url) are never contacted.
client = OpenReward(api_key=KEY, base_url=BASE)


def text_of(blocks) -> str:
    return "\n".join(b.text for b in blocks if b.type == "text")


def reverse_text(seen: dict) -> None:
    # No variant: bare paths, the environment named by the X-Deployment header.
    env = client.environments.get("reverse-text", base_url=BASE)
    assert env.list_splits() == ["train", "eval"], env.list_splits()
    n = env.num_tasks("train")
    assert n > 10, n
    task = env.get_task("train", 0)
    assert task.task_spec == {"split": "train", "index": 0}, task.task_spec
    assert [t.task_spec["index"] for t in env.get_task_range("train", -2)] == [n - 2, n - 1]
    assert len(env.list_tasks("train")) == n
    assert [t.name for t in env.list_tools()] == ["respond"]
    with env.session(task=task) as session:
        assert session.sid.startswith("ep_"), session.sid
        messages = session.get_messages(format="openai")
        assert messages[-1]["role"] == "user", messages
        prompt = messages[-1]["content"]
        assert prompt in text_of(session.get_prompt())
        tools = session.list_tools(format="openai")
        assert [t["name"] for t in tools] == ["respond"], tools
        out = session.call_tool("respond", {"content": f"<answer>{prompt[::-1]}</answer>"})
        assert out.finished is True and abs(out.reward - 1.2) < 1e-9, out
        assert out.metadata["score"]["reward"] == out.reward and out.metadata["episode_id"] == session.sid
        try:
            session.call_tool("respond", {"content": "again"})
            raise AssertionError("a call after the end was taken")
        except ToolCallError as err:
            assert err.reason == "episode_finished", err
        seen["reverse_text_reward"] = out.reward


def read_board(text: str) -> list:
    rows = [line for line in text.split("\n") if len(line) == 10 and line[0] == " " and line[2:5] == " | " and line[6:9] == " | "]
    cells = [c.strip() for row in rows[-3:] for c in row.split("|")]
    return [c if c in ("X", "O") else None for c in cells]


def tic_tac_toe(seen: dict) -> None:
    # A variant: paths under /tic-tac-toe/, and a task_spec carrying the environment's args.
    env = client.environments.get("edgegym", variant="tic-tac-toe", base_url=BASE)
    base = env.get_task("train", 2)
    task = Task(server_name=base.server_name, environment_name=base.environment_name, task_spec={**base.task_spec, "args": {"opponent": "random"}}, namespace=base.namespace)
    with env.session(task=task) as session:
        board_text = text_of(session.get_prompt())
        moves = 0
        out = None
        while moves < 9:
            board = read_board(board_text)
            cell = next(i for i, c in enumerate(board) if c is None) + 1
            out = session.call_tool("respond", {"content": f"<move>{cell}</move>"})
            moves += 1
            board_text = text_of(out.blocks)
            if out.finished:
                break
        assert out is not None and out.finished and out.reward is not None, out
        seen["tic_tac_toe"] = {"moves": moves, "reward": out.reward, "last": board_text}


def tool_math(seen: dict) -> None:
    env = client.environments.get("tool-math", base_url=BASE)
    assert [t.name for t in env.list_tools()] == ["calculator", "respond"]
    with env.session(split="train", index=11) as session:
        try:
            session.call_tool("shell", {"cmd": "ls"})
            raise AssertionError("an unknown tool was called")
        except ToolCallError as err:
            assert err.reason == "not_found", err
        result = session.call_tool("calculator", {"expression": TOOL_MATH_EXPRESSION})
        assert result.finished is False and result.reward is None and text_of(result.blocks) == "4624.875", result
        # The stream of that call cut and resumed: the client's own resume (its task id, here turn-0)
        # answers the stored output and takes no second step.
        resumed = asyncio.run(resume(session.sid, "tool-math", {"name": "calculator", "input": {"expression": TOOL_MATH_EXPRESSION}}, "turn-0"))
        assert resumed["ok"] and resumed["output"]["blocks"][0]["text"] == "4624.875", resumed
        assert resumed["output"]["metadata"]["turn"] == 1, resumed
        out = session.call_tool("respond", {"content": "<answer>4624.875</answer>"})
        assert out.finished and abs(out.reward - 1.1) < 1e-9, out
        assert out.metadata["turn"] == 2, out.metadata  # two steps: the resume applied nothing
        seen["tool_math_reward"] = out.reward


def score_group(seen: dict) -> None:
    # Group scoring on a session: candidates scored as answers to its task, together (group
    # rewards see them all), without taking a step; the session's own call then scores the same.
    env = client.environments.get("reverse-text", base_url=BASE)
    with env.session(split="train", index=1) as session:
        assert session.supports_score_group() is True
        prompt = session.get_messages(format="openai")[-1]["content"]
        right = f"<answer>{prompt[::-1]}</answer>"
        candidates = [
            GroupCandidate(messages=[Message(role="assistant", blocks=[TextBlock(text=right)])], metadata={"rollout": 7}),
            [Message(role="user", blocks=[TextBlock(text=prompt)]), Message(role="assistant", blocks=[TextBlock(text="<answer>nope</answer>")])],
        ]
        scores = session.score_group(candidates)
        assert len(scores) == 2 and abs(scores[0].reward - 1.2) < 1e-9 and scores[1].reward < scores[0].reward, scores
        assert scores[0].metadata["candidate"] == {"rollout": 7} and scores[0].metadata["score"]["reward"] == scores[0].reward, scores[0]
        out = session.call_tool("respond", {"content": right})
        assert out.metadata["turn"] == 1 and abs(out.reward - scores[0].reward) < 1e-9, out
        seen["score_group"] = [s.reward for s in scores]


async def concurrent_calls(seen: dict) -> None:
    # Three calls sent at once on one session (the first one's tool slowest, so the others arrive
    # while it runs) are taken one after the other, each its own turn, and the session stays
    # usable: a call failed on the stream would mark it dead. test-slow-tool is
    # test/fixtures/slow-tool-env.js, which the test serves beside the built-in environments.
    api = AsyncOpenReward(api_key=KEY, base_url=BASE).environments
    try:
        env = api.get("test-slow-tool", base_url=BASE)
        async with env.session(split="train", index=0) as session:
            calls = [session.call_tool("wait", {"ms": ms, "label": f"call {i}"}) for i, ms in enumerate((300, 50, 0))]
            outs = await asyncio.gather(*calls)
            assert [text_of(o.blocks) for o in outs] == ["call 0", "call 1", "call 2"], outs
            turns = [o.metadata["turn"] for o in outs]
            assert sorted(turns) == [1, 2, 3], turns
            out = await session.call_tool("respond", {"content": "<answer>done</answer>"})
            assert out.finished and out.reward == 1 and out.metadata["turn"] == 4, out
            seen["concurrent_turns"] = sorted(turns)
    finally:
        await api.aclose()


async def resume(sid: str, env_id: str, body: dict, task_id: str) -> dict:
    async with aiohttp.ClientSession(base_url=BASE) as http:
        set_retry_policy(http, "env-server")
        return await resumable_sse(http, f"/{env_id}/call", KEY, json=body, sid=sid, task_id=task_id, max_retries=2)


def native_get(path: str) -> dict:
    # The trainer's side of the same episode (edgegym's own API), to know what the session must not have seen.
    import urllib.request

    request = urllib.request.Request(f"{BASE}{path}", headers={"Authorization": f"Bearer {KEY}"} if KEY else {})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def kuhn_poker_seat(seen: dict) -> None:
    # A seated environment: task_spec.seats gives p1 to the environment's nash player, so the session plays p2.
    env = client.environments.get("kuhn-poker", base_url=BASE)
    base = env.get_task("train", 4)
    task = Task(server_name=base.server_name, environment_name=base.environment_name, task_spec={**base.task_spec, "seats": {"p1": "nash", "p2": "client"}}, namespace=base.namespace)
    shown = []
    with env.session(task=task) as session:
        prompt = text_of(session.get_prompt())
        shown.append(prompt)
        assert "You are player 2" in prompt and "Your opponent " in prompt, prompt
        out = session.call_tool("respond", {"content": "<action>fold</action>" if "bet 1 chip" in prompt else "<action>bet</action>"})
        shown.append(text_of(out.blocks))
        assert out.metadata["seat"] == "p2", out.metadata
        assert out.finished and out.reward == out.metadata["score"]["seats"]["p2"]["reward"], out
        p1 = native_get(f"/v1/episodes/{session.sid}?seat=p1")
    theirs = next(card for card in ("Jack", "Queen", "King") if any(f"Your card is the {card}" in m["content"] for m in p1["messages"]))
    # The other seat's card reaches this session only at a showdown, where it is public.
    before = "\n".join(shown).split("Showdown")[0]
    assert f"the {theirs}" not in before, shown
    seen["kuhn_poker_p2_reward"] = out.reward
    selfplay = client.environments.get("tic-tac-toe-2p", base_url=BASE)
    try:
        with selfplay.session(split="train", index=0):
            raise AssertionError("a session with two client seats was opened")
    except aiohttp.ClientResponseError as err:
        assert err.status == 422 and "plays one seat" in err.message, (err.status, err.message)
    seen["ors_self_play"] = "refused"


def errors(seen: dict) -> None:
    env = client.environments.get("no-such-env", base_url=BASE)
    try:
        env.list_splits()
        raise AssertionError("an unknown environment answered")
    except aiohttp.ClientResponseError as err:
        assert err.status == 404 and "no-such-env" in err.message, (err.status, err.message)
    env = client.environments.get("reverse-text", base_url=BASE)
    try:
        env.get_task("nope", 0)
        raise AssertionError("an unknown split answered")
    except aiohttp.ClientResponseError as err:
        assert err.status == 400 and err.message.startswith("Invalid split"), err.message
    if KEY:
        keyless = OpenReward(api_key="", base_url=BASE).environments.get("reverse-text", base_url=BASE)
        try:
            keyless.list_splits()
            raise AssertionError("a request without the key answered")
        except AuthenticationError:
            pass
    seen["errors"] = "ok"


def trl_adapter(seen: dict) -> None:
    # TRL's adapter reads the session host from OPENREWARD_SESSION_URL when given a URL (its client
    # would otherwise put "sessions." before the host), and names the environment with env_name.
    os.environ["OPENREWARD_SESSION_URL"] = BASE
    if KEY:
        os.environ["OPENREWARD_API_KEY"] = KEY
    from trl.experimental.openreward import OpenRewardSpec

    spec = OpenRewardSpec(BASE, env_name="reverse-text", num_tasks=2, api_key=KEY)
    make = spec.environment_factory
    rollout = make()
    prompt = rollout.reset(task_index=1)
    assert hasattr(rollout, "respond"), "the respond tool was not bound as a method"
    target = prompt.split("\n")[-1]
    text = rollout.respond(content=f"<answer>{target[::-1]}</answer>")
    assert rollout.finished, (text, rollout.rewards)
    rewards = spec.reward_funcs(environments=[rollout])
    assert rewards == [rollout.reward] and abs(rewards[0] - 1.2) < 1e-9, rewards
    rollout._close()
    seen["trl_reward"] = rewards[0]


seen: dict = {}
reverse_text(seen)
tic_tac_toe(seen)
tool_math(seen)
score_group(seen)
asyncio.run(concurrent_calls(seen))
kuhn_poker_seat(seen)
errors(seen)
trl_adapter(seen)
client.close()
print(json.dumps(seen))
