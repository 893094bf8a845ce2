"""Tic-Tac-Toe."""

from __future__ import annotations

import random
from functools import lru_cache
from typing import ClassVar

from arena.game import NativeGame

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
MARKS = ("X", "O")


def winner_of(board: str) -> str | None:
    """'X' or 'O' if that mark has three in a line, else None. `board` is 9 chars of 'X', 'O', '.'."""
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@lru_cache(maxsize=None)
def best_cells(board: str, player: int) -> list[str]:
    """The empty cells minimax rates best for `player` to take (the bot draws among them)."""
    mark, other = MARKS[player], MARKS[1 - player]
    values = {i: -_minimax(board[:i] + mark + board[i + 1 :], other) for i, c in enumerate(board) if c == "."}
    best = max(values.values())
    return [str(i) for i, v in values.items() if v == best]


def _minimax(board: str, mark: str) -> int:
    """Value of `board` for the player `mark` about to move: > 0 win, 0 draw, < 0 loss. A result
    counts 1 + the cells still empty when it happens, so a sooner win and a later loss score higher
    (the bot takes an immediate win rather than a slower sure one, and makes a lost game last)."""
    other = "O" if mark == "X" else "X"
    if winner_of(board) == other:
        return -(1 + board.count("."))
    empty = [i for i, c in enumerate(board) if c == "."]
    if not empty:
        return 0
    return max(-_minimax(board[:i] + mark + board[i + 1 :], other) for i in empty)


class TicTacToe(NativeGame):
    """Tic-Tac-Toe for two players on a 3x3 grid.

    Player 0 is X and moves first; player 1 is O. Players take turns writing their mark in an empty
    cell. Cells are numbered 0-8, left to right, top to bottom:

         0 | 1 | 2
         3 | 4 | 5
         6 | 7 | 8

    A move is the number of an empty cell, e.g. `4` for the centre. The first player with three
    marks in a row, column or diagonal wins; a full board with no line is a draw.
    Invalid moves (a taken cell, not a number 0-8) get feedback and two retries; a third invalid
    attempt in the same turn forfeits the game.
    """

    id: ClassVar[str] = "tictactoe"
    name: ClassVar[str] = "Tic-Tac-Toe"
    STATE_FIELDS = ("board", "current")

    def _setup(self) -> None:
        self.board = "........."
        self.current = 0

    def role(self, player: int) -> str:
        return f"Player {player} ({MARKS[player]})"

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        return [str(i) for i, c in enumerate(self.board) if c == "."]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().strip("[]").strip()
        if len(text) != 1 or not text.isdigit() or text == "9":
            return None, f"'{action.strip()[:40]}' is not a cell number 0-8"
        if self.board[int(text)] != ".":
            return None, f"cell {text} is already taken"
        return str(int(text)), None

    def _apply(self, player: int, move: str) -> None:
        cell = int(move)
        mark = MARKS[player]
        self.board = self.board[:cell] + mark + self.board[cell + 1 :]
        self.log.append(f"{mark} took cell {cell}")
        if winner_of(self.board) == mark:
            scores = [0.0, 0.0]
            scores[player] = 1.0
            self.finish(scores, f"{mark} has three in a line")
        elif "." not in self.board:
            self.finish([0.5, 0.5], "the board is full")
        else:
            self.current = 1 - player

    def _render(self, player: int) -> str:
        rows = []
        for r in range(3):
            cells = [self.board[3 * r + c] if self.board[3 * r + c] != "." else str(3 * r + c) for c in range(3)]
            rows.append(" " + " | ".join(cells))
        grid = "\n---+---+---\n".join(rows)
        lines = [f"You are {MARKS[player]}. Empty cells show their number.", grid]
        if self.log:
            lines.append(f"Last move: {self.log[-1]}.")
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Perfect play by minimax, preferring the shortest win and the longest loss; ties between
        equally good cells broken at random."""
        return rng.choice(best_cells(self.board, player))
