"""The Tic-Tac-Toe bot plays perfectly and, among equally good results, the shortest win and the
longest loss, over every reachable position."""

from __future__ import annotations

import random

from games.tictactoe import MARKS, TicTacToe, _minimax, winner_of


def _reachable() -> list[tuple[str, int]]:
    """Every position with the player to move, in a game not yet over."""
    seen: set[tuple[str, int]] = set()
    frontier = [(".........", 0)]
    while frontier:
        board, player = frontier.pop()
        if (board, player) in seen or winner_of(board) or "." not in board:
            continue
        seen.add((board, player))
        for i, cell in enumerate(board):
            if cell == ".":
                frontier.append((board[:i] + MARKS[player] + board[i + 1 :], 1 - player))
    return sorted(seen)


def _wins_now(board: str, cell: int, mark: str) -> bool:
    return winner_of(board[:cell] + mark + board[cell + 1 :]) == mark


def _bot(board: str, player: int, seed: int) -> int:
    game = TicTacToe()
    game.reset(0)
    game.board, game.current = board, player
    return int(game.bot_move(player, random.Random(seed)))


def test_the_bot_takes_an_immediate_win_and_delays_a_loss():
    positions = _reachable()
    assert len(positions) > 4000
    checked_wins = checked_losses = 0
    for board, player in positions:
        mark, other = MARKS[player], MARKS[1 - player]
        empty = [i for i, c in enumerate(board) if c == "."]
        winning_now = {i for i in empty if _wins_now(board, i, mark)}
        choices = {_bot(board, player, seed) for seed in range(4)}
        if winning_now:
            checked_wins += 1
            assert choices <= winning_now, (board, player, choices)
            continue
        # Lost whatever it does: prefer a move after which the opponent cannot win at once.
        after = {i: board[:i] + mark + board[i + 1 :] for i in empty}
        if all(_minimax(b, other) > 0 for b in after.values()):
            lasting = {i for i, b in after.items() if not any(_wins_now(b, j, other) for j, c in enumerate(b) if c == ".")}
            if lasting and lasting != set(empty):
                checked_losses += 1
                assert choices <= lasting, (board, player, choices)
    assert checked_wins > 500 and checked_losses > 10
