"""Client and AsyncClient offer the same operations, with the same parameters and docs."""

import asyncio
import inspect
import warnings

import httpx
import pytest

import edgegym
from edgegym import AsyncClient, Client
from edgegym.client import _Operations

# Closing the client itself differs by design: close() / aclose(). close(episode_id) is a deprecated alias on both.
CLIENT_ONLY = {"close", "close_client"}
ASYNC_ONLY = {"aclose", "close"}


def public(cls: type) -> dict[str, object]:
    return {name: fn for name, fn in inspect.getmembers(cls, callable) if not name.startswith("_")}


def test_same_operations_signatures_and_docstrings() -> None:
    sync, asyn = public(Client), public(AsyncClient)
    assert set(sync) - CLIENT_ONLY == set(asyn) - ASYNC_ONLY
    for name in sorted(set(sync) - CLIENT_ONLY):
        # Parameters alike; the return differs only as Iterator vs AsyncIterator.
        assert inspect.signature(sync[name]).parameters == inspect.signature(asyn[name]).parameters, name
        assert inspect.getdoc(sync[name]), f"Client.{name} has no docstring"
        assert inspect.getdoc(sync[name]) == inspect.getdoc(asyn[name]), name
        if name in vars(_Operations):
            assert inspect.iscoroutinefunction(asyn[name]) or inspect.isasyncgenfunction(asyn[name]), name


def handler(request: httpx.Request) -> httpx.Response:
    assert request.headers["user-agent"] == f"edgegym-python/{edgegym.__version__}"
    return httpx.Response(200, json={"episode_id": "ep_1", "status": "closed"})


def test_close_episode_and_deprecated_names() -> None:
    client = Client("http://edgegym.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    assert client.close_episode("ep_1").status == "closed"
    with pytest.warns(DeprecationWarning, match="close_episode"):
        assert client.close("ep_1").status == "closed"
    with pytest.warns(DeprecationWarning, match=r"use close\(\)"):
        client.close_client()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client.close() is None


def test_async_close_episode_and_deprecated_alias() -> None:
    async def run() -> None:
        client = AsyncClient("http://edgegym.test", http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
        assert (await client.close_episode("ep_1")).status == "closed"
        with pytest.warns(DeprecationWarning, match="close_episode"):
            assert (await client.close("ep_1")).status == "closed"
        await client.aclose()

    asyncio.run(run())
