"""In-process generation with a Hugging Face causal LM: the CPU (and test) backend.

Concurrent requests are gathered into batches (left-padded, one ``model.generate`` per
batch of requests with the same sampling settings), so many episodes in flight still
use the model efficiently. Logprobs come from the processed scores ``generate``
returns (after temperature, top-k, top-p), the same definition as vLLM's
``--logprobs-mode processed_logprobs``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

import torch

from .generator import Generation, SamplingParams


@dataclass
class _Request:
    prompt_ids: list[int]
    sampling: SamplingParams
    future: asyncio.Future[Generation]


class TransformersGenerator:
    """``Generator`` over an in-process model.

    ``model`` is used as given: pass a copy when training runs on another thread at the
    same time, and push new weights with ``load_weights`` after each optimizer step
    (``GRPOTrainer`` does both).
    """

    def __init__(self, model: Any, tokenizer: Any, *, max_batch_size: int = 64, batch_wait_s: float = 0.005) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_batch_size = max_batch_size
        self.batch_wait_s = batch_wait_s
        self.lock = threading.Lock()  # held while generating or loading weights
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad)
        eos = tokenizer.eos_token_id
        self.eos_ids = [int(e) for e in (eos if isinstance(eos, list) else [eos])] if eos is not None else []

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            self._loop = loop
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._serve())
        future: asyncio.Future[Generation] = loop.create_future()
        assert self._queue is not None
        await self._queue.put(_Request(list(prompt_ids), sampling, future))
        return await future

    async def _serve(self) -> None:
        assert self._queue is not None
        while True:
            first = await self._queue.get()
            await asyncio.sleep(self.batch_wait_s)  # let concurrent episodes join the batch
            pending = [first]
            while not self._queue.empty() and len(pending) < self.max_batch_size:
                pending.append(self._queue.get_nowait())
            by_params: dict[SamplingParams, list[_Request]] = {}
            for req in pending:
                by_params.setdefault(req.sampling, []).append(req)
            for sampling, reqs in by_params.items():
                try:
                    results = await asyncio.to_thread(self._generate_batch, [r.prompt_ids for r in reqs], sampling)
                except Exception as exc:  # noqa: BLE001 - handed to every waiting request
                    for r in reqs:
                        if not r.future.done():
                            r.future.set_exception(exc)
                    continue
                for r, result in zip(reqs, results):
                    if not r.future.done():
                        r.future.set_result(result)

    def load_weights(self, source: torch.nn.Module) -> None:
        """Copy a trained model's weights into the generation model (same architecture)."""
        with self.lock, torch.no_grad():
            self.model.load_state_dict(source.state_dict())

    def _generate_batch(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Generation]:
        with self.lock, torch.no_grad():
            device = next(self.model.parameters()).device
            width = max(len(p) for p in prompts)
            input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
            attention = torch.zeros((len(prompts), width), dtype=torch.long)
            for i, p in enumerate(prompts):
                input_ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
                attention[i, width - len(p) :] = 1
            stop_ids = self.eos_ids + [t for t in sampling.stop_token_ids if t not in self.eos_ids]
            greedy = sampling.temperature <= 0
            kwargs: dict[str, Any] = dict(
                max_new_tokens=sampling.max_tokens,
                do_sample=not greedy,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=self.pad_id,
                eos_token_id=stop_ids or None,
            )
            if not greedy:
                kwargs.update(temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k or None)
            was_training = self.model.training
            self.model.eval()
            try:
                out = self.model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device), **kwargs)
            finally:
                if was_training:
                    self.model.train()
            new_tokens = out.sequences[:, width:].cpu()
            scores = torch.stack(out.scores, dim=1).float().cpu()  # (batch, steps, vocab), processed
            logprobs_all = torch.log_softmax(scores, dim=-1)
        results: list[Generation] = []
        for i in range(len(prompts)):
            ids: list[int] = []
            lps: list[float] = []
            finish = "length"
            for t in range(new_tokens.shape[1]):
                tok = int(new_tokens[i, t])
                ids.append(tok)
                lps.append(float(logprobs_all[i, t, tok]))
                if tok in stop_ids:
                    finish = "stop"
                    break
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            results.append(Generation(completion_ids=ids, logprobs=lps, text=text, finish_reason=finish))
        return results
