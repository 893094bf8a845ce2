"""The iterated Prisoner's Dilemma with simultaneous moves."""

from __future__ import annotations

import random
from typing import ClassVar

from arena.game import GameError, NativeGame
from arena.game_options import OptionSchema, int_option

TEMPTATION, REWARD, PUNISHMENT, SUCKER = 5, 3, 1, 0
PAYOFFS = {  # (my move, their move) -> my payoff
    ("cooperate", "cooperate"): REWARD,
    ("cooperate", "defect"): SUCKER,
    ("defect", "cooperate"): TEMPTATION,
    ("defect", "defect"): PUNISHMENT,
}
_ALIASES = {"cooperate": "cooperate", "c": "cooperate", "defect": "defect", "d": "defect"}
MAX_ROUNDS = 1000
HISTORY_SHOWN = 20  # rounds listed in a player's view; totals always cover all of them


class PrisonersDilemma(NativeGame):
    """The iterated Prisoner's Dilemma for two players, with simultaneous moves.

    The game lasts a fixed number of rounds (5 unless the table was set up otherwise); everyone
    knows how many. In each round both players choose, at the same time and without seeing the
    other's choice, to cooperate or to defect. Both choices are revealed together once both have
    chosen, and each player scores points for the round:
      - both cooperate: 3 points each;
      - both defect: 1 point each;
      - one defects, one cooperates: the defector gets 5, the cooperator 0.
    A move is `cooperate` or `defect` (`C` and `D` are accepted too, in any case).

    Your score is your total over all rounds; the higher total wins and equal totals are a draw.
    There is no talking. Invalid moves get feedback and two retries; a third invalid attempt in the
    same round forfeits the game.
    """

    id: ClassVar[str] = "prisoners_dilemma"
    name: ClassVar[str] = "Iterated Prisoner's Dilemma"
    simultaneous: ClassVar[bool] = True
    STATE_FIELDS = ("round", "pending", "history", "totals")

    OPTIONS = OptionSchema((int_option("rounds", 5, 1, MAX_ROUNDS, "rounds played"),))

    @property
    def rounds(self) -> int:
        """Rounds in the game (the `rounds` option)."""
        return int(self.options["rounds"])

    def _setup(self) -> None:
        self.round = 0  # rounds completed
        self.pending: list[str | None] = [None, None]  # this round's choices, hidden until both are in
        self.history: list[list[str]] = []  # [player 0's move, player 1's move] per finished round
        self.totals = [0, 0]

    def secrets(self, player: int) -> list[str]:
        choice = self.pending[player]
        return [f"Your choice this round: {choice}"] if choice is not None and not self.finished else []

    def _current(self) -> list[int]:
        return [p for p in (0, 1) if self.pending[p] is None]

    def _legal_moves(self, player: int) -> list[str]:
        return ["cooperate", "defect"]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip()[:30].strip("[]()'\"`.! ").lower()
        move = _ALIASES.get(text)
        if move is None:
            return None, f"'{action.strip()[:40]}' is not a move; write cooperate or defect"
        return move, None

    def _apply(self, player: int, move: str) -> None:
        self.pending[player] = move
        if None in self.pending:
            return  # wait for the other choice; nothing is revealed yet
        a, b = self.pending[0], self.pending[1]
        assert a is not None and b is not None
        gain = (PAYOFFS[(a, b)], PAYOFFS[(b, a)])
        self.totals[0] += gain[0]
        self.totals[1] += gain[1]
        self.history.append([a, b])
        self.pending = [None, None]
        self.round += 1
        self.log.append(f"Round {self.round}: Player 0 chose {a}, Player 1 chose {b} ({gain[0]}-{gain[1]})")
        if self.round >= self.rounds:
            t0, t1 = self.totals
            reason = f"after {self.rounds} round(s) the totals are {t0}-{t1}"
            self.finish([float(t0), float(t1)], reason)

    def _render(self, player: int) -> str:
        other = 1 - player
        lines = [f"Iterated Prisoner's Dilemma. You are Player {player}."]
        if not self.finished:
            lines.append(f"Round {self.round + 1} of {self.rounds}.")
        if self.history:
            start = max(0, len(self.history) - HISTORY_SHOWN)
            if start:
                lines.append(f"(rounds 1-{start} not shown)")
            for i, pair in enumerate(self.history[start:], start + 1):
                mine, theirs = pair[player], pair[other]
                lines.append(f"  round {i}: you {mine}, opponent {theirs} -> you {PAYOFFS[(mine, theirs)]}, opponent {PAYOFFS[(theirs, mine)]}")
        else:
            lines.append("No rounds played yet.")
        lines.append(f"Totals: you {self.totals[player]}, opponent {self.totals[other]}.")
        choice = self.pending[player]
        if choice is not None and not self.finished:
            lines.append(f"Your choice this round: {choice} (waiting for the opponent's choice).")
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Tit-for-tat (Rapoport; Axelrod's tournaments): cooperate first, then repeat the
        opponent's previous move. Uses only revealed rounds, never a pending choice."""
        if self.finished:
            raise GameError(f"{self.id}: the game is over")
        if not self.history:
            return "cooperate"
        return self.history[-1][1 - player]
