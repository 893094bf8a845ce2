"""SeatEnvironment: one seat of a real match (play_match underneath), stepped from outside."""

from __future__ import annotations

import asyncio

import pytest

from arena.seat_environment import SeatEnvironment, SeatEnvironmentError, SyncSeatEnvironment
from games.registry import make_game


def play(game: str, moves: str = "first", **reset) -> tuple[list[dict], SeatEnvironment]:
    """Play a whole episode, choosing the first (or last) legal move; return every view."""

    async def run() -> tuple[list[dict], SeatEnvironment]:
        session = SeatEnvironment(make_game=make_game, name="tester")
        view = await session.reset(game, **reset)
        views = [view.to_dict()]
        while not view.done:
            legal = view.legal_moves
            view = await session.step(legal[0] if moves == "first" else legal[-1])
            views.append(view.to_dict())
        await session.close()
        return views, session

    return asyncio.run(run())


def test_client_seat_against_bot_ends_with_its_outcome_score() -> None:
    views, session = play("tictactoe", seed=3, seat=1, opponents=["bot"])
    assert views[0]["player"] == 1 and "O" in views[0]["role"] and views[0]["turn"] == 1  # the bot (X) moved first
    assert views[0]["rules"] and all(not v["rules"] for v in views[1:])
    final = views[-1]
    assert final["done"] and final["player"] is None and final["legal_moves"] is None
    assert final["reward"] == final["outcome"]["scores"][1]
    assert all(v["player"] == 1 for v in views[:-1])


def test_same_reset_gives_the_same_episode_opponent_sampling_included() -> None:
    a, _ = play("liars_dice", seed=7, seat=2, opponents=["random", "bot"])
    b, _ = play("liars_dice", seed=7, seat=2, opponents=["random", "bot"])
    c, _ = play("liars_dice", seed=8, seat=2, opponents=["random", "bot"])
    assert a == b
    assert [v["text"] for v in a] != [v["text"] for v in c]


def test_hot_seat_plays_every_seat_and_names_whose_turn() -> None:
    views, _ = play("tictactoe", seed=0)
    players = [v["player"] for v in views[:-1]]
    assert players[:4] == [0, 1, 0, 1] and views[0]["hot_seat"]
    assert views[-1]["reward"] == views[-1]["outcome"]["scores"][0]


def test_rejected_move_gives_feedback_then_the_games_forfeit_rule() -> None:
    async def run() -> None:
        session = SeatEnvironment(make_game=make_game)
        await session.reset("tictactoe", seed=1, opponents=["bot"])
        first = await session.step("nine")
        assert not first.done and first.attempt == 1 and "not a cell" in first.feedback
        assert await session.step("nine") and (await session.step("nine")).done
        assert session.view().reward == -1.0 and "forfeit" in session.view().outcome["reason"]
        assert session.record is not None and session.record.specs == ["client", "bot"]
        with pytest.raises(SeatEnvironmentError, match="episode is over"):
            await session.step("4")
        await session.close()

    asyncio.run(run())


def test_state_hides_the_game_state_from_a_seat_until_the_end() -> None:
    async def run() -> None:
        session = SeatEnvironment(make_game=make_game)
        view = await session.reset("kuhn_poker", seed=2, opponents=["bot"])
        assert "game_state" not in session.state() and session.state()["to_act"] == [0]
        while not view.done:
            view = await session.step(view.legal_moves[0])
        assert session.state()["game_state"]["num_players"] == 2
        await session.close()

    asyncio.run(run())


@pytest.mark.parametrize(
    "reset, message",
    [
        (dict(game="tictactoee"), "unknown game 'tictactoee'; did you mean tictactoe"),
        (dict(game="tictactoe", seat=2, opponents=["bot"]), "seat 2 does not exist"),
        (dict(game="tictactoe", opponents=["bott"]), "opponent 'bott': unknown policy"),
        (dict(game="tictactoe", opponents=["bot", "bot"]), "tictactoe"),
        (dict(game="tictactoe", options={"size": 4}), "takes no options"),
    ],
)
def test_bad_resets_say_what_is_wrong(reset: dict, message: str) -> None:
    async def run() -> None:
        session = SeatEnvironment(make_game=make_game)
        with pytest.raises(SeatEnvironmentError, match=message):
            await session.reset(**reset)
        with pytest.raises(SeatEnvironmentError, match="call reset"):
            await session.step("0")

    asyncio.run(run())


@pytest.mark.slow  # importing TextArena takes ~5 s
def test_sync_wrapper_and_a_textarena_game() -> None:
    session = SyncSeatEnvironment(make_game=make_game, name="sync")
    view = session.reset("textarena:TicTacToe-v0", seed=4, opponents=["random"])
    assert view.legal_moves and view.player == 0
    while not view.done:
        view = session.step(view.legal_moves[0])
    assert session.record is not None and session.record.policies == ["sync", "random"]
    assert view.reward == session.record.outcome["scores"][0]
    session.close()
