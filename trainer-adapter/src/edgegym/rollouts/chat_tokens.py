"""Token ids of a conversation built turn by turn, never re-tokenising what came before.

A multi-turn episode's token sequence is
``prompt_ids + completion_ids(turn 1) + env_ids(turn 1) + completion_ids(turn 2) + …``
where each ``completion_ids`` are exactly the tokens the model sampled and each
``env_ids`` are the tokens of the environment's new messages only. Those are found by
rendering the chat template twice (the conversation up to the assistant message, and
the same conversation with the environment's messages and the next generation prompt)
and tokenising the text the second render adds. Re-tokenising the whole conversation
instead would change earlier tokens (BPE is not a bijection; templates are not always
append-only) and the trainer would score tokens the model never sampled.
"""

from __future__ import annotations

import json
from typing import Any, Sequence


class TemplateError(ValueError):
    """The chat template cannot be extended turn by turn (it rewrites earlier turns)."""


_PROBE = "\u2063edgegym-probe\u2063"


def _for_template(message: dict[str, Any]) -> dict[str, Any]:
    """A copy for rendering: tool-call arguments as objects, as Hugging Face templates expect."""
    out = dict(message)
    calls = out.get("tool_calls")
    if calls:
        rendered = []
        for call in calls:
            fn = dict(call.get("function", {}))
            args = fn.get("arguments")
            if isinstance(args, str):
                try:
                    fn["arguments"] = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError:
                    fn["arguments"] = args
            rendered.append({**call, "function": fn})
        out["tool_calls"] = rendered
    if out.get("content") is None and out.get("role") == "assistant":
        out["content"] = ""
    return out


class ChatTokens:
    """Renders a tokenizer's chat template and tokenises only what each turn adds.

    ``tokenizer`` is a Hugging Face tokenizer with a chat template. ``tools`` are the
    OpenAI tool definitions the episode offers (rendered into the prompt by templates
    that support tools). ``template_kwargs`` go to ``apply_chat_template`` (e.g.
    ``{"enable_thinking": False}``).
    """

    def __init__(self, tokenizer: Any, tools: Sequence[dict[str, Any]] | None = None, template_kwargs: dict[str, Any] | None = None):
        self.tokenizer = tokenizer
        self.tools = list(tools) if tools else None
        self.template_kwargs = dict(template_kwargs or {})
        self._turn_end: str | None = None

    def render(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool) -> str:
        text = self.tokenizer.apply_chat_template(
            [_for_template(m) for m in messages],
            tools=self.tools,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            **self.template_kwargs,
        )
        if not isinstance(text, str):  # some versions return a list for batched input
            raise TemplateError("apply_chat_template(tokenize=False) did not return a string")
        return text

    def encode(self, text: str) -> list[int]:
        """Tokenises template text; special tokens written in it are matched, none are added."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_ids(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """Token ids of the opening messages plus the assistant generation prompt."""
        return self.encode(self.render(messages, add_generation_prompt=True))

    def turn_end(self) -> str:
        """What the template writes after an assistant message's content (e.g. ``<|im_end|>\\n``)."""
        if self._turn_end is None:
            probe = [{"role": "user", "content": "x"}, {"role": "assistant", "content": _PROBE}]
            text = self.render(probe, add_generation_prompt=False)
            at = text.rfind(_PROBE)
            if at < 0:
                raise TemplateError("the chat template does not render assistant content verbatim")
            self._turn_end = text[at + len(_PROBE) :]
        return self._turn_end

    def env_delta_ids(
        self,
        history: Sequence[dict[str, Any]],
        env_messages: Sequence[dict[str, Any]],
        completion_ids: Sequence[int],
        ended_on_stop: bool,
    ) -> list[int]:
        """Token ids to append after the model's completion so the next prompt reads as the template would.

        ``history`` ends with the assistant message the completion was parsed into.
        The result covers the rest of the assistant turn the model did not write
        (e.g. the newline after its stop token, or the whole end-of-turn marker when
        max_tokens cut it), then the environment's messages and the next generation prompt.
        """
        if not history or history[-1].get("role") != "assistant":
            raise ValueError("history must end with the assistant message")
        base = self.render(history, add_generation_prompt=False)
        full = self.render([*history, *env_messages], add_generation_prompt=True)
        if not full.startswith(base):
            raise TemplateError(
                "the chat template is not append-only: rendering the next turn changed earlier text "
                "(templates that drop <think> from past turns do this); use a template that keeps past turns as they were"
            )
        tail = self.turn_end()
        if ended_on_stop and completion_ids:
            # The model wrote the end-of-turn token itself; only what follows it is added.
            stop_text = self.tokenizer.decode([completion_ids[-1]], skip_special_tokens=False)
            if stop_text and tail.startswith(stop_text):
                tail = tail[len(stop_text) :]
        return self.encode(tail + full[len(base) :])
