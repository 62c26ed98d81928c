"""SFT conversations as token ids with the environment mask, built the way rollouts are.

A conversation is tokenised turn by turn with the same ``ChatTokens`` the rollout collector
uses: the opening messages and generation prompt, then each assistant message's text and
end-of-turn token (mask 1: what the model writes), then the environment's messages and the
next generation prompt (mask 0). The loss therefore covers exactly the tokens the model
would sample when it plays, and the prompt it sees at turn k is the one a rollout gives it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..rollouts.chat_tokens import ChatTokens, TemplateError

#: Bounds on what a data file may hold: rows are read whole, so a hostile file cannot exhaust memory unnoticed.
MAX_ROWS = 1_000_000
MAX_MESSAGES = 1_000


@dataclass
class Example:
    input_ids: list[int]
    #: 1 on tokens the model wrote (the loss), 0 on the prompt and the environment's tokens.
    mask: list[int]


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a chat JSONL or Parquet file (`messages`, optional `tools` as a list or JSON text)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"no SFT data at {path}")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # noqa: PLC0415 - only Parquet needs it (the [train] extra has it)

        rows = pq.read_table(path).to_pylist()
    else:
        rows = []
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from exc
                if len(rows) > MAX_ROWS:
                    raise ValueError(f"{path}: more than {MAX_ROWS} rows")
    out = []
    for n, row in enumerate(rows, 1):
        messages = row.get("messages") if isinstance(row, dict) else None
        if not isinstance(messages, list) or not messages or len(messages) > MAX_MESSAGES:
            raise ValueError(f"{path}: row {n} has no `messages` list (or more than {MAX_MESSAGES})")
        clean = [{k: v for k, v in m.items() if v is not None} for m in messages]
        tools = row.get("tools")
        if isinstance(tools, str):
            tools = json.loads(tools)
        out.append({"messages": clean, "tools": tools or None})
    return out


def encode_conversation(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None, template_kwargs: dict[str, Any] | None = None, max_len: int | None = None) -> Example:
    """Token ids and mask of one conversation (see the module's docstring)."""
    chat = ChatTokens(tokenizer, tools=tools, template_kwargs=template_kwargs)
    turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if not turns:
        raise ValueError("the conversation has no assistant message to learn")
    ids = chat.prompt_ids(messages[: turns[0]])
    mask = [0] * len(ids)
    turn_end = chat.encode(chat.turn_end())
    if not turn_end:
        raise ValueError("the chat template writes nothing after an assistant message: no end-of-turn token to learn")
    for k, at in enumerate(turns):
        msg = messages[at]
        if msg.get("tool_calls"):
            # The template renders tool calls its own way: what it adds for this message, then its end of turn.
            base = chat.render(messages[:at], add_generation_prompt=True)
            full = chat.render(messages[: at + 1], add_generation_prompt=False)
            if not full.startswith(base):
                raise TemplateError("the chat template renders earlier turns differently once a tool call follows; cannot mask the call")
            written = chat.encode(full[len(base) :])
            written = written[: len(written) - len(turn_end) + 1] if written[-len(turn_end) :] == turn_end else written
        else:
            written = chat.encode(msg.get("content") or "") + turn_end[:1]
        ids += written
        mask += [1] * len(written)
        nxt = turns[k + 1] if k + 1 < len(turns) else None
        if nxt is None:
            break
        delta = chat.env_delta_ids(messages[: at + 1], messages[at + 1 : nxt], written, ended_on_stop=True)
        ids += delta
        mask += [0] * len(delta)
    if max_len is not None and len(ids) > max_len:
        ids, mask = ids[:max_len], mask[:max_len]
    return Example(ids, mask)
