"""Drives edgegym's OpenEnv wire with openenv-core's own client (test/openenv-client.test.ts runs it).

Usage: python drive_openenv.py BASE_URL [API_KEY]

WebSocket: openenv-core's GenericEnvClient (and, with an API key, the documented EnvClient
subclass pattern, adding an Authorization header to its connect). HTTP: openenv-core has no
HTTP client, so httpx sends the bodies and openenv-core's own pydantic models (ResetResponse,
StepResponse, State, SchemaResponse, HealthResponse, EnvironmentMetadata) validate each answer.
Prints one JSON line of what it saw; any failed check exits non-zero.
"""

import asyncio
import json
import sys

import httpx
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    ResetResponse,
    SchemaResponse,
    State,
    StepResponse,
)
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from websockets.asyncio.client import connect as ws_connect

BASE = sys.argv[1].rstrip("/")
KEY = sys.argv[2] if len(sys.argv) > 2 else None
HEADERS = {"Authorization": f"Bearer {KEY}"} if KEY else {}
# The calculator expression for tool-math's task with seed 11 (the mean of its eight numbers),
# as test/builtin-envs-http.test.ts sends it natively.
TOOL_MATH_EXPRESSION = "(4682 + 4613 + 6417 + 3065 + 1802 + 1707 + 4860 + 9853) / 8"


# As docs/openenv.md prints it: EnvClient.connect passes no headers, so a keyed client opens the socket itself.
class KeyedEnvClient(GenericEnvClient):
    def __init__(self, base_url: str, api_key: str, **kwargs):
        super().__init__(base_url, **kwargs)
        self._headers = {"Authorization": f"Bearer {api_key}"}

    async def connect(self):
        if self._ws is None:
            self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout,
                                        max_size=self._max_message_size, additional_headers=self._headers)
        return self


def client(env_id: str) -> GenericEnvClient:
    base_url = f"{BASE}/openenv/{env_id}"
    return KeyedEnvClient(base_url, KEY) if KEY else GenericEnvClient(base_url=base_url)


def reverse(text: str) -> str:
    return text[::-1]


def read_board(text: str) -> list:
    rows = [line for line in text.split("\n") if len(line) == 10 and line[0] == " " and line[2:5] == " | " and line[6:9] == " | "]
    cells = [c.strip() for row in rows[-3:] for c in row.split("|")]
    return [c if c in ("X", "O") else None for c in cells]


def first_free(board: list) -> int:
    return next(i for i, c in enumerate(board) if c is None) + 1


async def reverse_text_ws(seen: dict) -> None:
    async with client("reverse-text") as env:
        first = await env.reset(index=0)
        obs = first.observation
        assert first.done is False and first.reward is None, first
        assert obs["turn"] == 0 and obs["env_id"] == "reverse-text" and obs["episode_id"].startswith("ep_"), obs
        prompt = obs["messages"][-1]["content"]
        result = await env.step({"content": f"<answer>{reverse(prompt)}</answer>"})
        assert result.done is True, result
        assert abs(result.reward - 1.2) < 1e-9, result.reward
        assert result.observation["score"]["reward"] == result.reward
        state = await env.state()
        assert state["episode_id"] == obs["episode_id"] and state["step_count"] == 1 and state["done"] is True, state
        seen["reverse_text_ws_reward"] = result.reward


