"""Reading tool calls out of the text a model wrote.

With token-in/token-out generation the server returns raw text, so tool calls are
parsed here, in the format the model was trained on. The default is the Hermes /
Qwen2.5 format: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol


class ToolCallParser(Protocol):
    def parse(self, text: str, turn: int) -> dict[str, Any]:
        """The assistant message (OpenAI shape) for ``text``: content, and tool_calls when there are any."""
        ...


@dataclass(frozen=True)
class HermesToolCallParser:
    """``<tool_call>{json}</tool_call>`` blocks; text outside them is the content.

    A block that is not valid JSON with a ``name`` stays in the content as written, so
    the environment sees what the model did (and a tool environment ends the episode
    on a message without calls, as it would for any malformed call).
    """

    open_tag: str = "<tool_call>"
    close_tag: str = "</tool_call>"

    def parse(self, text: str, turn: int) -> dict[str, Any]:
        pattern = re.compile(re.escape(self.open_tag) + r"(.*?)" + re.escape(self.close_tag), re.DOTALL)
        calls: list[dict[str, Any]] = []
        kept: list[str] = []
        last = 0
        for match in pattern.finditer(text):
            call = self._call(match.group(1), turn, len(calls))
            if call is None:
                continue
            kept.append(text[last : match.start()])
            last = match.end()
            calls.append(call)
        kept.append(text[last:])
        content = "".join(kept).strip() if calls else text
        message: dict[str, Any] = {"role": "assistant", "content": content if content or not calls else None}
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def _call(body: str, turn: int, n: int) -> dict[str, Any] | None:
        try:
            data = json.loads(body.strip())
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
            return None
        args = data.get("arguments", {})
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return {"id": f"call_{turn}_{n}", "type": "function", "function": {"name": data["name"], "arguments": arguments}}


@dataclass(frozen=True)
class NoToolCallParser:
    """Plain text: the whole completion is the content (single-turn and chat environments)."""

    def parse(self, text: str, turn: int) -> dict[str, Any]:
        return {"role": "assistant", "content": text}
