"""Kuhn poker: three cards, one card each, one betting round (Kuhn, 1950).

A game is `hands` hands (default 3, the same as TextArena's KuhnPoker-v0) with the first actor
alternating; each player's score is its net chip result, so the game is zero-sum.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from arena.game import GameError, NativeGame
from arena.game_options import OptionSchema, int_option

CARDS = ("J", "Q", "K")
ANTE = 1
BET = 1
OPEN_MOVES = ("check", "bet")  # nobody has bet yet this hand
FACING_MOVES = ("call", "fold")  # the opponent has bet
ALL_MOVES = OPEN_MOVES + FACING_MOVES
DEALS = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))  # (player 0's, player 1's) card, equally likely
ALPHA = 1 / 3  # the equilibrium family parameter (0 <= alpha <= 1/3) the bot plays
MAX_HANDS = 1000
RESULTS_SHOWN = 5  # earlier hands listed in a player's view


class KuhnPoker(NativeGame):
    """Kuhn poker for two players: a 3-card deck (J < Q < K), one card each, one betting round.

    The game is a number of hands (3 unless the table was set up otherwise). At the start of every
    hand each player puts 1 chip (the ante) into the pot and gets one private card from the
    shuffled deck J, Q, K; the third card stays hidden. You see only your own card.
    Player 0 acts first in hand 1, player 1 in hand 2, and so on alternating.

    Moves (write exactly one word):
      - `check`: pass without betting (only while nobody has bet this hand).
      - `bet`: put 1 more chip into the pot (only while nobody has bet this hand).
      - `call`: match the opponent's bet with 1 chip; the hand goes to a showdown.
      - `fold`: give up the hand; the opponent takes the pot without a showdown.
    If both players check, or a bet is called, the higher card wins the pot (showdown).
    A hand therefore goes: check-check, check-bet-call, check-bet-fold, bet-call or bet-fold.
    Winning a pot of 2 gains you 1 chip, a pot of 4 gains you 2.

    Your score is your net chip result over all hands (positive = you won chips); the player with
    more chips wins, equal chips is a draw. Invalid moves get feedback and two retries; a third
    invalid attempt in the same turn forfeits the game.
    """

    id: ClassVar[str] = "kuhn_poker"
    name: ClassVar[str] = "Kuhn Poker"
    STATE_FIELDS = ("hand", "cards", "actions", "facing_bet", "chips", "current", "results")

    OPTIONS = OptionSchema((int_option("hands", 3, 1, MAX_HANDS, "hands played; the net chips decide"),))

    def _setup(self) -> None:
        self.chips = [0, 0]  # net result so far
        self.results: list[str] = []  # one line per finished hand
        self.hand = 0
        self._deal()

    @property
    def hands(self) -> int:
        """Hands in the game (the `hands` option)."""
        return int(self.options["hands"])

    def _deal(self) -> None:
        """Start hand `self.hand`: antes in, one card each, the hand's first actor to move."""
        self.cards = list(DEALS[self.rng.randrange(6)])
        self.actions: list[str] = []
        self.facing_bet = False
        self.current = self.hand % 2

    def role(self, player: int) -> str:
        return f"Player {player}"

    def secrets(self, player: int) -> list[str]:
        return [] if self.finished else [f"Your card: {CARDS[self.cards[player]]}"]

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        return list(FACING_MOVES if self.facing_bet else OPEN_MOVES)

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        legal = FACING_MOVES if self.facing_bet else OPEN_MOVES
        if action in legal:
            return action, None
        text = action.strip()[:30].strip("[]()'\"`.! ").lower()
        if text in legal:
            return text, None
        if text in ALL_MOVES:
            why = "the opponent has bet" if self.facing_bet else "nobody has bet"
            return None, f"you cannot {text} now ({why}); choose {legal[0]} or {legal[1]}"
        return None, f"'{action.strip()[:40]}' is not a move; choose {legal[0]} or {legal[1]}"

    def _apply(self, player: int, move: str) -> None:
        self.actions.append(move)
        self.log.append(f"Hand {self.hand + 1}: Player {player} {_PAST[move]}")
        if move == "bet":
            self.facing_bet = True
            self.current = 1 - player
        elif move == "check":
            if len(self.actions) == 2:  # check-check
                self._showdown(ANTE)
            else:
                self.current = 1 - player
        elif move == "call":
            self._showdown(ANTE + BET)
        else:  # fold: the bettor wins the folder's ante
            self._settle(1 - player, ANTE, f"Player {player} folded; Player {1 - player} wins {ANTE} chip")

    def _showdown(self, stake: int) -> None:
        winner = 0 if self.cards[0] > self.cards[1] else 1
        win_card, lose_card = CARDS[self.cards[winner]], CARDS[self.cards[1 - winner]]
        self._settle(
            winner,
            stake,
            f"showdown, Player {winner}'s {win_card} beats Player {1 - winner}'s {lose_card}; "
            f"Player {winner} wins {stake} chip{'s' if stake > 1 else ''}",
        )

    def _settle(self, winner: int, stake: int, summary: str) -> None:
        self.chips[winner] += stake
        self.chips[1 - winner] -= stake
        line = f"Hand {self.hand + 1}: {summary}"
        self.results.append(line)
        self.log.append(line)
        self.hand += 1
        if self.hand < self.hands:
            self._deal()
            return
        c0, c1 = self.chips
        if c0 == c1:
            reason = f"after {self.hands} hand(s) both players are even"
        else:
            leader = 0 if c0 > c1 else 1
            reason = f"after {self.hands} hand(s) Player {leader} is up {abs(c0)} chip(s)"
        self.finish([float(c0), float(c1)], reason)

    def _render(self, player: int) -> str:
        lines = [f"Kuhn Poker, hand {min(self.hand + 1, self.hands)} of {self.hands}. You are Player {player}."]
        if not self.finished:
            pot = 2 * ANTE + BET * sum(1 for a in self.actions if a in ("bet", "call"))
            lines.append(f"Your card: {CARDS[self.cards[player]]}")
            lines.append(f"Pot: {pot} chips.")
            if self.actions:
                first = self.hand % 2
                said = [f"Player {(first + i) % 2} {_PAST[a]}" for i, a in enumerate(self.actions)]
                lines.append(f"This hand so far: {', '.join(said)}.")
            else:
                lines.append("No actions yet this hand.")
            if self.current == player:
                options = "call or fold" if self.facing_bet else "check or bet"
                lines.append(f"It is your turn: {options}.")
        you, them = self.chips[player], self.chips[1 - player]
        lines.append(f"Chips won so far: you {you:+d}, opponent {them:+d}.")
        if self.results:
            lines.append("Earlier hands:")
            lines.extend(f"  {r}" for r in self.results[-RESULTS_SHOWN:])
        return "\n".join(lines)

    def bot_distribution(self, player: int) -> dict[str, float]:
        """Equilibrium play (alpha = 1/3 of Kuhn's one-parameter family) as move probabilities,
        using only the bot's own card and the public actions."""
        if self.finished:
            raise GameError(f"{self.id}: the game is over")
        card = CARDS[self.cards[player]]
        history = tuple(self.actions)
        if history == ():  # first to act
            bet = {"J": ALPHA, "Q": 0.0, "K": 3 * ALPHA}[card]
        elif history == ("check",):  # second to act, checked to
            bet = {"J": 1 / 3, "Q": 0.0, "K": 1.0}[card]
        else:
            if history == ("bet",):  # second to act, facing a bet
                call = {"J": 0.0, "Q": 1 / 3, "K": 1.0}[card]
            else:  # first actor after check-bet
                call = {"J": 0.0, "Q": ALPHA + 1 / 3, "K": 1.0}[card]
            return {"call": call, "fold": 1.0 - call}
        return {"bet": bet, "check": 1.0 - bet}

    def bot_move(self, player: int, rng: random.Random) -> str:
        """One draw from `bot_distribution` (bet/call when the uniform falls below their chance)."""
        (aggressive, chance), (passive, _) = self.bot_distribution(player).items()
        return aggressive if rng.random() < chance else passive

    @classmethod
    def hand_deals(cls) -> list[tuple[float, dict[str, Any]]]:
        """Every deal of one hand with its chance, as the state fields it sets (for exact evaluation)."""
        return [(1 / len(DEALS), {"cards": list(deal)}) for deal in DEALS]


_PAST = {"check": "checked", "bet": "bet", "call": "called", "fold": "folded"}