async def reverse_text_http(seen: dict) -> None:
    async with httpx.AsyncClient(base_url=f"{BASE}/openenv/reverse-text", headers=HEADERS) as http:
        health = HealthResponse.model_validate((await http.get("/health")).json())
        assert health.status.value == "healthy"
        schema = SchemaResponse.model_validate((await http.get("/schema")).json())
        actions = [schema.action["$defs"][a["$ref"].split("/")[-1]] for a in schema.action["anyOf"]]
        assert any("content" in a["properties"] for a in actions) and "turn" in schema.observation["properties"], schema
        meta = EnvironmentMetadata.model_validate((await http.get("/metadata")).json())
        assert meta.name == "reverse-text"
        r = await http.post("/reset", json={"index": 0})
        assert r.status_code == 200, r.text
        reset = ResetResponse.model_validate(r.json())
        obs = reset.observation
        action = {"content": f"<answer>{reverse(obs['messages'][-1]['content'])}</answer>", "turn": obs["turn"]}
        body = {"action": action, "episode_id": obs["episode_id"]}
        r = await http.post("/step", json=body)
        assert r.status_code == 200, r.text
        step = StepResponse.model_validate(r.json())
        assert step.done is True and abs(step.reward - 1.2) < 1e-9, step
        # A retry of the same step (same turn, same message) returns the same answer, applied once.
        again = await http.post("/step", json=body)
        assert again.status_code == 200 and again.json() == r.json(), again.text
        state = State.model_validate((await http.get("/state", params={"episode_id": obs["episode_id"]})).json())
        assert state.episode_id == obs["episode_id"] and state.step_count == 1, state
        # A different message at a turn already taken is refused, in OpenEnv's error shape.
        clash = await http.post("/step", json={"action": {"content": "other", "turn": 0}, "episode_id": obs["episode_id"]})
        assert clash.status_code == 409 and clash.json()["detail"]["code"] == "turn_conflict", clash.text
        bad = await http.post("/step", json={"action": {"content": "x", "turn": 0, "bogus": 1}, "episode_id": obs["episode_id"]})
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "action"], bad.text
        seen["reverse_text_http_reward"] = step.reward


async def tic_tac_toe_ws_with_reconnect(seen: dict) -> None:
    env = client("tic-tac-toe")
    await env.connect()
    first = await env.reset(seed=2, args={"opponent": "random"})
    episode_id = first.observation["episode_id"]
    text = first.observation["messages"][-1]["content"]
    mark = "X" if "You play X" in text else "O"
    move = {"content": f"<move>{first_free(read_board(text))}</move>"}
    one = await env.step(move)
    assert one.done is False and one.observation["turn"] == 1, one
    # The connection drops without a goodbye (no close message): the episode lives on.
    env._ws.transport.abort()
    env._ws = None

    again = client("tic-tac-toe")
    async with again:
        resumed = await again.reset(episode_id=episode_id)
        obs = resumed.observation
        assert obs["resumed"] is True and obs["turn"] == 1 and obs["episode_id"] == episode_id, obs
        # The whole transcript comes back: opening messages, the move, the opponent's reply.
        assert obs["messages"][-2] == {"role": "assistant", "content": move["content"]}, obs["messages"]
        assert obs["messages"][-1] == one.observation["messages"][-1]
        # The step sent before the drop, retried at its turn: the stored reply, not a second move.
        retried = await again.step({**move, "turn": 0})
        assert retried.observation == one.observation, (retried, one)
        try:
            await again.step({"content": "<move>9</move>", "turn": 0})
            raise AssertionError("a different message at a past turn was accepted")
        except RuntimeError as err:
            assert "EXECUTION_ERROR" in str(err) and "already taken" in str(err), err
        result = one
        moves = 1
        while not result.done:
            board = read_board(result.observation["messages"][-1]["content"])
            result = await again.step({"content": f"<move>{first_free(board)}</move>"})
            moves += 1
            assert moves <= 9
        assert result.observation["stop_reason"] == "game_over", result.observation
        assert isinstance(result.reward, float) and result.observation["score"]["reward"] == result.reward
        state = await again.state()
        assert state["step_count"] == moves and state["done"] is True, state
        seen["tic_tac_toe"] = {"mark": mark, "moves": moves, "reward": result.reward, "last": result.observation["messages"][-1]["content"].split("\n")[-1]}


