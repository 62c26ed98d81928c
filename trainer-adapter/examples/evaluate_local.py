"""Score a local model (optionally with a trained LoRA adapter) on fixed tasks of an environment.

The rewards a training run logs come from different tasks each step, so they are noisy. To see
whether a run helped, score the model before and after on the same tasks (the eval split by default,
tasks the run never trained on) with the same sampling:

    python trainer-adapter/examples/evaluate_local.py --model ~/.cache/edgegym/models/SmolLM2-135M-Instruct-reverse-text-sft
    python trainer-adapter/examples/evaluate_local.py --model ~/.cache/edgegym/models/SmolLM2-135M-Instruct-reverse-text-sft \\
        --adapter outputs/reverse-text-cpu/checkpoint-20

Generation runs in process (the trainer's TransformersGenerator); episodes are played and scored
by the edgegym server. Prints the mean reward, each reward component and how many answers hit
``--max-tokens``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model directory (or cached Hugging Face id)")
    parser.add_argument("--adapter", default=None, help="LoRA adapter directory, e.g. a checkpoint-N of a use_lora run")
    parser.add_argument("--server", default="http://127.0.0.1:8787")
    parser.add_argument("--env", default="reverse-text")
    parser.add_argument("--split", default="eval", choices=["train", "eval"])
    parser.add_argument("--tasks", type=int, default=8, help="tasks 0..N-1 of the split")
    parser.add_argument("--samples", type=int, default=4, help="rollouts per task")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=123, help="sampling seed (the same for before and after)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    from edgegym import AsyncClient  # noqa: PLC0415
    from edgegym.rollouts import CollectorSettings, RolloutCollector, SamplingParams, TaskRef  # noqa: PLC0415
    from edgegym.rollouts.transformers_generator import TransformersGenerator  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    model_path = os.path.expanduser(args.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    if args.adapter:
        from peft import PeftModel  # noqa: PLC0415

        model = PeftModel.from_pretrained(model, os.path.expanduser(args.adapter)).merge_and_unload()
    model.eval()
    torch.manual_seed(args.seed)
    generator = TransformersGenerator(model, tokenizer)

    async def run() -> None:
        async with AsyncClient(args.server) as gym:
            collector = RolloutCollector(
                gym,
                generator,
                tokenizer,
                CollectorSettings(sampling=SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature), max_seq_len=4096),
            )
            started = time.monotonic()
            tasks = [TaskRef(index=i, seed=i, split=args.split) for i in range(args.tasks)]
            groups = await collector.collect(args.env, tasks, args.samples)
            rollouts = [r for g in groups for r in g.rollouts]
            ok = [r for r in rollouts if r.ok]
            if not ok:
                raise SystemExit(f"every rollout failed: {rollouts[0].error if rollouts else 'no rollouts'}")
            mean = lambda values: statistics.fmean(values)  # noqa: E731
            parts = [f"reward {mean([float(r.reward) for r in ok]):.3f}"]  # type: ignore[arg-type]
            for name in sorted({n for r in ok for n in r.components}):
                parts.append(f"{name} {mean([r.components.get(name, 0.0) for r in ok]):.3f}")
            parts.append(f"truncated {mean([1.0 if r.completion_truncated else 0.0 for r in ok]):.2f}")
            parts.append(f"tokens {mean([r.model_tokens for r in ok]):.0f}")
            label = args.adapter or args.model
            print(f"{label}: {len(ok)}/{len(rollouts)} rollouts on {args.env} {args.split} 0..{args.tasks - 1}: " + ", ".join(parts) + f" ({time.monotonic() - started:.0f} s)")

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
