"""Checks a vLLM server before training starts, so a wrong launch fails in seconds with
what to change, not after the model has loaded or at the first weight push.

What is checked, against vLLM 0.32.0's server (and tried on its CPU build):

- it answers ``GET /v1/models`` and serves ``vllm_model`` (a wrong name would otherwise
  come back as a 404 from ``/v1/completions`` in the first batch);
- the routes the weight sync needs are there, read from its ``/openapi.json``:
  ``/v1/load_lora_adapter`` (``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``),
  ``/init_weight_transfer_engine`` and ``/reset_prefix_cache`` (``VLLM_SERVER_DEV_MODE=1``).
  A server started with ``--disable-fastapi-docs`` has no ``/openapi.json``; the route
  check is skipped then and a missing route shows at the first push instead.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..errors import EdgegymError

LAUNCH_HINTS = {
    "/v1/load_lora_adapter": "start vLLM with --enable-lora --max-lora-rank <at least lora_r> and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True",
    "/init_weight_transfer_engine": "start vLLM with VLLM_SERVER_DEV_MODE=1 and --weight-transfer-config '{\"backend\":\"nccl\"}'",
    "/reset_prefix_cache": "start vLLM with VLLM_SERVER_DEV_MODE=1",
}

ROUTES_FOR_SYNC = {
    "lora": ["/v1/load_lora_adapter"],
    "nccl": ["/init_weight_transfer_engine", "/reset_prefix_cache"],
    "none": [],
}


def _error(message: str) -> EdgegymError:
    return EdgegymError(message, status=None, code="vllm_misconfigured")


def check_vllm_server(base_url: str, model: str, weight_sync: str, *, api_key: str | None = None, timeout: float = 10.0) -> list[str]:
    """Raises an error naming the fix when the server cannot serve this run; returns the
    served model names."""
    base = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=timeout, headers=headers) as http:
        try:
            response = http.get(f"{base}/v1/models")
        except httpx.TransportError as exc:
            raise _error(f"vLLM is not reachable at {base} ({exc}); start it first (docs/training.md, 'Launching vLLM and the trainer')") from exc
        if not response.is_success:
            raise _error(f"GET {base}/v1/models answered {response.status_code}: {response.text[:300]}")
        served = [str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)]
        if model not in served:
            raise _error(f"vLLM at {base} serves {served}, not {model!r}: set vllm_model to the --served-model-name (or the path vLLM was started with)")
        wanted = ROUTES_FOR_SYNC.get(weight_sync, [])
        if wanted:
            doc = http.get(f"{base}/openapi.json")
            paths: dict[str, Any] = doc.json().get("paths", {}) if doc.is_success else {}
            missing = [route for route in wanted if paths and route not in paths]
            if missing:
                hints = "; ".join(LAUNCH_HINTS[route] for route in missing)
                raise _error(f"vLLM at {base} lacks {', '.join(missing)}, which weight_sync = {weight_sync!r} needs: {hints}")
    return served
