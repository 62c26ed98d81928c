"""An edgegym episode played through its MCP server (/mcp/episodes/{id}) by the official
MCP Python SDK (PyPI ``mcp``), run in its own venv (scripts/mcp-python-venv.sh) against the
real server with an API key; the trainer then reads and scores the episode with edgegym's
own client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from edgegym import Client
from support.server import EdgegymServer
from support.side_venv import side_venv_python

PLAYER = Path(__file__).resolve().parent / "mcp_client" / "play_tool_math.py"


@pytest.fixture(scope="module")
def mcp_python() -> str:
    return side_venv_python(venv=".venv-mcp", what="MCP SDK environment", script="scripts/mcp-python-venv.sh", override="EDGEGYM_MCP_PYTHON", require="EDGEGYM_REQUIRE_MCP_PYTHON")


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory):
    with EdgegymServer(tmp_path_factory.mktemp("edgegym-mcp"), env_module=False, api_keys="sk-mcp-py") as srv:
        yield srv


def test_mcp_python_sdk_plays_an_episode(mcp_python: str, keyed_server: EdgegymServer) -> None:
    client = Client(keyed_server.url, api_key="sk-mcp-py")
    episode = client.reset("tool-math", split="eval", index=0)
    out = subprocess.run(
        [mcp_python, str(PLAYER), keyed_server.url, "sk-mcp-py", episode.episode_id],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["tools"] == ["calculator", "edgegym_reply"]
    assert episode.messages[-1].content in seen["instructions"]
    assert seen["product"] == ["45611850"]
    assert seen["bad_is_error"] is True
    assert seen["done_meta"]["edgegym/step"] == {"turn": 3, "done": True, "stop_reason": "no_tool_calls", "truncated": False}

    stored = client.episode(episode.episode_id)
    assert stored.turn == 3
    calls = [m for m in stored.messages if m.role == "assistant" and m.tool_calls]
    assert [json.loads(c.tool_calls[0].function.arguments) for c in calls] == [{"expression": "29427 * 1550"}, {"expression": "__import__('os')"}]
    score = client.score(episode.episode_id)
    assert score.score.metrics["calculator_calls"] == 2


def test_mcp_route_needs_the_key(mcp_python: str, keyed_server: EdgegymServer) -> None:
    client = Client(keyed_server.url, api_key="sk-mcp-py")
    episode = client.reset("tool-math", split="eval", index=1)
    out = subprocess.run([mcp_python, str(PLAYER), keyed_server.url, "sk-wrong", episode.episode_id], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    # The SDK reports a refused initialize as an error response (it does not print the status).
    assert "Server returned an error response" in out.stderr or "401" in out.stderr
    assert client.episode(episode.episode_id).turn == 0
