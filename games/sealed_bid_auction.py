"""Sealed-bid first-price auctions for 3-6 players, bids chosen simultaneously."""

from __future__ import annotations

import random
import re
from typing import ClassVar

from arena.game import InvalidMoveRule, NativeGame
from arena.game_options import OptionSchema, int_option

MAX_BID = 30
_BID = re.compile(r"^(?:bid\s*:?\s*)?(\d{1,4})$")


class SealedBidAuction(NativeGame):
    """Sealed-bid auctions for 3-6 players, played over `rounds` rounds (default 5).

    Each round one item is sold. Every player privately learns what the item is worth to THEM (a
    whole number 1-20, different for each player) and then all players bid at the same time, without
    seeing each other's bids: `bid N`, where N is a whole number from 0 to the smaller of 30 and your
    remaining budget. Everyone starts with a budget of `budget` (default 40).
    The highest bid wins the item and pays its bid (first-price). If the highest bid is tied, the
    item goes unsold. After each round all bids are revealed. Your score is the total value of the
    items you won minus what you paid; players rank by score.
    Invalid moves get feedback and two retries; then the player is eliminated and bids no more.
    """

    id: ClassVar[str] = "sealed_bid_auction"
    name: ClassVar[str] = "Sealed-Bid Auction"
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 6
    simultaneous: ClassVar[bool] = True
    invalid_move_rule = InvalidMoveRule.ELIMINATE
    STATE_FIELDS = ("round_no", "values", "pending", "budgets", "scores")

    OPTIONS = OptionSchema(
        (
            int_option("rounds", 5, 1, 50, "items auctioned, one a round"),
            int_option("budget", 40, 1, 1000, "coins each player can spend over the game"),
        )
    )

    def _setup(self) -> None:
        self.budgets = [self.options["budget"]] * self.num_players
        self.scores = [0] * self.num_players
        self.round_no = 0
        self._next_item()

    def _next_item(self) -> None:
        self.round_no += 1
        self.values = [self.rng.randint(1, 20) for _ in range(self.num_players)]
        self.pending: dict[str, int] = {}  # seat (as text, for JSON) -> bid, hidden until all bid

    def _current(self) -> list[int]:
        return [p for p in range(self.num_players) if str(p) not in self.pending]

    def _max_bid(self, player: int) -> int:
        return min(MAX_BID, self.budgets[player])

    def _legal_moves(self, player: int) -> list[str]:
        return [f"bid {n}" for n in range(self._max_bid(player) + 1)]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().strip("[]").strip().lower()
        match = _BID.match(text) if len(text) <= 12 else None
        if match is None:
            return None, f"'{action.strip()[:40]}' is not `bid N`"
        amount = int(match.group(1))
        if amount > self._max_bid(player):
            return None, f"you can bid at most {self._max_bid(player)}"
        return f"bid {amount}", None

    def _apply(self, player: int, move: str) -> None:
        self.pending[str(player)] = int(move.split()[1])
        self._resolve_if_complete()

    def _on_eliminated(self, player: int) -> None:
        self.pending.pop(str(player), None)
        self._resolve_if_complete()

    def _resolve_if_complete(self) -> None:
        bidders = self.alive()
        if self.finished or any(str(p) not in self.pending for p in bidders) or not bidders:
            return
        bids = {p: self.pending[str(p)] for p in bidders}
        top = max(bids.values())
        leaders = [p for p, b in bids.items() if b == top]
        shown = ", ".join(f"Player {p}: {b}" for p, b in bids.items())
        if len(leaders) == 1 and top > 0:
            winner = leaders[0]
            self.budgets[winner] -= top
            self.scores[winner] += self.values[winner] - top
            self.log.append(f"Round {self.round_no}: bids {shown}. Player {winner} wins the item for {top}.")
        else:
            self.log.append(f"Round {self.round_no}: bids {shown}. Tied or zero top bid: the item is unsold.")
        if self.round_no >= self.options["rounds"]:
            self.finish(self._final_scores(), f"{self.options['rounds']} rounds played")
            return
        self._next_item()
        # Eliminated players never bid again: mark them as done for every later round.
        for p in self.eliminated:
            self.pending[str(p)] = 0

    def _final_scores(self) -> list[float]:
        scores = [float(s) for s in self.scores]
        floor = min(scores) - 1
        for k, out in enumerate(reversed(self.eliminated)):
            scores[out] = floor - k
        return scores

    def _value_phrase(self, player: int) -> str:
        return f"Your private value for item {self.round_no} (Player {player}): {self.values[player]}"

    def _render(self, player: int) -> str:
        lines = [
            f"You are Player {player}. Round {self.round_no} of {self.options['rounds']}.",
            self._value_phrase(player),
            "Budgets: " + ", ".join(f"Player {p}: {b}" for p, b in enumerate(self.budgets)),
            "Scores: " + ", ".join(f"Player {p}: {s}" for p, s in enumerate(self.scores)),
        ]
        if str(player) in self.pending and not self.finished:
            lines.append(f"You (Player {player}) bid {self.pending[str(player)]} this round; waiting for the others.")
        if self.log:
            lines.append("Earlier rounds:\n" + "\n".join(f"- {e}" for e in self.log[-4:]))
        return "\n".join(lines)

    def secrets(self, player: int) -> list[str]:
        hidden = [self._value_phrase(player)]
        if str(player) in self.pending and player not in self.eliminated and not self.finished:
            hidden.append(f"You (Player {player}) bid {self.pending[str(player)]} this round")
        return [] if self.finished else hidden

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Shade the bid to about (n-1)/n of the private value, the first-price equilibrium for
        uniform values, within budget."""
        n = len(self.alive())
        bid = int(self.values[player] * (n - 1) / n)
        return f"bid {max(0, min(bid, self._max_bid(player)))}"
