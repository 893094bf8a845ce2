"""The tabular Tic-Tac-Toe reference learner (trainer.tabular_tictactoe): its exact scoring
against the bot, its games, its optimizer, and that its recipe learns."""

from __future__ import annotations

import math
import random

import pytest
import torch

from evaluation.tictactoe_vs_bot import uniform_draw_or_win
from games.tictactoe import best_cells, winner_of
from trainer.tabular_tictactoe import (
    EMPTY_BOARD, SparseAdam, TicTacToeSettings, empty_cells, exact_draw_or_win, play, table_policy,
    tabular_tictactoe, to_move, uniform,
)


def test_the_uniform_mover_scores_as_the_evaluation_module_computes_it():
    rates = exact_draw_or_win(uniform)
    # two recursions over the same tree in float64, summed in different orders
    assert rates["as_x"] == pytest.approx(uniform_draw_or_win(EMPTY_BOARD, 0, 0), rel=1e-12)
    assert rates["as_o"] == pytest.approx(uniform_draw_or_win(EMPTY_BOARD, 1, 0), rel=1e-12)
    assert rates["alternating"] == pytest.approx((rates["as_x"] + rates["as_o"]) / 2, rel=1e-12)


def test_perfect_play_never_loses_to_the_bot():
    def minimax_policy(board: str) -> list[float]:
        best = set(best_cells(board, to_move(board)))
        cells = empty_cells(board)
        return [(str(c) in best) / len(best) for c in cells]

    rates = exact_draw_or_win(minimax_policy)
    assert rates == pytest.approx({"as_x": 1.0, "as_o": 1.0, "alternating": 1.0}, rel=1e-12)  # sums of thirds and halves


def test_a_game_records_every_decision_and_scores_the_result():
    rng = random.Random(3)
    for _ in range(50):
        path, (x, o) = play((uniform, uniform), rng)
        board = EMPTY_BOARD
        for step, (seen, index) in enumerate(path):
            assert seen == board and to_move(board) == step % 2
            cell = empty_cells(board)[index]
            board = board[:cell] + "XO"[step % 2] + board[cell + 1 :]
        winner = winner_of(board)
        assert winner is not None or "." not in board
        assert (x, o) == ((1.0, 0.0) if winner == "X" else (0.0, 1.0) if winner == "O" else (0.5, 0.5))


def test_sparse_adam_is_torch_adam_over_the_whole_table():
    """Rows join when first trained and rest when not: the same as torch.optim.Adam over a dense
    table where every row exists from step 1 and an untrained row's gradient is zero."""
    rng = random.Random(0)
    start = {"a": [0.1, -0.2, 0.3], "b": [0.0, 0.5]}
    params = {"a": list(start["a"])}
    reference = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in start.items()}
    ours, theirs = SparseAdam(lr=0.05), torch.optim.Adam(list(reference.values()), lr=0.05)
    for keys in (["a"], ["a", "b"], ["b"], [], ["a"]):  # b joins at step 2; a rests at steps 3-4
        for k in keys:
            params.setdefault(k, list(start[k]))
        grads = {k: [rng.uniform(-1, 1) for _ in start[k]] for k in keys}
        ours.step(params, grads)
        for k, tensor in reference.items():
            tensor.grad = torch.tensor(grads.get(k, [0.0] * len(start[k])), dtype=torch.float64)
        theirs.step()
    for k, tensor in reference.items():  # float64 on both sides, five steps
        assert params[k] == pytest.approx(tensor.tolist(), abs=1e-12)


def test_the_bench_recipe_with_enough_games_beats_its_start():
    start = exact_draw_or_win(uniform)["alternating"]
    run = tabular_tictactoe(TicTacToeSettings(learning_rate=1.0, groups=64, kl_target=None, seed=0))
    after = exact_draw_or_win(table_policy(run.average, uniform))["alternating"]
    assert after > start + 0.05, (start, after)
    assert run.boards_trained > 1000


def test_the_kl_controller_raises_the_coefficient_when_the_table_drifts():
    run = tabular_tictactoe(TicTacToeSettings(learning_rate=3.0, groups=16, steps=8, kl_target=0.05, seed=1))
    assert run.kl_coefs[0] == 0.1
    assert max(run.kl_coefs) > 0.1
    fixed = tabular_tictactoe(TicTacToeSettings(learning_rate=3.0, groups=16, steps=8, kl_target=None, seed=1))
    assert set(fixed.kl_coefs) == {0.1}


def test_the_average_of_iterates_starts_where_average_from_says():
    def run(average_from: float):
        return tabular_tictactoe(TicTacToeSettings(learning_rate=1.0, groups=2, steps=4, average_from=average_from, seed=2, lagged=0.0))

    last_only = run(1.0)  # only the last step's iterate: the average is the final table
    assert last_only.average == last_only.final
    half = run(0.5)  # steps 2-4: a mean of three tables, not the last
    assert set(half.average) == set(half.final)
    assert half.average != half.final
    assert all(len(row) == len(empty_cells(board)) and all(math.isfinite(z) for z in row) for board, row in half.average.items())
