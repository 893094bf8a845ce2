"""evaluation.tictactoe_vs_bot: the exact draw-or-win rate against the minimax bot, the walk of
the game tree weighted by a policy's choice probabilities, checked on two policies whose rate is
known without it."""

import asyncio

import pytest

from arena.policy import make_policy
from evaluation.tictactoe_vs_bot import exact_draw_or_win, exact_vs_bot, game_after, policy_observations, uniform_draw_or_win
from games.tictactoe import best_cells

# float64 sums of at most 9 weighted terms per level over at most 9 levels: ~100 ulp, 2e-14
EXACT = 1e-12


def _dists(me: int, pick) -> dict:
    return {text: pick(obs) for text, obs in policy_observations(me).items()}


def test_the_uniform_mover_gets_the_rate_its_own_recursion_gives():
    for me in (0, 1):
        uniform = _dists(me, lambda obs: {m: 1 / len(obs.legal_moves) for m in obs.legal_moves})
        assert exact_draw_or_win(uniform, me) == pytest.approx(uniform_draw_or_win("." * 9, me, 0), abs=EXACT)
    assert round(uniform_draw_or_win("." * 9, 0, 0), 4) == 0.2225 and round(uniform_draw_or_win("." * 9, 1, 0), 4) == 0.0322


def test_perfect_play_never_loses_and_one_blunder_costs_what_it_should():
    def perfect(obs):
        board = game_after_board(obs)
        best = best_cells(board, obs.player)
        return {m: (1 / len(best) if m in best else 0.0) for m in obs.legal_moves}

    for me in (0, 1):
        assert exact_draw_or_win(_dists(me, perfect), me) == pytest.approx(1.0, abs=EXACT)
    # As O, only the centre draws after X takes corner 0; the edge 1 loses to perfect play. Half
    # of each after that opening, perfect play elsewhere, loses half the games the bot opens on 0,
    # and the bot opens uniformly among its best cells.
    opening = game_after(("0",)).observe(1).text

    def half_blunder(obs):
        return {m: (0.5 if m in ("1", "4") else 0.0) for m in obs.legal_moves} if obs.text == opening else perfect(obs)

    openings = best_cells("." * 9, 0)
    expected = 1.0 - 0.5 / len(openings)
    assert "0" in openings
    assert exact_draw_or_win(_dists(1, half_blunder), 1) == pytest.approx(expected, abs=EXACT)


def game_after_board(obs) -> str:
    """The board string behind an observation (its grid rows, cells as X, O or their number)."""
    cells = [c for row in obs.text.splitlines() if "|" in row for c in row.replace(" ", "").split("|")]
    return "".join(c if c in "XO" else "." for c in cells)


def test_a_policy_is_asked_at_every_observation_and_scored_as_its_recursion_says():
    rates = asyncio.run(exact_vs_bot(make_policy("random")))  # uniform over the legal moves it is shown
    assert rates["as_x"] == round(uniform_draw_or_win("." * 9, 0, 0), 4) == 0.2225
    assert rates["as_o"] == round(uniform_draw_or_win("." * 9, 1, 0), 4) == 0.0322
    assert rates["alternating"] == pytest.approx((0.2225 + 0.0322) / 2, abs=1e-4)
