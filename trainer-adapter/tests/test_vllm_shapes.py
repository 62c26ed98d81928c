"""The vLLM path's HTTP calls checked against vLLM 0.32.0's request and response shapes.

THIS IS NOT A REAL vLLM RUN (test_vllm_server.py is: generation, LoRA loading and the
control routes against a real vLLM 0.32.0 on CPU). This file matters for what needs GPUs,
the NCCL full-weight routes. ``ShapeCheckingVLLM`` is a test server that validates every
request against the pydantic shapes below, transcribed from the vLLM 0.32.0 wheel's
sources, and answers in vLLM's response shapes. Generation
behind it is the tiny in-process model, so the token ids and logprobs it returns are real
samples. Sources (vllm==0.32.0):

- ``vllm/entrypoints/openai/completion/protocol.py``: CompletionRequest (``prompt`` as token
  ids, ``logprobs``, ``return_token_ids``, ``max_tokens``, ``temperature``, ``top_p``, ``top_k``,
  ``seed``, ``skip_special_tokens``, ``stop_token_ids``, ``n``), CompletionResponse /
  CompletionResponseChoice (``token_ids``, ``prompt_token_ids``, ``logprobs`` as
  CompletionLogProbs {text_offset, token_logprobs, tokens, top_logprobs}, ``finish_reason``).
- ``vllm/entrypoints/serve/lora/protocol.py``: LoadLoRAAdapterRequest {lora_name, lora_path,
  load_inplace, is_3d_lora_weight}, UnloadLoRAAdapterRequest {lora_name, lora_int_id}.
- ``vllm/entrypoints/rl/online/api_router.py``: /init_weight_transfer_engine {init_info},
  /start_weight_update, /update_weights {update_info}, /finish_weight_update {weight_version},
  /pause?mode=keep, /resume, /get_world_size, and ``vllm/entrypoints/serve/dev/cache/api_router.py``
  /reset_prefix_cache; ``vllm/distributed/weight_transfer/nccl_engine.py``
  NCCLWeightTransferUpdateInfo {names, dtype_names, shapes} and nccl_common.py
  NCCLWeightTransferInitInfo {master_address, master_port, rank_offset, world_size, packed, …}.

vLLM's own models accept unknown fields (extra="allow", logged); these are stricter
(extra="forbid") so a misspelt field fails here instead of being ignored there.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

import pytest
import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edgegym import AsyncClient
from edgegym.grpo.weight_sync import HTTPWeightSyncClient, VLLMLoraSync
from edgegym.rollouts import CollectorSettings, RolloutCollector, SamplingParams, TaskRef, TransformersGenerator, VLLMGenerator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompletionRequest(Strict):
    model: str | None = None
    prompt: list[int] | list[list[int]] | str | list[str]
    logprobs: int | None = None
    max_tokens: int | None = 16
    n: int = 1
    seed: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    stop_token_ids: list[int] | None = None
    skip_special_tokens: bool = True
    return_token_ids: bool | None = None


class CompletionLogProbs(BaseModel):
    text_offset: list[int]
    token_logprobs: list[float | None]
    tokens: list[str]
    top_logprobs: list[dict[str, float] | None]


class CompletionResponseChoice(BaseModel):
    index: int
    text: str
    logprobs: CompletionLogProbs | None
    finish_reason: str | None
    stop_reason: int | str | None = None
    token_ids: list[int] | None
    prompt_token_ids: list[int] | None


class LoadLoRAAdapterRequest(Strict):
    lora_name: str
    lora_path: str
    load_inplace: bool = False
    is_3d_lora_weight: bool = False


class UnloadLoRAAdapterRequest(Strict):
    lora_name: str
    lora_int_id: int | None = None


class NCCLWorkerInitInfo(Strict):
    master_address: str | None = None
    master_port: int | None = None
    rank_offset: int
    world_size: int
    nccl_unique_id_b64: str | None = None
    packed: bool = False
    packed_buffer_size_bytes: int | None = None
    packed_num_buffers: int | None = None


class InitWeightTransferRequest(Strict):
    init_info: NCCLWorkerInitInfo


class NCCLUpdateInfo(Strict):
    names: list[str]
    dtype_names: list[str]
    shapes: list[list[int]]


class UpdateWeightsRequest(Strict):
    update_info: NCCLUpdateInfo


class FinishWeightUpdateRequest(Strict):
    weight_version: str | None = None


class ShapeCheckingVLLM:
    """Validates each request against the vLLM 0.32.0 shapes above and records it."""

    def __init__(self, generator: TransformersGenerator, tokenizer: Any, served_model: str):
        self.generator = generator
        self.tokenizer = tokenizer
        self.models = {served_model}
        self.requests: list[tuple[str, Any]] = []
        self.errors: list[str] = []
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.startswith("/get_world_size"):
                    owner.requests.append(("/get_world_size", None))
                    return self._reply(200, {"world_size": 1})
                self._reply(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = urlparse(self.path).path
                query = parse_qs(urlparse(self.path).query)
                try:
                    body = json.loads(raw) if raw else None
                    status, reply = owner.handle(path, query, body)
                except ValidationError as exc:
                    owner.errors.append(f"{path}: {exc}")
                    status, reply = 400, {"error": {"message": str(exc), "type": "BadRequestError", "code": 400}}
                self._reply(status, reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def handle(self, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        if path == "/v1/completions":
            req = CompletionRequest.model_validate(body)
            self.requests.append((path, req))
            if req.model not in self.models:
                return 404, {"error": {"message": f"The model `{req.model}` does not exist.", "type": "NotFoundError", "code": 404}}
            assert isinstance(req.prompt, list) and all(isinstance(t, int) for t in req.prompt), "prompt must be token ids"
            sampling = SamplingParams(max_tokens=req.max_tokens or 16, temperature=req.temperature or 1.0, top_p=req.top_p or 1.0, top_k=req.top_k or 0)
            gen = asyncio.run_coroutine_threadsafe(self.generator.generate(req.prompt, sampling), self.loop).result(60)
            tokens = [self.tokenizer.decode([t]) for t in gen.completion_ids]
            offsets, at = [], 0
            for t in tokens:
                offsets.append(at)
                at += len(t)
            choice = CompletionResponseChoice(
                index=0,
                text=gen.text,
                logprobs=CompletionLogProbs(text_offset=offsets, token_logprobs=gen.logprobs, tokens=tokens, top_logprobs=[{tok: lp} for tok, lp in zip(tokens, gen.logprobs)]),
                finish_reason=gen.finish_reason,
                token_ids=gen.completion_ids if req.return_token_ids else None,
                prompt_token_ids=req.prompt if req.return_token_ids else None,
            )
            usage = {"prompt_tokens": len(req.prompt), "completion_tokens": len(gen.completion_ids), "total_tokens": len(req.prompt) + len(gen.completion_ids)}
            return 200, {"id": "cmpl-test", "object": "text_completion", "created": int(time.time()), "model": req.model, "choices": [choice.model_dump()], "usage": usage}
        if path == "/v1/load_lora_adapter":
            req = LoadLoRAAdapterRequest.model_validate(body)
            self.requests.append((path, req))
            if not (Path(req.lora_path) / "adapter_config.json").exists():
                return 404, {"error": {"message": f"Loading lora {req.lora_name} failed: No adapter found for {req.lora_path}", "type": "NotFoundError", "code": 404}}
            self.models.add(req.lora_name)
            return 200, f"Success: LoRA adapter '{req.lora_name}' added successfully."
        if path == "/v1/unload_lora_adapter":
            req = UnloadLoRAAdapterRequest.model_validate(body)
            self.requests.append((path, req))
            self.models.discard(req.lora_name)
            return 200, f"Success: LoRA adapter '{req.lora_name}' removed successfully."
        if path == "/init_weight_transfer_engine":
            req = InitWeightTransferRequest.model_validate(body)
            self.requests.append((path, req))
            return 200, {"message": "Weight transfer initialized"}
        if path == "/update_weights":
            req = UpdateWeightsRequest.model_validate(body)
            info = req.update_info
            assert len(info.names) == len(info.dtype_names) == len(info.shapes)
            self.requests.append((path, req))
            return 200, {"message": "Weights updated"}
        if path == "/finish_weight_update":
            req = FinishWeightUpdateRequest.model_validate(body or {})
            self.requests.append((path, req))
            return 200, {"message": "Weight update finished"}
        if path in ("/start_weight_update", "/resume", "/reset_prefix_cache", "/shutdown_weight_transfer_engine"):
            assert body is None or body == {}, f"{path} takes no body"
            self.requests.append((path, None))
            return 200, {"success": True} if path == "/reset_prefix_cache" else {"message": "ok", "status": "resumed"}
        if path == "/pause":
            assert query.get("mode") in (["abort"], ["wait"], ["keep"]), query
            self.requests.append((path, query["mode"][0]))
            return 200, {"status": "paused"}
        return 404, {"error": {"message": f"no route {path}"}}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

        async def cancel_pending():
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(cancel_pending(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture()
def fake_vllm(warm_model, tokenizer):
    srv = ShapeCheckingVLLM(TransformersGenerator(warm_model, tokenizer), tokenizer, served_model="tiny")
    yield srv
    srv.close()


def test_token_in_token_out_generation_shapes(server, fake_vllm, tokenizer):
    gen = VLLMGenerator(fake_vllm.url, "tiny")

    async def main():
        async with AsyncClient(server.url) as gym:
            collector = RolloutCollector(gym, gen, tokenizer, CollectorSettings(sampling=SamplingParams(max_tokens=6), max_seq_len=300))
            groups = await collector.collect("guess-number", [TaskRef(index=4, seed=4)], 3)
            await gen.aclose()
            return groups

    groups = asyncio.run(main())
    assert not fake_vllm.errors, fake_vllm.errors
    rollouts = groups[0].rollouts
    assert all(r.ok for r in rollouts), [r.error for r in rollouts]
    calls = [req for path, req in fake_vllm.requests if path == "/v1/completions"]
    assert len(calls) == sum(r.turns for r in rollouts)
    assert all(c.return_token_ids and c.logprobs == 0 and c.model == "tiny" for c in calls)
    # Each request's prompt is exactly the rollout's tokens before that turn.
    for r in rollouts:
        for start, _ in r.turn_spans:
            assert any(c.prompt == r.prompt_ids + r.completion_ids[:start] for c in calls)


def test_lora_weight_push_shapes(fake_vllm, warm_model, tmp_path):
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(warm_model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
    gen = VLLMGenerator(fake_vllm.url, "tiny")
    sync = VLLMLoraSync(fake_vllm.url, gen, tmp_path / "adapters", name_prefix="run", keep=2)
    for version in range(4):
        sync.push(model, version)
    assert gen.model == "run-v3"
    assert not fake_vllm.errors, fake_vllm.errors
    loads = [req for path, req in fake_vllm.requests if path == "/v1/load_lora_adapter"]
    unloads = [req.lora_name for path, req in fake_vllm.requests if path == "/v1/unload_lora_adapter"]
    assert [r.lora_name for r in loads] == ["run-v0", "run-v1", "run-v2", "run-v3"]
    assert all(not r.load_inplace for r in loads)  # a new name per version, never an in-place reload
    assert unloads == ["run-v0", "run-v1"]
    assert sorted(p.name for p in (tmp_path / "adapters").iterdir()) == ["run-v2", "run-v3"]
    sync.close()


def test_full_weight_update_control_plane_shapes(fake_vllm, warm_model):
    """The HTTP half of a full-weight update, with the payloads vLLM's trainer engine builds
    (nccl_engine.py: worker init info at rank_offset 1; update_info from the parameter
    metadata, dtype names as str(dtype) without 'torch.'). The NCCL broadcast itself needs
    GPUs and is not exercised here."""
    client = HTTPWeightSyncClient(fake_vllm.url)
    world = client.get_world_size() + 1
    client.init_weight_transfer_engine({"master_address": "127.0.0.1", "master_port": 51216, "rank_offset": 1, "world_size": world, "packed": True})
    params = list(warm_model.named_parameters())
    client.weight_version = "7"
    client.pause()
    client.start_weight_update()
    client.update_weights({"names": [n for n, _ in params], "dtype_names": [str(p.dtype).split(".")[-1] for _, p in params], "shapes": [list(p.shape) for _, p in params]})
    client.finish_weight_update()
    assert client.reset_prefix_cache() is True
    client.resume()
    client.close()
    assert not fake_vllm.errors, fake_vllm.errors
    paths = [p for p, _ in fake_vllm.requests]
    assert paths == ["/get_world_size", "/init_weight_transfer_engine", "/pause", "/start_weight_update", "/update_weights", "/finish_weight_update", "/reset_prefix_cache", "/resume"]
    finish = next(req for p, req in fake_vllm.requests if p == "/finish_weight_update")
    assert finish.weight_version == "7"
    update = next(req for p, req in fake_vllm.requests if p == "/update_weights")
    assert update.update_info.dtype_names[0] == "float32" and update.update_info.shapes[0] == list(params[0][1].shape)


def test_validator_rejects_a_wrong_shape(fake_vllm):
    import httpx

    r = httpx.post(fake_vllm.url + "/update_weights", json={"update_info": {"names": ["a"], "dtype_names": ["float32"], "shapes": [[1]], "packed": True}})
    assert r.status_code == 400  # `packed` moved to init_info in vLLM 0.28+; update_info rejects it
    fake_vllm.errors.clear()
