"""Liar's Dice for 2-6 players."""

from __future__ import annotations

import math
import random
import re
from typing import ClassVar

from arena.game import InvalidMoveRule, NativeGame
from arena.game_options import OptionSchema, bool_option, int_option

_BID = re.compile(r"^(?:bid\s*:?\s*)?(\d{1,3})\s*[ ,x]\s*(\d{1,2})s?$")


class LiarsDice(NativeGame):
    """Liar's Dice (also called Perudo or Dudo) for 2-6 players.

    Every player starts with `dice` six-sided dice (default 5). Each round all dice are rolled in
    secret: you see only your own. Starting with the first player of the round, players take turns
    either raising the bid or calling the last bid a lie:
    - `bid Q F` claims that among ALL dice in play at least Q show face F (for example `bid 3 4`:
      "at least three 4s"). A new bid must be higher: a larger quantity Q, or the same quantity
      with a larger face F. Faces are 1-6.
    - `liar` challenges the previous bid. All dice are revealed. If the bid was true (at least Q
      dice show F), the challenger loses one die; otherwise the bidder loses one die.
    Accepted spellings: `bid 3 4`, `3 4`, `[3 4]`, `3x4`; `liar`, `challenge`, `[liar]`.
    Wild ones: off by default, so a 1 counts only as a 1. With the option `wild_ones` on, every 1
    also counts as the face of any bid on 2-6 (a bid on 1s counts only the 1s). The view says which
    rule is in force. The player who lost a die starts the next round (or the next player still
    in, if that player is out). A player with no dice left is out.
    The last player with dice wins; the others rank by how long they lasted.
    Invalid moves get feedback and two retries; then the player is eliminated (with two players
    left, they forfeit).
    """

    id: ClassVar[str] = "liars_dice"
    name: ClassVar[str] = "Liar's Dice"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    invalid_move_rule = InvalidMoveRule.ELIMINATE
    STATE_FIELDS = ("dice", "bid", "bidder", "current", "round_no")

    OPTIONS = OptionSchema(
        (
            int_option("dice", 5, 1, 10, "dice each player starts with"),
            bool_option("wild_ones", False, "ones count as any face (except in bids on ones)"),
        )
    )

    def _setup(self) -> None:
        self.dice: list[list[int]] = [[0] * self.options["dice"] for _ in range(self.num_players)]
        self.round_no = 0
        self._new_round(starter=0)

    def _new_round(self, starter: int) -> None:
        self.round_no += 1
        self.dice = [sorted(self.rng.randint(1, 6) for _ in hand) for hand in self.dice]
        self.bid: list[int] | None = None
        self.bidder: int | None = None
        self.current = starter if starter in self.alive() else self._next_alive(starter)

    def _next_alive(self, player: int) -> int:
        for step in range(1, self.num_players + 1):
            candidate = (player + step) % self.num_players
            if candidate in self.alive():
                return candidate
        return player

    def role(self, player: int) -> str:
        return f"Player {player}"

    def _current(self) -> list[int]:
        return [self.current]

    def _total_dice(self) -> int:
        return sum(len(hand) for hand in self.dice)

    def _matching(self, hand: list[int], face: int) -> int:
        """Dice in `hand` that count towards a bid on `face` (1s too, when ones are wild)."""
        if self.options["wild_ones"] and face != 1:
            return sum(1 for die in hand if die == face or die == 1)
        return hand.count(face)

    def _face_chance(self, face: int) -> float:
        """Chance that one unseen die counts towards a bid on `face`."""
        return 2 / 6 if self.options["wild_ones"] and face != 1 else 1 / 6

    def _legal_moves(self, player: int) -> list[str]:
        moves = ["liar"] if self.bid is not None else []
        q0, f0 = self.bid if self.bid is not None else (1, 0)
        for quantity in range(q0, self._total_dice() + 1):
            for face in range(1, 7):
                if quantity > q0 or face > f0:
                    moves.append(f"bid {quantity} {face}")
        return moves

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().strip("[]").strip().lower()
        if text in {"liar", "challenge", "call", "dudo"}:
            if self.bid is None:
                return None, "there is no bid to challenge yet; make the first bid"
            return "liar", None
        match = _BID.match(text) if len(text) <= 20 else None
        if match is None:
            return None, f"'{action.strip()[:40]}' is neither `bid Q F` nor `liar`"
        quantity, face = int(match.group(1)), int(match.group(2))
        if not 1 <= face <= 6:
            return None, f"face {face} is not 1-6"
        if not 1 <= quantity <= self._total_dice():
            return None, f"quantity {quantity} is not 1-{self._total_dice()} (dice in play)"
        if self.bid is not None and not (quantity > self.bid[0] or (quantity == self.bid[0] and face > self.bid[1])):
            return None, f"bid {quantity} {face} does not raise the current bid {self.bid[0]} {self.bid[1]}"
        return f"bid {quantity} {face}", None

    def _apply(self, player: int, move: str) -> None:
        if move != "liar":
            _, quantity, face = move.split()
            self.bid = [int(quantity), int(face)]
            self.bidder = player
            self.log.append(f"Player {player} bids {quantity} x {face}s")
            self.current = self._next_alive(player)
            return
        assert self.bid is not None and self.bidder is not None
        quantity, face = self.bid
        count = sum(self._matching(hand, face) for hand in self.dice)
        reveal = "; ".join(f"P{p} {' '.join(map(str, h))}" for p, h in enumerate(self.dice) if h)
        loser = player if count >= quantity else self.bidder
        verdict = "true" if count >= quantity else "a lie"
        self.log.append(
            f"Player {player} called liar on {quantity} x {face}s; revealed [{reveal}]: {count} counted as {face}, "
            f"the bid was {verdict}; Player {loser} loses a die"
        )
        self.dice[loser] = self.dice[loser][:-1]
        if not self.dice[loser]:
            self.eliminated.append(loser)
            self.log.append(f"Player {loser} has no dice left and is out")
            if len(self.alive()) == 1:
                self.finish(self._elimination_scores(), f"Player {self.alive()[0]} is the last with dice")
                return
        self._new_round(starter=loser)

    def _on_eliminated(self, player: int) -> None:
        self.dice[player] = []
        if len(self.alive()) > 1:
            self._new_round(starter=self._next_alive(player))

    def _render(self, player: int) -> str:
        counts = ", ".join(f"Player {p}: {len(h)}" for p, h in enumerate(self.dice) if p in self.alive())
        wild = "Ones are wild (a 1 counts as any face bid on 2-6)." if self.options["wild_ones"] else "Ones are not wild."
        lines = [f"You are Player {player}. Round {self.round_no}. {wild}"]
        if self.dice[player]:
            lines.append(self._dice_phrase(player))
        else:
            lines.append("You are out of the game.")
        lines.append(f"Dice in play ({self._total_dice()} in all): {counts}")
        if self.bid is None:
            lines.append("No bid yet this round.")
        else:
            lines.append(f"Current bid: Player {self.bidder} claims at least {self.bid[0]} dice showing {self.bid[1]}.")
        if self.log:
            lines.append("Recent events:\n" + "\n".join(f"- {e}" for e in self.log[-5:]))
        return "\n".join(lines)

    def _dice_phrase(self, player: int) -> str:
        return f"Your dice (Player {player}, round {self.round_no}): {' '.join(map(str, self.dice[player]))}"

    def secrets(self, player: int) -> list[str]:
        return [self._dice_phrase(player)] if self.dice[player] and not self.finished else []

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Probability play: call liar when the bid is unlikely given my dice, else the cheapest
        raise on the face I hold most of."""
        mine = self.dice[player]
        unknown = self._total_dice() - len(mine)
        if self.bid is not None:
            quantity, face = self.bid
            need = quantity - self._matching(mine, face)
            if _at_least(need, unknown, self._face_chance(face)) < 0.35:
                return "liar"
        # The face I can back best: most expected matching dice, counting my own hand.
        best_face = max(range(1, 7), key=lambda f: (self._matching(mine, f) + unknown * self._face_chance(f), f))
        legal = [m for m in self._legal_moves(player) if m != "liar"]
        for move in legal:
            _, q, f = move.split()
            if int(f) == best_face and _at_least(int(q) - self._matching(mine, best_face), unknown, self._face_chance(best_face)) >= 0.5:
                return move
        if self.bid is not None:
            return "liar"
        return legal[0]


def _at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
