"""Pushing new weights to the generation backend after each optimizer step.

vLLM routes used (vLLM 0.32.0 sources):

- LoRA, ``vllm/entrypoints/serve/lora/api_router.py`` + ``protocol.py``:
  ``POST /v1/load_lora_adapter {"lora_name", "lora_path", "load_inplace"}`` and
  ``POST /v1/unload_lora_adapter {"lora_name"}`` (server started with
  ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``). Each version gets a
  new adapter name and directory: reloading one name in place keeps prefix-cache blocks
  computed with the old weights (vLLM logs a warning for exactly this case).
- Full weights, ``vllm/entrypoints/rl/online/api_router.py`` (server started with
  ``--weight-transfer-config '{"backend":"nccl"}'``): ``/init_weight_transfer_engine
  {"init_info"}``, ``/start_weight_update``, ``/update_weights {"update_info": {names,
  dtype_names, shapes}}`` (blocks while the workers receive the NCCL broadcast),
  ``/finish_weight_update {"weight_version"}``, ``/get_world_size``; and
  ``/reset_prefix_cache`` (``VLLM_SERVER_DEV_MODE=1``). The trainer side of the NCCL
  broadcast is vLLM's own ``WeightTransferTrainerFactory`` engine
  (``vllm/distributed/weight_transfer/nccl_engine.py``), driven through
  ``HTTPWeightSyncClient`` below, so parameter order, dtypes and packing agree with the
  workers by construction.
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import Any, Protocol

import httpx

from ..errors import EdgegymError


class WeightSync(Protocol):
    def push(self, model: Any, version: int) -> None:
        """Make generation use ``model``'s current weights from now on."""
        ...

    def close(self) -> None: ...


class NoSync:
    """Generation keeps its initial weights (evaluation, debugging)."""

    def push(self, model: Any, version: int) -> None:
        return None

    def close(self) -> None:
        return None