async def tool_math_ws_and_http(seen: dict) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": json.dumps({"expression": TOOL_MATH_EXPRESSION})}}
    async with client("tool-math") as env:
        first = await env.reset(seed=11)
        assert [t["function"]["name"] for t in first.observation["tools"]] == ["calculator"], first.observation["tools"]
        tool = await env.step({"content": None, "tool_calls": [call]})
        assert tool.done is False and tool.reward is None, tool
        assert tool.observation["messages"] == [{"role": "tool", "tool_call_id": "call_1", "content": "4624.875"}], tool.observation
        final = await env.step({"content": "<answer>4624.875</answer>"})
        assert final.done is True and abs(final.reward - 1.1) < 1e-9, final
        assert final.observation["score"]["metrics"]["calculator_calls"] == 1, final.observation["score"]
        seen["tool_math_ws_reward"] = final.reward
    async with httpx.AsyncClient(base_url=f"{BASE}/openenv/tool-math", headers=HEADERS) as http:
        reset = ResetResponse.model_validate((await http.post("/reset", json={"seed": 11})).json())
        eid = reset.observation["episode_id"]
        tool = StepResponse.model_validate((await http.post("/step", json={"episode_id": eid, "action": {"content": None, "tool_calls": [call], "turn": 0}})).json())
        assert tool.observation["messages"][0]["content"] == "4624.875", tool
        final = StepResponse.model_validate((await http.post("/step", json={"episode_id": eid, "action": {"content": "<answer>4624.875</answer>", "turn": 1}})).json())
        assert final.done and abs(final.reward - 1.1) < 1e-9, final
        seen["tool_math_http_reward"] = final.reward


async def tool_math_mcp_tool_client(seen: dict) -> None:
    # openenv-core's MCPToolClient: list_tools and call_tool over the socket, as steps of the episode.
    mcp = MCPToolClient(base_url=f"{BASE}/openenv/tool-math")
    if KEY:
        # Its connect passes no headers either: open the socket with the key first (connect then keeps it).
        mcp._ws = await ws_connect(mcp._ws_url, additional_headers=HEADERS)
    async with mcp as env:
        await env.reset(seed=11)
        tools = await env.list_tools()
        assert [t.name for t in tools] == ["calculator"] and tools[0].input_schema["type"] == "object", tools
        result = await env.call_tool("calculator", expression=TOOL_MATH_EXPRESSION)
        assert result == "4624.875", result
        state = await env.state()
        assert state.step_count == 1, state
        episode_id = state.episode_id
    # The final answer is a message: GenericEnvClient continues the same episode.
    async with client("tool-math") as env:
        resumed = await env.reset(episode_id=episode_id)
        assert resumed.observation["turn"] == 1 and resumed.observation["messages"][-1]["content"] == "4624.875", resumed.observation
        final = await env.step({"content": "<answer>4624.875</answer>"})
        assert final.done and abs(final.reward - 1.1) < 1e-9, final
        seen["tool_math_mcp_client_reward"] = final.reward


CARD_WORDS = ("Jack", "Queen", "King")


def cards_in(texts: list) -> set:
    return {card for text in texts for card in CARD_WORDS if f"Your card is the {card}" in text}


async def kuhn_poker_one_seat_per_client(seen: dict) -> None:
    # Self-play with hidden cards: one client per seat, each bound by reset's `seat` kwarg.
    p1, p2 = client("kuhn-poker"), client("kuhn-poker")
    texts: dict = {"p1": [], "p2": []}
    async with p1, p2:
        first = await p1.reset(index=5, seats={"p2": "client"}, seat="p1")
        obs = first.observation
        assert obs["seat"] == "p1" and obs["to_play"] == "p1" and obs["seats"] == {"p1": "client", "p2": "client"}, obs
        texts["p1"].append(json.dumps(first.observation))
        joined = await p2.reset(episode_id=obs["episode_id"], seat="p2")
        assert joined.observation["resumed"] is True and joined.observation["seat"] == "p2", joined.observation
        texts["p2"].append(json.dumps(joined.observation))
        try:
            await p2.step({"content": "<action>check</action>"})
            raise AssertionError("p2 moved before p1")
        except RuntimeError as err:
            assert "EXECUTION_ERROR" in str(err) and "turn" in str(err), err
        bet = await p1.step({"content": "<think>I hold this card</think><action>bet</action>"})
        assert bet.done is False and bet.observation["to_play"] == "p2", bet.observation
        assert bet.observation["messages"] == [{"role": "user", "content": "You bet 1 chip."}], bet.observation
        texts["p1"].append(json.dumps(bet.observation))
        state = await p2.state()
        assert state["to_play"] == "p2" and state["seat"] == "p2" and state["step_count"] == 1, state
        caught_up = await p2.reset(episode_id=obs["episode_id"], seat="p2")
        assert caught_up.observation["messages"][-1]["content"].startswith("Your opponent bet 1 chip"), caught_up.observation
        texts["p2"].append(json.dumps(caught_up.observation))
        fold = await p2.step({"content": "<action>fold</action>"})
        assert fold.done is True and fold.observation["seat"] == "p2", fold.observation
        assert fold.reward == fold.observation["score"]["seats"]["p2"]["reward"], fold
        texts["p2"].append(json.dumps(fold.observation))
        end = await p1.reset(episode_id=obs["episode_id"])
        assert end.done is True and end.reward == fold.observation["score"]["seats"]["p1"]["reward"], end
        texts["p1"].append(json.dumps(end.observation))
    mine, theirs = cards_in(texts["p1"]), cards_in(texts["p2"])
    assert len(mine) == 1 and len(theirs) == 1 and mine != theirs, (mine, theirs)
    # A fold shows no cards: neither client ever read the other's, nor p1's thinking.
    assert not any(f"the {card}" in t for card in theirs for t in texts["p1"]), texts["p1"]
    assert not any(f"the {card}" in t for card in mine for t in texts["p2"]), texts["p2"]
    assert not any("I hold this card" in t for t in texts["p2"])
    seen["kuhn_poker_seats"] = {"p1": fold.observation["score"]["seats"]["p1"]["reward"], "p2": fold.reward}


