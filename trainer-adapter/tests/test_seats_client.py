"""The client drives seated episodes (docs/multi-agent.md) against the real server: reset
with ``seats``, steps that name their seat, ``to_play``, one seat's view, scores per seat
and the stable codes of bad seat requests, over HTTP and over the session socket."""

from __future__ import annotations

import asyncio

import pytest

from edgegym import AsyncClient, Client, EdgegymError

ENV = "tic-tac-toe-2p"


def move(cell: int, think: str = "") -> dict[str, str]:
    return {"role": "assistant", "content": f"{think}<move>{cell}</move>"}


def test_env_lists_its_seats_and_which_a_client_plays(server):
    with Client(server.url) as gym:
        info = gym.env(ENV)
        assert [s.name for s in info.seats] == ["x", "o"]
        assert all(s.trainable and s.default == "client" for s in info.seats)
        assert info.seats[0].players == ["client", "minimax", "random"]
        assert sorted(info.policies) == ["minimax", "random"]
        assert info.client_seats() == ["x", "o"]
        assert info.client_seats({"o": "minimax"}) == ["x"]
        single = gym.env("letter-a")
        assert single.seats is None and single.client_seats() == []


def test_self_play_game_over_http(server):
    with Client(server.url) as gym:
        ep = gym.reset(ENV, seed=7)
        assert ep.to_play == "x" and [m.role for m in ep.messages] == ["system", "user"]
        first = gym.step(ep.episode_id, 0, move(5, "<think>my secret plan</think>"), seat="x")
        assert first.to_play == "o" and first.turn == 1
        # o's first reply is its whole opening, then x's move: never x's text.
        assert [m.role for m in first.messages] == ["system", "user", "user"]
        assert "X played 5" in first.messages[-1].content
        assert all("secret plan" not in str(m.content) for m in first.messages)

        with pytest.raises(EdgegymError) as err:
            gym.step(ep.episode_id, 1, move(1), seat="x")
        assert err.value.status == 409 and err.value.code == "not_your_turn" and err.value.details["to_play"] == "o"

        turn = first.turn
        last = first
        for seat, cell in [("o", 1), ("x", 2), ("o", 4), ("x", 8)]:
            sampled = {"token_ids": [cell, cell + 1], "logprobs": [-0.5, -0.25], "template_hash": f"sha256:{seat}"}
            last = gym.step(ep.episode_id, turn, move(cell), sampled, seat=seat)
            turn = last.turn
        assert last.done and last.to_play is None and last.stop_reason == "game_over"
        assert "You win" in last.messages[-1].content

        x = gym.episode(ep.episode_id, seat="x")
        assert x.seat == "x" and x.seats == {"x": "client", "o": "client"} and x.to_play is None
        assert [m.role for m in x.messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
        assert "secret plan" in x.messages[2].content
        # A step's sampled tokens are stored with its turn, whichever seat's view is read.
        assert x.turns[2].sampled.template_hash == "sha256:o" and x.turns[3].sampled.token_ids == [2, 3]
        o_pages = list(gym.episode_pages(ep.episode_id, seat="o", page_turns=2))
        o_messages = [m for page in o_pages for m in page.messages]
        assert len(o_pages) == 3 and all(p.seat == "o" for p in o_pages)
        assert [m.role for m in o_messages] == ["system", "user", "user", "assistant", "user", "assistant", "user"]
        assert all("secret plan" not in str(m.content) for m in o_messages)

        score = gym.score(ep.episode_id).score
        assert set(score.seats) == {"x", "o"}
        assert score.seats["x"].metrics["win"] == 1 and score.seats["o"].metrics["loss"] == 1
        assert score.reward == score.seats["x"].reward > score.seats["o"].reward


def test_client_against_a_policy_over_the_socket(server):
    async def main():
        async with AsyncClient(server.url, transport="websocket") as gym:
            ep = await gym.reset(ENV, seed=10, seats={"x": "minimax"})
            assert ep.to_play == "o"
            assert "X played" in ep.messages[-1].content
            with pytest.raises(EdgegymError) as err:
                await gym.step(ep.episode_id, 0, move(1), seat="x")
            assert err.value.code == "seat_not_client"
            taken = {int(c) for c in ep.messages[-1].content.split("X played ")[1][:1]}
            free = next(c for c in range(1, 10) if c not in taken)
            # The only client seat: the step may leave its seat out.
            step = await gym.step(ep.episode_id, 0, move(free))
            assert step.to_play in ("o", None)
            view = await gym.episode(ep.episode_id, seat="o")
            assert view.seats == {"x": "minimax", "o": "client"} and view.messages[-2].content == f"<move>{free}</move>"
            return step

    asyncio.run(main())


def test_bad_seat_requests_have_stable_codes(server):
    with Client(server.url) as gym:
        codes = []
        for call in (
            lambda: gym.reset(ENV, seats={"z": "client"}),
            lambda: gym.reset(ENV, seats={"x": "alphazero"}),
            lambda: gym.reset(ENV, seats={"x": "minimax", "o": "random"}),
            lambda: gym.reset("letter-a", seats={"x": "client"}),
        ):
            with pytest.raises(EdgegymError) as err:
                call()
            codes.append(err.value.code)
        assert codes == ["unknown_seat", "unknown_policy", "no_client_seat", "seats_unsupported"]
        ep = gym.reset(ENV, seed=11)
        with pytest.raises(EdgegymError) as err:
            gym.step(ep.episode_id, 0, move(1))
        assert err.value.code == "seat_required"
        with pytest.raises(EdgegymError) as err:
            gym.episode(ep.episode_id)
        assert err.value.code == "seat_required"
        # A one-player episode is as it was: no to_play, no seats.
        single = gym.reset("letter-a", index=0)
        assert single.to_play is None
        step = gym.step(single.episode_id, 0, {"role": "assistant", "content": "A"})
        assert step.to_play is None and gym.score(single.episode_id).score.seats is None

