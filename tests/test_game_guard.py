"""The game guard: a game call past its deadline ends its episode (not the caller's loop), a view
over its cap ends its episode, and the thread hop keeps every other episode going.

The games here are test-only subclasses of tic-tac-toe that misbehave on purpose, so the guard is
proven whatever the shipped games' option schemas allow."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from arena.game import Game
from arena.game_guard import WATCHDOG, GameOverrun, GuardedGame, Watchdog
from arena.seat_environment import EpisodeEnded, SeatEnvironment, SeatEnvironmentError
from games.registry import make_game
from games.tictactoe import TicTacToe


class LoopingTicTacToe(TicTacToe):
    """Loops forever in pure Python on the move "5" (as TextArena's Minesweeper did)."""

    def step(self, player: int, action: str):  # type: ignore[override]
        if action.strip() == "5":
            while True:
                pass
        return super().step(player, action)


class HugeViewTicTacToe(TicTacToe):
    def _render(self, player: int) -> str:
        return "#" * 2_000_000


class SlowConstructor(TicTacToe):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        while True:
            pass


TEST_GAMES = {"looping": LoopingTicTacToe, "huge": HugeViewTicTacToe, "slow-constructor": SlowConstructor}


def make_test_game(game_id: str, num_players: int | None = None, **options: Any) -> Game:
    if game_id in TEST_GAMES:
        return TEST_GAMES[game_id](num_players, **options)
    return make_game(game_id, num_players, **options)


def environment(**kwargs: Any) -> SeatEnvironment:
    return SeatEnvironment(make_game=make_test_game, game_call_timeout=kwargs.pop("game_call_timeout", 0.5), **kwargs)


def test_a_looping_game_call_ends_its_episode_while_the_callers_loop_and_other_episodes_go_on() -> None:
    async def run() -> None:
        looping, other = environment(), environment()
        await looping.reset("looping", seed=1, opponents=["random"])
        await other.reset("tictactoe", seed=1, opponents=["bot"])
        ticks = 0

        async def heartbeat() -> None:  # what /health is to a server: the loop must keep answering
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(heartbeat())
        started = time.monotonic()
        with pytest.raises(EpisodeEnded, match=r"looping: game call step took over 0.5s: episode ended"):
            await asyncio.wait_for(looping.step("5"), 10)
        elapsed = time.monotonic() - started
        assert 0.5 <= elapsed < 3
        assert ticks >= 5  # the caller's loop kept running during the overrun
        view = await other.step(other.view().legal_moves[0])  # another episode plays on
        assert view.turn >= 2
        with pytest.raises(SeatEnvironmentError, match="episode ended; call reset"):
            await looping.step("1")
        again = await looping.reset("looping", seed=2, opponents=["random"])  # the environment is usable again
        assert again.legal_moves
        beat.cancel()
        await looping.close()
        await other.close()

    asyncio.run(run())


def test_a_looping_constructor_is_interrupted_too() -> None:
    async def run() -> None:
        env = environment(game_call_timeout=0.3)
        with pytest.raises(EpisodeEnded, match="slow-constructor: game call constructor took over 0.3s"):
            await asyncio.wait_for(env.reset("slow-constructor"), 10)
        await env.close()

    asyncio.run(run())


def test_a_view_over_the_cap_ends_the_episode_with_the_limit_named() -> None:
    async def run() -> None:
        env = environment(max_view_bytes=100_000)
        with pytest.raises(EpisodeEnded, match=r"a view of 2\d{6} bytes is over max_view_bytes=100000: episode ended"):
            await env.reset("huge", opponents=["random"])
        await env.close()

    asyncio.run(run())


def test_unisolated_environments_play_the_same_episode() -> None:
    async def play(isolate: bool) -> list[str]:
        env = SeatEnvironment(make_game=make_game, isolate_games=isolate)
        view = await env.reset("tictactoe", seed=4, seat=1, opponents=["bot"])
        texts = [view.text]
        while not view.done:
            view = await env.step(view.legal_moves[0])
            texts.append(view.text)
        await env.close()
        return texts

    assert asyncio.run(play(True)) == asyncio.run(play(False))


def test_calls_from_other_threads_pass_through_and_unwatched_threads_are_never_interrupted() -> None:
    dog = Watchdog(tick=0.01)
    game = GuardedGame(make_game("tictactoe"), thread_id=-1, watchdog=dog)  # a thread that never calls it
    assert game.id == "tictactoe" and game.num_players == 2
    assert not dog.enter(threading.get_ident(), "step")  # this thread is not watched


def test_the_watchdog_raises_game_overrun_in_the_watched_thread() -> None:
    dog = Watchdog(tick=0.01)
    told: list[str] = []
    caught: list[BaseException] = []

    def spin() -> None:
        dog.watch(threading.get_ident(), 0.1, told.append)
        game = GuardedGame(LoopingTicTacToe(), threading.get_ident(), watchdog=dog)
        game.reset(1)
        try:
            game.step(0, "5")
        except GameOverrun as exc:
            caught.append(exc)
        dog.unwatch(threading.get_ident())

    worker = threading.Thread(target=spin, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and len(caught) == 1
    assert told == ["game call step took over 0.1s"]
    assert WATCHDOG is not dog


def test_an_environment_dropped_without_close_lets_its_thread_go() -> None:
    import gc

    async def run() -> threading.Thread:
        env = environment()
        await env.reset("tictactoe", seed=1, opponents=["random"])
        thread = env._thread.thread
        del env
        gc.collect()
        return thread

    thread = asyncio.run(run())
    thread.join(3)
    assert not thread.is_alive()