class InProcessSync:
    """Copies the trained weights into a ``TransformersGenerator``'s model."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator

    def push(self, model: Any, version: int) -> None:
        if self.generator.model is model:
            return  # generating with the training model itself (synchronous mode)
        self.generator.load_weights(model)

    def close(self) -> None:
        return None


def _post(http: httpx.Client, url: str, json: Any = None, params: dict[str, Any] | None = None) -> httpx.Response:
    response = http.post(url, json=json, params=params)
    if not response.is_success:
        raise EdgegymError(f"POST {url}: {response.status_code} {response.text[:500]}", status=response.status_code, code="vllm_error")
    return response


class VLLMLoraSync:
    """Saves the LoRA adapter of each version and loads it into vLLM under a new name.

    The generator is switched to the new name (requests name the adapter as ``model``).
    Adapters older than ``keep`` versions are unloaded and their directories removed;
    ``keep`` covers the batches still being generated with older versions. Names carry a
    random run tag unless ``name_prefix`` is given: a vLLM server outlives training runs,
    and a resumed or second run would otherwise ask for a name still loaded (vLLM answers
    400, found against a real vLLM 0.32.0).
    """

    def __init__(self, base_url: str, generator: Any, adapter_dir: str | Path, *, name_prefix: str | None = None, keep: int = 2, timeout: float = 300.0, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.generator = generator
        self.adapter_dir = Path(adapter_dir)
        self.name_prefix = name_prefix or f"edgegym-{secrets.token_hex(3)}"
        self.keep = max(1, keep)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(timeout=timeout, headers=headers)
        self.loaded: list[tuple[str, Path]] = []

    def adapter_name(self, version: int) -> str:
        return f"{self.name_prefix}-v{version}"

    def push(self, model: Any, version: int) -> None:
        name = self.adapter_name(version)
        path = (self.adapter_dir / name).resolve()
        model.save_pretrained(str(path))  # a peft model saves only its adapter
        _post(self.http, f"{self.base_url}/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path), "load_inplace": False})
        self.generator.set_model(name)
        self.loaded.append((name, path))
        while len(self.loaded) > self.keep:
            old, old_path = self.loaded.pop(0)
            _post(self.http, f"{self.base_url}/v1/unload_lora_adapter", {"lora_name": old})
            shutil.rmtree(old_path, ignore_errors=True)

    def close(self) -> None:
        self.http.close()


class HTTPWeightSyncClient:
    """The four-call control plane vLLM's trainer-side weight-transfer engine drives
    (the structural ``VLLMWeightSyncClient`` of ``vllm/distributed/weight_transfer``), over httpx."""

    def __init__(self, base_url: str, timeout: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(timeout=timeout)
        self.weight_version: str | None = None

    def get_world_size(self) -> int:
        response = self.http.get(f"{self.base_url}/get_world_size")
        if not response.is_success:
            raise EdgegymError(f"GET /get_world_size: {response.status_code} {response.text[:300]}", status=response.status_code, code="vllm_error")
        return int(response.json()["world_size"])

    def init_weight_transfer_engine(self, init_info: dict[str, Any]) -> None:
        _post(self.http, f"{self.base_url}/init_weight_transfer_engine", {"init_info": init_info})

    def start_weight_update(self) -> None:
        _post(self.http, f"{self.base_url}/start_weight_update")

    def update_weights(self, update_info: dict[str, Any] | list[dict[str, Any]]) -> None:
        _post(self.http, f"{self.base_url}/update_weights", {"update_info": update_info})

    def finish_weight_update(self, weight_version: str | None = None) -> None:
        version = weight_version if weight_version is not None else self.weight_version
        _post(self.http, f"{self.base_url}/finish_weight_update", {"weight_version": version} if version is not None else None)

    def shutdown_weight_transfer_engine(self) -> None:
        _post(self.http, f"{self.base_url}/shutdown_weight_transfer_engine")

    def pause(self) -> None:
        _post(self.http, f"{self.base_url}/pause", params={"mode": "keep"})

    def resume(self) -> None:
        _post(self.http, f"{self.base_url}/resume")

    def reset_prefix_cache(self) -> bool:
        response = _post(self.http, f"{self.base_url}/reset_prefix_cache")
        try:
            return bool(response.json().get("success", True))
        except ValueError:
            return True

    def close(self) -> None:
        self.http.close()


class VLLMNcclSync:
    """Full weights over NCCL with vLLM's own trainer-side engine (needs ``vllm`` importable
    in the trainer process, on a GPU that is not one of vLLM's).

    Each push: pause generation (requests are kept, not aborted), broadcast every
    parameter, finish the update with the version, reset the prefix cache (its blocks
    were computed with the old weights), resume.
    """

    def __init__(self, base_url: str, model: Any, *, master_address: str, master_port: int) -> None:
        from vllm.distributed.weight_transfer.base import ModuleSource  # noqa: PLC0415 - GPU-only dependency
        from vllm.distributed.weight_transfer.factory import WeightTransferTrainerFactory  # noqa: PLC0415
        from vllm.distributed.weight_transfer.nccl_engine import NCCLTrainerInitInfo  # noqa: PLC0415

        self.client = HTTPWeightSyncClient(base_url)
        world_size = self.client.get_world_size() + 1  # the inference workers plus this trainer (rank 0)
        init = NCCLTrainerInitInfo(master_address=master_address, master_port=master_port, world_size=world_size, rank=0)
        self.engine = WeightTransferTrainerFactory.trainer_init(init, client=self.client, source=ModuleSource(_plain_module(model)))

    def push(self, model: Any, version: int) -> None:
        self.client.weight_version = str(version)
        self.client.pause()
        try:
            self.engine.send_weights()
            self.client.reset_prefix_cache()
        finally:
            self.client.resume()

    def close(self) -> None:
        try:
            self.client.shutdown_weight_transfer_engine()
        finally:
            self.client.close()


def _plain_module(model: Any) -> Any:
    """The module whose parameter names match the checkpoint vLLM loaded (no DDP/compile wrappers)."""
    inner = getattr(model, "module", model)
    return getattr(inner, "_orig_mod", inner)
