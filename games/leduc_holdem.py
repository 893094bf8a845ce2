"""Leduc Hold'em (Southey et al., 2005): six cards, a private and a public card, two betting rounds.

One hand per game by default (as in OpenSpiel and RLCard); option `hands` plays several with the
first actor alternating. Each player's score is its net chip result, so the game is zero-sum.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, ClassVar

from arena.game import GameError, NativeGame
from arena.game_options import OptionSchema, int_option

RANKS = ("J", "Q", "K")
DECK = (0, 0, 1, 1, 2, 2)  # two of each rank
ANTE = 1
BET_SIZES = (2, 4)  # fixed bet/raise size in the first and second betting round
MAX_RAISES = 2  # bets plus raises allowed per betting round
MAX_HANDS = 1000
BLUFF = 0.15  # the bot's bet chance with a weak hand when nobody has bet
RESULTS_SHOWN = 5
ALL_MOVES = ("check", "bet", "call", "raise", "fold")
_PAST = {"check": "checked", "bet": "bet", "call": "called", "raise": "raised", "fold": "folded"}


def hand_winner(cards: list[int], board: int) -> int | None:
    """0 or 1 for the better hand at showdown (a pair with the board beats any single card,
    otherwise the higher card wins), None for a split pot."""
    pair = [c == board for c in cards]
    if pair[0] != pair[1]:
        return 0 if pair[0] else 1
    if cards[0] == cards[1]:
        return None
    return 0 if cards[0] > cards[1] else 1


@lru_cache(maxsize=None)
def equity(card: int, board: int | None) -> float:
    """Chance to win (ties count half) against a uniformly random opponent card, with the board
    card known or, before it is dealt, drawn uniformly from the rest of the deck."""
    rest = list(DECK)
    rest.remove(card)
    if board is not None:
        rest.remove(board)
    total = 0.0
    count = 0
    for i, opp in enumerate(rest):
        boards = [board] if board is not None else [b for j, b in enumerate(rest) if j != i]
        for b in boards:
            winner = hand_winner([card, opp], b)
            total += 1.0 if winner == 0 else 0.5 if winner is None else 0.0
            count += 1
    return total / count


class LeducHoldem(NativeGame):
    """Leduc Hold'em for two players: a six-card deck (two each of J, Q, K; J < Q < K).

    Each hand, both players put 1 chip (the ante) into the pot and get one private card. There
    are two betting rounds. After the first, one public board card is turned face up; then the
    second betting round follows. You see your own card and the board card, never the
    opponent's card (unless the hand ends in a showdown).

    Betting: bets and raises have a fixed size - 2 chips in the first round, 4 chips in the
    second. At most two bets/raises are allowed per round (a bet and one raise). The same player
    acts first in both rounds of a hand: player 0 in hand 1, player 1 in hand 2, alternating.
    Moves (write exactly one word):
      - `check`: pass without betting (only while nobody has bet in this round). If both players
        check, the round ends.
      - `bet`: put in the round's bet size (only while nobody has bet in this round).
      - `call`: match the opponent's bet or raise; the round ends.
      - `raise`: match the opponent's bet and add the round's bet size on top (only if fewer than
        two bets/raises were made this round).
      - `fold`: give up the hand; the opponent takes the pot without a showdown.
    Showdown (after the second round): a player whose card pairs the board card wins; otherwise
    the higher card wins; equal cards split the pot.

    The game is 1 hand unless the table was set up with more. Your score is your net chip result
    (positive = you won chips); more chips wins, equal chips is a draw. Invalid moves get feedback
    and two retries; a third invalid attempt in the same turn forfeits the game.
    """

    id: ClassVar[str] = "leduc_holdem"
    name: ClassVar[str] = "Leduc Hold'em"
    STATE_FIELDS = (
        "hand", "cards", "board", "betting_round", "actions", "earlier_actions",
        "put_in", "raises", "chips", "current", "results",
    )  # fmt: skip

    OPTIONS = OptionSchema((int_option("hands", 1, 1, MAX_HANDS, "hands played; the net chips decide"),))

    @property
    def hands(self) -> int:
        """Hands in the game (the `hands` option)."""
        return int(self.options["hands"])

    def _setup(self) -> None:
        self.chips = [0, 0]  # net result so far
        self.results: list[str] = []
        self.hand = 0
        self._deal()

    def _deal(self) -> None:
        """Start hand `self.hand`: antes in, two private cards and the (still hidden) board card."""
        deck = list(DECK)
        self.rng.shuffle(deck)
        self.cards = [deck[0], deck[1]]
        self.board = deck[2]  # shown only from the second betting round on
        self.betting_round = 0
        self.actions: list[str] = []  # this betting round
        self.earlier_actions: list[str] = []  # the first round's actions, during the second
        self.put_in = [ANTE, ANTE]  # chips each player has in the pot this hand
        self.raises = 0  # bets and raises this round
        self.current = self.hand % 2

    def role(self, player: int) -> str:
        return f"Player {player}"

    def secrets(self, player: int) -> list[str]:
        # Both players may hold the same rank, so the phrase names its owner to be unique.
        return [] if self.finished else [f"Your private card (Player {player}): {RANKS[self.cards[player]]}"]

    def _facing_bet(self, player: int) -> bool:
        return self.put_in[1 - player] > self.put_in[player]

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        if not self._facing_bet(player):
            return ["check", "bet"]
        if self.raises < MAX_RAISES:
            return ["call", "raise", "fold"]
        return ["call", "fold"]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        legal = self._legal_moves(player)
        text = action.strip()[:30].strip("[]()'\"`.! ").lower()
        if text in legal:
            return text, None
        choices = ", ".join(legal)
        if text in ALL_MOVES:
            return None, f"you cannot {text} now; choose one of: {choices}"
        return None, f"'{action.strip()[:40]}' is not a move; choose one of: {choices}"

    def _apply(self, player: int, move: str) -> None:
        other = 1 - player
        self.actions.append(move)
        self.log.append(f"Hand {self.hand + 1}, round {self.betting_round + 1}: Player {player} {_PAST[move]}")
        size = BET_SIZES[self.betting_round]
        if move in ("bet", "raise"):
            self.put_in[player] = self.put_in[other] + size
            self.raises += 1
            self.current = other
        elif move == "check":
            if len(self.actions) == 2:  # check-check
                self._end_round()
            else:
                self.current = other
        elif move == "call":
            self.put_in[player] = self.put_in[other]
            self._end_round()
        else:  # fold
            self._settle(other, f"Player {player} folded; Player {other} wins {self.put_in[player]} chip(s)")

    def _end_round(self) -> None:
        if self.betting_round == 0:
            self.betting_round = 1
            self.earlier_actions = self.actions
            self.actions = []
            self.raises = 0
            self.current = self.hand % 2
            self.log.append(f"Hand {self.hand + 1}: the board card is {RANKS[self.board]}")
            return
        c0, c1 = RANKS[self.cards[0]], RANKS[self.cards[1]]
        shown = f"showdown with board {RANKS[self.board]}: Player 0 has {c0}, Player 1 has {c1}"
        winner = hand_winner(self.cards, self.board)
        if winner is None:
            self._settle(None, f"{shown}; the pot is split")
        else:
            self._settle(winner, f"{shown}; Player {winner} wins {self.put_in[1 - winner]} chip(s)")

    def _settle(self, winner: int | None, summary: str) -> None:
        if winner is not None:
            won = self.put_in[1 - winner]
            self.chips[winner] += won
            self.chips[1 - winner] -= won
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
            reason = f"after {self.hands} hand(s) Player {0 if c0 > c1 else 1} is up {abs(c0)} chip(s)"
        self.finish([float(c0), float(c1)], reason)

    def _render(self, player: int) -> str:
        lines = [f"Leduc Hold'em, hand {min(self.hand + 1, self.hands)} of {self.hands}. You are Player {player}."]
        if not self.finished:
            first = self.hand % 2
            lines.append(f"Your private card (Player {player}): {RANKS[self.cards[player]]}")
            if self.betting_round == 0:
                lines.append("Board card: not dealt yet (it is turned up after the first betting round).")
            else:
                lines.append(f"Board card: {RANKS[self.board]}")
            pot = self.put_in[0] + self.put_in[1]
            lines.append(
                f"Pot: {pot} chips (you have put in {self.put_in[player]}, the opponent {self.put_in[1 - player]})."
            )
            lines.append(
                f"Betting round {self.betting_round + 1} of 2; bet size {BET_SIZES[self.betting_round]}, "
                f"bets/raises so far this round: {self.raises} of {MAX_RAISES}."
            )
            for label, acts in (("Round 1", self.earlier_actions), (f"Round {self.betting_round + 1}", self.actions)):
                if acts:
                    said = [f"Player {(first + i) % 2} {_PAST[a]}" for i, a in enumerate(acts)]
                    lines.append(f"{label}: {', '.join(said)}.")
            if self.current == player:
                lines.append(f"It is your turn: {', '.join(self._legal_moves(player))}.")
        lines.append(f"Chips won so far: you {self.chips[player]:+d}, opponent {self.chips[1 - player]:+d}.")
        if self.results:
            lines.append("Earlier hands:")
            lines.extend(f"  {r}" for r in self.results[-RESULTS_SHOWN:])
        return "\n".join(lines)

    def bot_distribution(self, player: int) -> dict[str, float]:
        """Strength-based play as move probabilities: the bot's equity against a random card (exact,
        by enumeration) decides. Strong hands bet and raise, middling hands call when the pot odds
        allow, weak hands check or fold and bluff-bet 15% of the time."""
        if self.finished:
            raise GameError(f"{self.id}: the game is over")
        strength = equity(self.cards[player], self.board if self.betting_round == 1 else None)
        legal = self._legal_moves(player)
        if "check" in legal:
            if strength >= 0.6:
                return {"bet": 1.0}
            return {"bet": BLUFF, "check": 1.0 - BLUFF} if strength < 0.35 else {"check": 1.0}
        if "raise" in legal and strength >= 0.75:
            return {"raise": 1.0}
        to_call = self.put_in[1 - player] - self.put_in[player]
        pot = self.put_in[0] + self.put_in[1]
        if strength >= to_call / (pot + to_call) + 0.05:  # pot odds with a small margin
            return {"call": 1.0}
        return {"fold": 1.0}

    def bot_move(self, player: int, rng: random.Random) -> str:
        """One draw from `bot_distribution` (a uniform is drawn only for a mixed decision)."""
        distribution = self.bot_distribution(player)
        if len(distribution) == 1:
            return next(iter(distribution))
        (first, chance), (second, _) = distribution.items()
        return first if rng.random() < chance else second

    @classmethod
    def hand_deals(cls) -> list[tuple[float, dict[str, Any]]]:
        """Every deal of one hand (two private cards, then the board) with its chance, as the state
        fields it sets (for exact evaluation). Cards of equal rank are merged, so chances differ."""
        chances: dict[tuple[int, int, int], float] = {}
        n = len(DECK)
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    if len({i, j, k}) == 3:
                        key = (DECK[i], DECK[j], DECK[k])
                        chances[key] = chances.get(key, 0.0) + 1 / (n * (n - 1) * (n - 2))
        return [(p, {"cards": [a, b], "board": c}) for (a, b, c), p in sorted(chances.items())]
