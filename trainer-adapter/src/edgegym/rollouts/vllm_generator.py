"""Generation through a vLLM server, token ids in and token ids out.

Written against vLLM 0.32.0 (``vllm/entrypoints/openai/completion/protocol.py``):
``POST /v1/completions`` accepts ``prompt`` as a list of token ids, and with
``return_token_ids: true`` each choice carries ``token_ids`` (the sampled ids) and
``prompt_token_ids``; ``logprobs: 0`` returns ``logprobs.token_logprobs`` for the
sampled tokens. Start the server with ``--logprobs-mode processed_logprobs`` so the
logprobs are those of the distribution actually sampled (after temperature, top-p/k).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from ..errors import EdgegymError
from .generator import Generation, SamplingParams


class VLLMGenerator:
    """``Generator`` over a vLLM OpenAI-compatible server.

    ``model`` is the served model name, or the current LoRA adapter's name (requests
    name the adapter as ``model``); the trainer's weight sync switches it with
    ``set_model`` after loading a new adapter version.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 600.0,
        max_connections: int = 256,
        retries: int = 3,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http_args: dict[str, Any] = dict(
            timeout=httpx.Timeout(timeout, connect=10.0),
            headers=headers,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def set_model(self, model: str) -> None:
        self.model = model

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = httpx.AsyncClient(**self._http_args)
            self._loop = loop
        return self._http

    def request_body(self, prompt_ids: list[int], sampling: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": list(prompt_ids),
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": max(0, sampling.top_k),
            "logprobs": 0,
            "return_token_ids": True,
            "skip_special_tokens": True,
            "n": 1,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if sampling.stop_token_ids:
            body["stop_token_ids"] = list(sampling.stop_token_ids)
        return body

    @staticmethod
    def parse_choice(choice: dict[str, Any]) -> Generation:
        ids = choice.get("token_ids")
        if ids is None:
            raise EdgegymError(
                "vLLM returned no token_ids: the server must be vLLM ≥ 0.10 and the request must set return_token_ids",
                status=200,
                code="invalid_response",
            )
        lp = choice.get("logprobs") or {}
        token_logprobs = lp.get("token_logprobs")
        if token_logprobs is None or len(token_logprobs) != len(ids):
            raise EdgegymError(
                f"vLLM returned {0 if token_logprobs is None else len(token_logprobs)} logprobs for {len(ids)} tokens",
                status=200,
                code="invalid_response",
            )
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        logprobs = [float(x) if x is not None else float("nan") for x in token_logprobs]
        return Generation(completion_ids=[int(t) for t in ids], logprobs=logprobs, text=choice.get("text") or "", finish_reason=finish)

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        body = self.request_body(prompt_ids, sampling)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._client().post(f"{self.base_url}/v1/completions", json=body)
            except httpx.TransportError as exc:
                if attempt > self.retries:
                    raise EdgegymError(f"vLLM unreachable: {exc}", status=None, code="network_error") from exc
                await asyncio.sleep(0.5 * attempt)
                continue
            if response.status_code in (429, 502, 503, 504) and attempt <= self.retries:
                await asyncio.sleep(0.5 * attempt)
                continue
            if not response.is_success:
                raise EdgegymError(f"vLLM /v1/completions: {response.text[:500]}", status=response.status_code, code="model_error")
            data = response.json()
            return self.parse_choice(data["choices"][0])

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
