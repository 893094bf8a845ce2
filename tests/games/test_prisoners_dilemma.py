"""Rule tests for Connect Four, Kuhn poker, Leduc Hold'em, Nim and the iterated Prisoner's Dilemma.

The shared conformance suite (tests/test_conformance.py) covers the API contract; these tests pin
down each game's rules, payouts, move parsing and that each scripted bot beats random play.
"""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from arena.game import Game, GameError, NativeGame
from games.registry import make_game
from games.connect_four import has_four
from games.leduc_holdem import equity, hand_winner
from games.nim import nim_sum

BATCH = ("connect_four", "kuhn_poker", "leduc_holdem", "nim", "prisoners_dilemma")


def play(game: Game, moves: list[str]) -> None:
    """Play `moves` in turn order (first player still to act each time); all must be accepted."""
    for move in moves:
        player = game.to_act()[0]
        result = game.step(player, move)
        assert result.valid, f"{move!r} rejected: {result.feedback}"


def bot_vs_random(game_id: str, games: int, **options: object) -> tuple[float, int]:
    """Mean (bot score - random score) and bot wins, the bot alternating seats."""
    game = make_game(game_id, **options)
    rng = random.Random(2024)
    margin, wins = 0.0, 0
    for seed in range(games):
        game.reset(seed)
        bot = seed % 2
        while not game.is_over():
            player = game.to_act()[0]
            move = game.bot_move(player, rng) if player == bot else game.random_move(player, rng)
            assert game.step(player, move).valid
        out = game.outcome()
        margin += out.scores[bot] - out.scores[1 - bot]
        wins += out.ranks[bot] < out.ranks[1 - bot]
    return margin / games, wins


# ---- options (all five) ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", BATCH)
def test_unknown_option_is_named(game_id: str) -> None:
    with pytest.raises(GameError, match="'colour'"):
        make_game(game_id, colour="red")


@pytest.mark.parametrize(
    "game_id,options",
    [
        ("kuhn_poker", {"hands": 0}),
        ("kuhn_poker", {"hands": True}),
        ("leduc_holdem", {"hands": "many"}),
        ("nim", {"heaps": [0, 3]}),
        ("nim", {"heaps": []}),
        ("nim", {"heaps": "1,2,x"}),
        ("prisoners_dilemma", {"rounds": 2.5}),
    ],
)
def test_bad_option_values_are_refused(game_id: str, options: dict) -> None:
    name = next(iter(options))
    with pytest.raises(GameError, match=name):
        make_game(game_id, **options)


def test_numeric_text_options_are_accepted() -> None:
    assert make_game("kuhn_poker", hands="2").options == {"hands": 2}
    assert make_game("nim", heaps="1, 2,3").options == {"heaps": [1, 2, 3]}


# ---- Connect Four -------------------------------------------------------------------------------
# Column sequences, X (player 0) first; each ends with X completing four in the named direction.
C4_WINS = {
    "vertical": ["1", "2", "1", "2", "1", "2", "1"],
    "horizontal": ["1", "1", "2", "2", "3", "3", "4"],
    "diagonal /": ["1", "2", "2", "3", "3", "4", "3", "4", "4", "7", "4"],
    "diagonal \\": ["7", "6", "6", "5", "5", "4", "5", "4", "4", "1", "4"],
}
# Fills all 42 cells without four in a line anywhere (columns XXXOOO / OOOXXX from the bottom).
C4_DRAW = [int(c) for c in "131311212122424243343434565655757576676767"]


@pytest.mark.parametrize("direction", C4_WINS)
def test_connect_four_detects_wins_in_every_direction(direction: str) -> None:
    game = make_game("connect_four")
    game.reset(0)
    moves = C4_WINS[direction]
    play(game, moves[:-1])
    assert not game.is_over()
    play(game, moves[-1:])
    out = game.outcome()
    assert out.scores == [1.0, 0.0] and out.ranks == [1, 2]
    assert "connected four" in out.reason


def test_connect_four_second_player_can_win() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["7", "1", "7", "2", "6", "3", "5", "4"])
    assert game.outcome().scores == [0.0, 1.0]


def test_connect_four_full_board_is_a_draw() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, [str(c) for c in C4_DRAW[:-1]])
    assert not game.is_over()
    play(game, [str(C4_DRAW[-1])])
    assert game.outcome().is_draw and game.outcome().reason == "the board is full"
    assert not has_four(game.bits[0]) and not has_four(game.bits[1])


def test_connect_four_move_parsing_and_full_columns() -> None:
    game = make_game("connect_four")
    game.reset(0)
    for text in ("[4]", " 4 ", "col 4", "[Column 4]"):
        probe = make_game("connect_four")
        probe.set_state(game.get_state())
        assert probe.step(0, text).move == "4"
    for text in ("0", "8", "44", "four", "4 5"):
        assert not game.step(0, text).valid
        game.invalid_counts = [0, 0]
    play(game, ["1"] * 6)
    assert "1" not in game.legal_moves(0)
    result = game.step(0, "1")
    assert not result.valid and "column 1 is full" in result.feedback
    assert "Full columns: 1." in game.observe(0).text