async def tic_tac_toe_2p_self_play(seen: dict) -> None:
    # One client plays both seats of a self-play game: each step names its seat in the action.
    async with client("tic-tac-toe-2p") as env:
        result = await env.reset(seed=3)
        assert result.observation["seat"] == "x" and result.observation["to_play"] == "x", result.observation
        moves = 0
        while not result.done:
            seat = result.observation["to_play"]
            board = read_board(result.observation["messages"][-1]["content"])
            result = await env.step({"content": f"<move>{first_free(board)}</move>", "seat": seat})
            moves += 1
            assert moves <= 9
            if not result.done:
                assert result.observation["seat"] == result.observation["to_play"] != seat, result.observation
        assert result.reward == result.observation["score"]["seats"][result.observation["seat"]]["reward"], result
    async with httpx.AsyncClient(base_url=f"{BASE}/openenv/tic-tac-toe-2p", headers=HEADERS) as http:
        reset = ResetResponse.model_validate((await http.post("/reset", json={"seed": 3, "seats": {"o": "minimax"}})).json())
        eid = reset.observation["episode_id"]
        assert reset.observation["seat"] == "x", reset.observation
        r = await http.post("/step", json={"episode_id": eid, "action": {"content": "<move>5</move>", "turn": 0, "seat": "o"}})
        assert r.status_code == 409 and r.json()["detail"]["code"] == "seat_not_client", r.text
        step = StepResponse.model_validate((await http.post("/step", json={"episode_id": eid, "action": {"content": "<move>5</move>", "turn": 0}})).json())
        assert step.observation["to_play"] == "x" and "O played" in step.observation["messages"][-1]["content"], step
        state = State.model_validate((await http.get("/state", params={"episode_id": eid})).json())
        assert state.step_count == 1, state
    seen["tic_tac_toe_2p_moves"] = moves


async def ws_errors(seen: dict) -> None:
    async with client("reverse-text") as env:
        for message, code in [("{not json", "INVALID_JSON"), (json.dumps({"type": "dance"}), "UNKNOWN_TYPE"), (json.dumps({"type": "step", "data": {"content": "x"}}), "VALIDATION_ERROR")]:
            await env._ws.send(message)
            reply = json.loads(await env._ws.recv())
            assert reply["type"] == "error" and reply["data"]["code"] == code, (message, reply)
        state = await env.state()
        assert state["episode_id"] is None and state["step_count"] == 0, state
    seen["ws_errors"] = "ok"


async def main() -> None:
    seen: dict = {}
    await reverse_text_ws(seen)
    await reverse_text_http(seen)
    await tic_tac_toe_ws_with_reconnect(seen)
    await tool_math_ws_and_http(seen)
    await tool_math_mcp_tool_client(seen)
    await kuhn_poker_one_seat_per_client(seen)
    await tic_tac_toe_2p_self_play(seen)
    await ws_errors(seen)
    print(json.dumps(seen))


asyncio.run(main())
