"""Nim, normal play: whoever takes the last object wins."""

from __future__ import annotations

import random
import re
from functools import reduce
from operator import xor
from typing import ClassVar

from arena.game import GameError, NativeGame
from arena.game_options import OptionSchema, int_list_option

DEFAULT_HEAPS = (3, 4, 5)
MAX_HEAPS = 8
MAX_HEAP_SIZE = 50
_NUMBER = re.compile(r"\d{1,6}")
_NEGATIVE = re.compile(r"(?:^|[\s,\[(])-\s*\d")  # "-1 3", "2 -3"; but "2-3" is heap 2, take 3
# "take 3 from heap 2" names the count first; every other accepted form names the heap first.
_COUNT_FIRST = re.compile(r"take\s*(\d{1,6})\s*(?:objects?|items?|stones?)?\s*from\s*(?:heap|pile)?\s*(\d{1,6})")


def nim_sum(heaps: list[int]) -> int:
    return reduce(xor, heaps, 0)


class Nim(NativeGame):
    """Nim for two players, normal play: the player who takes the last object wins.

    There are several heaps of objects (3, 4 and 5 unless the table was set up otherwise).
    Heaps are numbered from 1, left to right as listed. Players alternate; player 0 moves first.
    On your turn you take one or more objects from exactly one non-empty heap - as many as you
    like, up to the whole heap.

    A move is two numbers: the heap, then how many objects to take from it. `2 3` takes 3 objects
    from heap 2 (`[2 3]`, `2,3` and `heap 2 take 3` are understood too).
    Whoever takes the last object wins; the other player loses. Invalid moves (an empty heap,
    taking more than the heap holds, not two numbers) get feedback and two retries; a third
    invalid attempt in the same turn forfeits the game.
    """

    id: ClassVar[str] = "nim"
    name: ClassVar[str] = "Nim"
    STATE_FIELDS = ("heaps", "current")

    OPTIONS = OptionSchema(
        (int_list_option("heaps", DEFAULT_HEAPS, 1, MAX_HEAP_SIZE, 1, MAX_HEAPS, "the objects in each heap at the start"),)
    )

    def _setup(self) -> None:
        self.heaps: list[int] = list(self.options["heaps"])
        self.current = 0

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        return [f"{h + 1} {n}" for h, size in enumerate(self.heaps) for n in range(1, size + 1)]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().lower()
        shown = text[:40]
        if len(text) > 60:
            return None, f"'{shown}...' is too long; write the heap and the count, e.g. '1 2'"
        count_first = _COUNT_FIRST.search(text)
        if count_first:
            numbers = [count_first.group(2), count_first.group(1)]
        else:
            numbers = _NUMBER.findall(text)
        if len(numbers) != 2 or _NEGATIVE.search(text):
            return None, f"'{shown}' is not a move; write the heap and the count, e.g. '1 2'"
        heap, count = int(numbers[0]), int(numbers[1])
        if not 1 <= heap <= len(self.heaps):
            return None, f"there is no heap {heap}; heaps are numbered 1-{len(self.heaps)}"
        size = self.heaps[heap - 1]
        if size == 0:
            return None, f"heap {heap} is empty"
        if not 1 <= count <= size:
            return None, f"you can take 1-{size} from heap {heap}, not {count}"
        return f"{heap} {count}", None

    def _apply(self, player: int, move: str) -> None:
        heap_text, count_text = move.split()
        heap, count = int(heap_text) - 1, int(count_text)
        self.heaps[heap] -= count
        self.log.append(f"Player {player} took {count} from heap {heap + 1}")
        if not any(self.heaps):
            scores = [0.0, 0.0]
            scores[player] = 1.0
            self.finish(scores, f"Player {player} took the last object")
        else:
            self.current = 1 - player

    def _render(self, player: int) -> str:
        rows = [f"  heap {h + 1}: {size:>2} {'|' * size}" for h, size in enumerate(self.heaps)]
        lines = [f"You are Player {player}. Take objects from one heap; taking the last object wins.", *rows]
        if self.log:
            lines.append(f"Last move: {self.log[-1]}.")
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Optimal play (Bouton, 1901): leave a nim-sum of zero when possible; from a lost
        position take one object from a random non-empty heap and hope for a mistake."""
        if self.finished:
            raise GameError(f"{self.id}: the game is over")
        total = nim_sum(self.heaps)
        if total:
            winning = [(h, size - (size ^ total)) for h, size in enumerate(self.heaps) if size ^ total < size]
            heap, count = rng.choice(winning)
            return f"{heap + 1} {count}"
        heap = rng.choice([h for h, size in enumerate(self.heaps) if size])
        return f"{heap + 1} 1"