def test_connect_four_view_shows_the_board() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["4", "4"])
    lines = game.observe(1).text.splitlines()
    assert lines[1].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert lines[-3].split() == [".", ".", ".", "O", ".", ".", "."]
    assert lines[-2].split() == [".", ".", ".", "X", ".", ".", "."]


def test_connect_four_bot_wins_now_and_blocks() -> None:
    game = make_game("connect_four")
    rng = random.Random(0)
    game.reset(0)
    play(game, ["1", "1", "2", "2", "3", "3"])  # both threaten column 4; X to move
    assert game.bot_move(0, rng) == "4"  # win now rather than block
    game.reset(0)
    play(game, ["1", "7", "2", "6", "3"])  # X threatens 4 on the bottom row; O has no win
    assert game.bot_move(1, rng) == "4"  # block


def test_connect_four_bot_does_not_set_up_the_opponent() -> None:
    # O holds columns 1-3 of row 2, so O wins on column 4 as soon as a disc sits under that cell;
    # column 4 is empty and X (to move) has nothing forced, so X must keep out of column 4.
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["1", "2", "3", "1", "7", "2", "7", "3"])
    for seed in range(10):
        assert game.bot_move(0, random.Random(seed)) != "4"


def test_connect_four_bot_beats_random() -> None:
    margin, wins = bot_vs_random("connect_four", 24)
    assert wins == 24, f"the bot lost or drew {24 - wins} of 24 games against random"


# ---- Kuhn poker ---------------------------------------------------------------------------------
def kuhn_with_cards(cards: list[int], hands: int = 1) -> NativeGame:
    game = make_game("kuhn_poker", hands=hands)
    game.reset(0)
    game.cards = list(cards)
    return game


@pytest.mark.parametrize(
    "cards,moves,scores",
    [
        ([2, 0], ["check", "check"], [1.0, -1.0]),
        ([0, 1], ["check", "check"], [-1.0, 1.0]),
        ([2, 1], ["bet", "call"], [2.0, -2.0]),
        ([1, 2], ["check", "bet", "call"], [-2.0, 2.0]),
        ([2, 0], ["bet", "fold"], [1.0, -1.0]),
        ([2, 0], ["check", "bet", "fold"], [-1.0, 1.0]),  # the bettor wins without a showdown
    ],
)
def test_kuhn_payouts(cards: list[int], moves: list[str], scores: list[float]) -> None:
    game = kuhn_with_cards(cards)
    play(game, moves)
    assert game.outcome().scores == scores


def test_kuhn_legal_moves_follow_the_betting() -> None:
    game = kuhn_with_cards([0, 1])
    assert game.legal_moves(0) == ["check", "bet"]
    result = game.step(0, "call")
    assert not result.valid and "cannot call" in result.feedback
    assert game.step(0, "[Bet]").move == "bet"
    assert game.to_act() == [1] and game.legal_moves(1) == ["call", "fold"]


def test_kuhn_hands_alternate_first_actor_and_sum_to_zero() -> None:
    game = make_game("kuhn_poker")  # default: 3 hands, like TextArena's KuhnPoker-v0
    game.reset(5)
    firsts = []
    for _ in range(3):
        firsts.append(game.to_act()[0])
        play(game, ["check", "check"])
    assert firsts == [0, 1, 0] and game.is_over()
    out = game.outcome()
    assert sum(out.scores) == 0 and abs(out.scores[0]) in (1.0, 3.0)
    assert len(game.results) == 3 and all(r.startswith("Hand") for r in game.results)


def test_kuhn_view_shows_own_card_only() -> None:
    game = kuhn_with_cards([2, 0])
    assert "Your card: K" in game.observe(0).text and "K" not in game.observe(1).text.replace("Kuhn", "")


def test_kuhn_bot_plays_the_equilibrium_extremes() -> None:
    rng = random.Random(0)
    for _ in range(20):
        game = kuhn_with_cards([0, 2])
        play(game, ["bet"])
        assert game.bot_move(1, rng) == "call"  # K always calls
        game = kuhn_with_cards([2, 0])
        play(game, ["bet"])
        assert game.bot_move(1, rng) == "fold"  # J always folds to a bet
        game = kuhn_with_cards([1, 0])
        assert game.bot_move(0, rng) == "check"  # Q never opens with a bet


def test_kuhn_bot_beats_random() -> None:
    margin, _ = bot_vs_random("kuhn_poker", 400)
    assert margin > 0.4, f"equilibrium bot won only {margin:.2f} chips per game against random"


# ---- Leduc Hold'em ------------------------------------------------------------------------------
def leduc_with_cards(cards: list[int], board: int) -> NativeGame:
    game = make_game("leduc_holdem")
    game.reset(0)
    game.cards, game.board = list(cards), board
    return game


def test_leduc_hand_ranking() -> None:
    assert hand_winner([0, 2], 0) == 0  # a pair of jacks beats a king
    assert hand_winner([2, 1], 0) == 0  # higher card
    assert hand_winner([1, 1], 2) is None  # split
    assert equity(2, 2) == 1.0 and equity(0, None) < equity(1, None) < equity(2, None)


