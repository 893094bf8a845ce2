"""Simple Negotiation: split a pool of items by free-text talk and explicit offers."""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from arena.game import NativeGame
from arena.game_options import OptionSchema, int_option

ITEMS = ("books", "hats", "balls")
MAX_MESSAGE = 500  # characters of a message kept and shown to the other player
_OFFER = re.compile(r"\[\s*offer\s*:?\s*([^\]]*)\]", re.IGNORECASE)
_PART = re.compile(r"(?<!\d)(\d{1,9})\s*(book|hat|ball)s?", re.IGNORECASE)
_ACCEPT = re.compile(r"\[\s*accept\s*\]", re.IGNORECASE)
_REJECT = re.compile(r"\[\s*reject\s*\]", re.IGNORECASE)


def _clean(text: str) -> str:
    """A message as the other player will see it: capped, on one line, printable characters only
    (so a message cannot forge lines of the other player's view)."""
    flat = " ".join(str(text)[: 4 * MAX_MESSAGE].split())
    return "".join(ch for ch in flat if ch.isprintable())[:MAX_MESSAGE].strip()


class Negotiation(NativeGame):
    """Simple Negotiation for two players: divide a pool of books, hats and balls.

    The pool (for example 3 books, 2 hats, 1 ball) is public. Each player values the items
    differently, and only knows their own values; the pool is worth 10 points to each player.
    Player 0 writes first; then players alternate, one message (up to 500 characters; longer
    messages are cut) per turn. A message may contain commands in brackets:
    - `[Offer: 2 books, 1 hat, 0 balls]` proposes that YOU take those items and the other player
      takes the rest. Items you leave out count as 0. It replaces any earlier offer of yours and
      stands until you make another or the other player rejects it.
    - `[Accept]` accepts the other player's standing offer: the deal is made and the game ends.
      A message with `[Accept]` must not also hold an offer or `[Reject]`.
    - `[Reject]` turns down the other player's standing offer; you may add your own offer in the
      same message, e.g. `[Reject] [Offer: 3 books, 0 hats, 1 ball]`.
    Anything else is just talk. After `max_turns` messages in all (default 10) without a deal,
    both players get 0 (the disagreement value). With a deal, each player scores the value of the
    items they get. Invalid commands (an offer of more items than the pool has or naming no items,
    two offers in one message, accepting or rejecting when there is no offer) get feedback and
    two retries; a third invalid attempt in the same turn forfeits.
    """

    id: ClassVar[str] = "negotiation"
    name: ClassVar[str] = "Simple Negotiation"
    STATE_FIELDS = ("pool", "values", "offers", "current", "turns", "messages")

    OPTIONS = OptionSchema((int_option("max_turns", 10, 2, 100, "messages in all before the game ends without a deal"),))

    def _setup(self) -> None:
        self.pool = [self.rng.randint(1, 4), self.rng.randint(1, 3), self.rng.randint(1, 2)]
        self.values = [self._random_values() for _ in range(2)]
        self.offers: list[list[int] | None] = [None, None]  # what each player proposes to take
        self.current = 0
        self.turns = 0
        self.messages: list[list[Any]] = []  # [player, text]

    def _random_values(self) -> list[int]:
        """Whole-number values per item with the whole pool worth exactly 10."""
        while True:
            values = [self.rng.randint(0, 10) for _ in ITEMS]
            if sum(v * n for v, n in zip(values, self.pool)) == 10:
                return values

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> None:
        return None  # free text

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = _clean(action)
        if not text:
            return None, "the message is empty: write some text (commands in brackets are optional)"
        offers = _OFFER.findall(text)
        accept, reject = _ACCEPT.search(text), _REJECT.search(text)
        if (accept or reject) and self.offers[1 - player] is None:
            return None, f"there is no offer from the other player to {'accept' if accept else 'reject'}"
        if accept and (reject or offers):
            return None, "[Accept] ends the game: send it without an offer or [Reject]"
        if len(offers) > 1:
            return None, "make one offer per message"
        if offers:
            counts = self._parse_offer(offers[0])
            if counts is None:
                return None, "write offers like [Offer: 2 books, 1 hat, 0 balls]"
            over = [f"{c} {name}" for c, n, name in zip(counts, self.pool, ITEMS) if c > n]
            if over:
                return None, f"the pool does not have {', '.join(over)}"
        return text, None

    @staticmethod
    def _parse_offer(body: str) -> list[int] | None:
        found = {m.group(2).lower(): int(m.group(1)) for m in _PART.finditer(body)}
        if not found:
            return None
        return [found.get(name[:-1], 0) for name in ITEMS]

    def _apply(self, player: int, move: str) -> None:
        self.messages.append([player, move])
        self.turns += 1
        if _ACCEPT.search(move):
            taken_by_other = self.offers[1 - player]
            assert taken_by_other is not None
            mine = [n - t for n, t in zip(self.pool, taken_by_other)]
            shares = [mine, taken_by_other] if player == 0 else [taken_by_other, mine]
            scores = [float(sum(v * c for v, c in zip(self.values[p], shares[p]))) for p in range(2)]
            self.finish(scores, f"deal: Player 0 gets {self._describe(shares[0])}, Player 1 gets {self._describe(shares[1])}")
            return
        if _REJECT.search(move):
            self.offers[1 - player] = None
        offer = _OFFER.search(move)
        if offer:
            self.offers[player] = self._parse_offer(offer.group(1))
        if self.turns >= self.options["max_turns"]:
            self.finish([0.0, 0.0], f"no deal after {self.turns} messages")
            return
        self.current = 1 - player

    @staticmethod
    def _describe(counts: list[int]) -> str:
        return ", ".join(f"{c} {name}" for c, name in zip(counts, ITEMS))

    def _values_phrase(self, player: int) -> str:
        values = ", ".join(f"{name[:-1]}={v}" for name, v in zip(ITEMS, self.values[player]))
        return f"Your private values (Player {player}): {values}"

    def _render(self, player: int) -> str:
        lines = [
            f"You are Player {player}. The pool: {self._describe(self.pool)}.",
            self._values_phrase(player) + " (the whole pool is worth 10 to you).",
            f"Messages so far: {self.turns} of {self.options['max_turns']}.",
        ]
        for speaker, text in self.messages[-6:]:
            who = "You" if speaker == player else "Other player"
            lines.append(f"{who}: {text}")
        other, own = self.offers[1 - player], self.offers[player]
        if own is not None:
            lines.append(f"Your standing offer: you take {self._describe(own)}; the other player would get {self._describe(self._rest(own))}.")
        if other is not None:
            lines.append(f"Standing offer from the other player: they take {self._describe(other)}; you would get {self._describe(self._rest(other))}.")
        return "\n".join(lines)

    def _rest(self, taken: list[int]) -> list[int]:
        """What is left of the pool when one player takes `taken`."""
        return [n - t for n, t in zip(self.pool, taken)]

    def secrets(self, player: int) -> list[str]:
        return [self._values_phrase(player)]

    def _value_of(self, player: int, counts: list[int]) -> int:
        return sum(v * c for v, c in zip(self.values[player], counts))

    def random_move(self, player: int, rng: random.Random) -> str:
        """A random valid message: accept or reject a standing offer, make a random offer, or talk."""
        standing = self.offers[1 - player] is not None
        roll = rng.random()
        if standing and roll < 0.3:
            return "[Accept]"
        if roll > 0.9:
            return "Let me think about it."
        counts = [rng.randint(0, n) for n in self.pool]
        prefix = "[Reject] " if standing and roll < 0.5 else ""
        return f"{prefix}How about this? [Offer: {self._describe(counts)}]"

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Accept when the standing offer is worth at least my aspiration, which concedes from 7
        to 4 over the game; otherwise ask for the best bundle worth about my aspiration."""
        progress = self.turns / self.options["max_turns"]
        aspiration = 7 - 3 * progress
        other = self.offers[1 - player]
        if other is not None:
            mine = [n - t for n, t in zip(self.pool, other)]
            if self._value_of(player, mine) >= aspiration:
                return "That works for me. [Accept]"
        bundles = [
            [a, b, c]
            for a in range(self.pool[0] + 1)
            for b in range(self.pool[1] + 1)
            for c in range(self.pool[2] + 1)
        ]
        good = [b for b in bundles if self._value_of(player, b) >= aspiration]
        # Among bundles good enough for me, leave the most items to the other player.
        fewest = min(sum(b) for b in good)
        choice = rng.choice([b for b in good if sum(b) == fewest])
        prefix = "[Reject] " if other is not None else ""
        return f"{prefix}I propose a split. [Offer: {self._describe(choice)}]"
