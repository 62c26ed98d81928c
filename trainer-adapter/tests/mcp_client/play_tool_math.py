"""Plays one edgegym episode through its MCP server with the official MCP Python SDK.

Run by tests/test_mcp_python_client.py with the interpreter of the MCP venv
(scripts/mcp-python-venv.sh): python play_tool_math.py BASE_URL API_KEY EPISODE_ID
Prints one JSON object: what the agent saw.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def play(base: str, key: str, episode_id: str) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(f"{base}/mcp/episodes/{episode_id}", http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            product = await session.call_tool("calculator", {"expression": "29427 * 1550"})
            bad = await session.call_tool("calculator", {"expression": "__import__('os')"})
            done = await session.call_tool("edgegym_reply", {"content": "<answer>45611850</answer>"})
            return {
                "instructions": init.instructions,
                "tools": [t.name for t in tools.tools],
                "product": [c.text for c in product.content],
                "bad_is_error": bad.is_error,
                "done_meta": done.meta,
            }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(play(sys.argv[1], sys.argv[2], sys.argv[3]))))
