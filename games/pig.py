"""Pig, the push-your-luck dice game, for 2-6 players."""

from __future__ import annotations

import random
from typing import ClassVar

from arena.game import InvalidMoveRule, NativeGame
from arena.game_options import OptionSchema, int_option


class Pig(NativeGame):
    """Pig for 2-6 players: a push-your-luck dice race.

    Players take turns. On your turn you repeatedly choose:
    - `roll`: roll one six-sided die. A 2-6 is added to your turn total and you choose again; a 1
      wipes out your turn total and your turn ends.
    - `hold`: add your turn total to your score and end your turn.
    The first player whose score reaches `target` (default 50) wins at once. If nobody has reached
    it after `max_rounds` rounds (default 30), the game ends and players rank by score.
    Invalid moves get feedback and two retries; then the player is eliminated (with two players
    left, they forfeit).
    """

    id: ClassVar[str] = "pig"
    name: ClassVar[str] = "Pig"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    invalid_move_rule = InvalidMoveRule.ELIMINATE
    STATE_FIELDS = ("scores", "turn_total", "current", "turns_taken")

    OPTIONS = OptionSchema(
        (
            int_option("target", 50, 10, 1000, "points that win"),
            int_option("max_rounds", 30, 1, 1000, "rounds before the highest score wins"),
        )
    )

    def _setup(self) -> None:
        self.scores = [0] * self.num_players
        self.turn_total = 0
        self.current = 0
        self.turns_taken = 0

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        return ["roll", "hold"]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().strip("[]").strip().lower()
        if text in ("roll", "hold"):
            return text, None
        return None, f"'{action.strip()[:40]}' is neither roll nor hold"

    def _apply(self, player: int, move: str) -> None:
        if move == "roll":
            die = self.rng.randint(1, 6)
            if die == 1:
                self.log.append(f"Player {player} rolled a 1 and lost a turn total of {self.turn_total}")
                self._end_turn()
            else:
                self.turn_total += die
                self.log.append(f"Player {player} rolled a {die} (turn total {self.turn_total})")
            return
        self.scores[player] += self.turn_total
        self.log.append(f"Player {player} held {self.turn_total}; score {self.scores[player]}")
        if self.scores[player] >= self.options["target"]:
            self.finish(self._final_scores(), f"Player {player} reached {self.options['target']}")
            return
        self._end_turn()

    def _end_turn(self) -> None:
        self.turn_total = 0
        self.turns_taken += 1
        if self.turns_taken >= self.options["max_rounds"] * self.num_players:
            self.finish(self._final_scores(), f"{self.options['max_rounds']} rounds played")
            return
        self._advance()

    def _advance(self) -> None:
        for step in range(1, self.num_players + 1):
            candidate = (self.current + step) % self.num_players
            if candidate not in self.eliminated:
                self.current = candidate
                return

    def _final_scores(self) -> list[float]:
        # Eliminated players rank below everyone still in, in reverse order of elimination.
        scores = [float(s) for s in self.scores]
        floor = min(scores) - 1
        for k, out in enumerate(reversed(self.eliminated)):
            scores[out] = floor - k
        return scores

    def _on_eliminated(self, player: int) -> None:
        if player == self.current:
            self.turn_total = 0
            self._advance()

    def _render(self, player: int) -> str:
        board = ", ".join(f"Player {p}: {s}" + (" (out)" if p in self.eliminated else "") for p, s in enumerate(self.scores))
        lines = [
            f"You are Player {player}. Target: {self.options['target']}. Round {self.turns_taken // self.num_players + 1} of {self.options['max_rounds']}.",
            f"Scores: {board}",
            f"Player {self.current} is to move with a turn total of {self.turn_total}.",
        ]
        if self.log:
            lines.append("Recent events:\n" + "\n".join(f"- {e}" for e in self.log[-5:]))
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Hold at a turn total of 20, or as soon as holding reaches the target."""
        if self.scores[player] + self.turn_total >= self.options["target"] or self.turn_total >= 20:
            return "hold"
        return "roll"
