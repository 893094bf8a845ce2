"""Iterated Prisoner's Dilemma rules: payoffs, hidden simultaneous choices, rounds, saved
states and the tit-for-tat bot."""

import asyncio
import random

import pytest

from arena.game import GameError
from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game


@pytest.mark.parametrize(
    "moves,scores",
    [
        (("cooperate", "cooperate"), [3.0, 3.0]),
        (("cooperate", "defect"), [0.0, 5.0]),
        (("defect", "cooperate"), [5.0, 0.0]),
        (("defect", "defect"), [1.0, 1.0]),
    ],
)
def test_pd_payoffs(moves: tuple[str, str], scores: list[float]) -> None:
    game = make_game("prisoners_dilemma", rounds=1)
    game.reset(0)
    assert game.to_act() == [0, 1]
    game.step(1, moves[1])  # order of submission does not matter
    game.step(0, moves[0])
    out = game.outcome()
    assert out.scores == scores and out.is_draw == (scores[0] == scores[1])


def test_pd_choices_stay_hidden_until_both_chose() -> None:
    game = make_game("prisoners_dilemma")  # 5 rounds by default
    game.reset(0)
    before = game.observe(1).text
    assert game.step(0, "D").move == "defect"
    assert game.to_act() == [1]
    assert game.observe(1).text == before and "defect" not in before  # nothing about player 0's choice
    assert "Your choice this round: defect" in game.observe(0).text
    with pytest.raises(GameError):
        game.step(0, "cooperate")  # one choice per round
    assert game.step(1, "c").move == "cooperate"
    assert game.to_act() == [0, 1] and game.history == [["defect", "cooperate"]]
    assert "round 1: you cooperate, opponent defect -> you 0, opponent 5" in game.observe(1).text


def test_pd_rounds_and_totals() -> None:
    game = make_game("prisoners_dilemma", rounds=3)
    game.reset(0)
    for a, b in [("C", "C"), ("D", "C"), ("D", "D")]:
        game.step(0, a)
        game.step(1, b)
    out = game.outcome()
    assert out.scores == [9.0, 4.0] and out.ranks == [1, 2] and game.round == 3


def test_pd_rejects_junk_and_keeps_the_turn() -> None:
    game = make_game("prisoners_dilemma")
    game.reset(0)
    result = game.step(0, "maybe")
    assert not result.valid and "cooperate or defect" in result.feedback and game.to_act() == [0, 1]


def test_pd_tit_for_tat() -> None:
    game = make_game("prisoners_dilemma", rounds=4)
    rng = random.Random(0)
    game.reset(0)
    assert game.bot_move(0, rng) == "cooperate"
    game.step(1, "defect")
    assert game.bot_move(0, rng) == "cooperate"  # a pending choice is never peeked at
    game.step(0, "cooperate")
    assert game.bot_move(0, rng) == "defect"
    game.step(0, "defect")
    game.step(1, "cooperate")
    assert game.bot_move(0, rng) == "cooperate"


def test_pd_tit_for_tat_outscores_random_in_a_round_robin() -> None:
    """Against random, TFT only ties on average, but it earns mutual cooperation with itself:
    over a round robin with both (the classic Axelrod set-up) it scores more than random does."""


    def mean_score(first: str, second: str) -> float:
        game = make_game("prisoners_dilemma", rounds=10)
        rng = random.Random(7)
        total = 0.0
        for seed in range(100):
            game.reset(seed)
            while not game.is_over():
                for player, kind in ((0, first), (1, second)):
                    move = game.bot_move(player, rng) if kind == "tft" else game.random_move(player, rng)
                    game.step(player, move)
            total += game.outcome().scores[0]
        return total / 100


    tft = mean_score("tft", "tft") + mean_score("tft", "random")
    rnd = mean_score("random", "tft") + mean_score("random", "random")
    assert tft > rnd + 3  # expected: 51.75 against 46.75 points per pair of 10-round games


def test_pd_plays_through_the_match_driver() -> None:
    import arena.scripted  # noqa: F401  (registers the `bot` and `random` policy kinds)
    from arena.match import play_match
    from arena.policy import make_policy


    game = make_game("prisoners_dilemma")
    record = asyncio.run(play_match(game, [make_policy("bot"), make_policy("random")], seed=3))
    assert record.status == "finished" and len(record.turns) == 10
    assert [t.player for t in record.turns] == [0, 1] * 5
    assert record.turns[0].action == "cooperate"


def test_state_with_other_options_is_refused():
    saved = make_game("prisoners_dilemma", rounds=10)
    saved.reset(0)
    other = make_game("prisoners_dilemma", rounds=5)
    with pytest.raises(GameError, match="options"):
        other.set_state(saved.get_state())