@pytest.mark.parametrize(
    "cards,board,moves,scores",
    [
        ([2, 0], 1, ["check", "check", "check", "check"], [1.0, -1.0]),
        ([2, 0], 0, ["check", "check", "check", "check"], [-1.0, 1.0]),  # J pairs the board
        ([1, 1], 2, ["bet", "call", "bet", "call"], [0.0, 0.0]),  # split pot
        ([2, 1], 0, ["bet", "raise", "call", "bet", "raise", "call"], [13.0, -13.0]),  # the maximum
        ([2, 1], 0, ["bet", "fold"], [1.0, -1.0]),
        ([2, 1], 0, ["bet", "raise", "fold"], [-3.0, 3.0]),
        ([2, 1], 0, ["check", "check", "bet", "call"], [5.0, -5.0]),
    ],
)
def test_leduc_payouts(cards: list[int], board: int, moves: list[str], scores: list[float]) -> None:
    game = leduc_with_cards(cards, board)
    play(game, moves)
    out = game.outcome()
    assert out.scores == scores
    assert out.is_draw == (scores[0] == 0)


def test_leduc_raise_cap_and_board_reveal() -> None:
    game = leduc_with_cards([2, 1], 0)
    assert "Board card: not dealt yet" in game.observe(0).text
    play(game, ["bet"])
    assert game.legal_moves(1) == ["call", "raise", "fold"]
    play(game, ["raise"])
    assert game.legal_moves(0) == ["call", "fold"]  # two bets/raises this round: capped
    assert not game.step(0, "raise").valid
    play(game, ["call"])
    assert game.betting_round == 1 and game.put_in == [5, 5]
    assert "Board card: J" in game.observe(1).text
    assert game.to_act() == [0] and game.legal_moves(0) == ["check", "bet"]


def test_leduc_bot_bets_strong_and_folds_weak() -> None:
    rng = random.Random(0)
    game = leduc_with_cards([2, 0], 2)
    play(game, ["check", "check"])  # round 2: player 0 has a pair of kings
    assert game.bot_move(0, rng) == "bet"
    play(game, ["check", "bet"])  # player 1 (a jack with a king on board) faces a bet of 4
    assert game.bot_move(0, rng) == "raise"
    game = leduc_with_cards([2, 0], 2)
    play(game, ["check", "check", "bet"])
    assert game.bot_move(1, rng) == "fold"


def test_leduc_bot_beats_random() -> None:
    margin, _ = bot_vs_random("leduc_holdem", 400)
    assert margin > 1.0, f"the heuristic bot won only {margin:.2f} chips per game against random"


# ---- Nim ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["2 3", "[2 3]", "2,3", " 2, 3 ", "heap 2 take 3", "take 3 from heap 2", "2-3"])
def test_nim_move_formats(text: str) -> None:
    game = make_game("nim")
    game.reset(0)
    assert game.step(0, text).move == "2 3" and game.heaps == [3, 1, 5]


@pytest.mark.parametrize("text", ["4 1", "0 1", "1 4", "1 0", "-1 2", "2 -3", "2", "1 2 3", "2.5 1", "9" * 70])
def test_nim_rejects_bad_moves(text: str) -> None:
    game = make_game("nim")
    game.reset(0)
    result = game.step(0, text)
    assert not result.valid and result.feedback and game.heaps == [3, 4, 5]


def test_nim_last_take_wins() -> None:
    game = make_game("nim", heaps=[1, 2])
    game.reset(0)
    play(game, ["2 2", "1 1"])
    out = game.outcome()
    assert out.scores == [0.0, 1.0] and "Player 1 took the last object" in out.reason
    game.reset(0)
    result = game.step(0, "1 1")
    assert result.valid and not game.is_over()
    assert not game.step(1, "1 1").valid  # the heap is empty now


def test_nim_bot_leaves_zero_nim_sum() -> None:
    game = make_game("nim", heaps=[3, 4, 5])
    rng = random.Random(0)
    for heaps in itertools.product(range(6), repeat=3):
        if not nim_sum(list(heaps)):
            continue
        game.reset(0)
        game.heaps = list(heaps)
        play(game, [game.bot_move(0, rng)])
        assert nim_sum(game.heaps) == 0, f"from {heaps} the bot left {game.heaps}"


def test_nim_bot_never_loses_a_winning_position() -> None:
    rng = random.Random(1)
    for heaps in itertools.product(range(1, 6), repeat=3):
        if not nim_sum(list(heaps)):
            continue
        game = make_game("nim", heaps=list(heaps))
        for seed in range(3):
            game.reset(seed)
            while not game.is_over():
                player = game.to_act()[0]
                move = game.bot_move(player, rng) if player == 0 else game.random_move(player, rng)
                play(game, [move])
            assert game.outcome().winners == [0], f"the bot lost from the winning position {heaps}"


# ---- Iterated Prisoner's Dilemma ----------------------------------------------------------------
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
