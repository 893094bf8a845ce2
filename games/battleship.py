"""Battleship on a small grid."""

from __future__ import annotations

import random
import re
from typing import ClassVar

from arena.game import GameError, NativeGame
from arena.game_options import CrossCheck, OptionSchema, int_list_option, int_option

_CELL = re.compile(r"^([a-z])\s*-?\s*(\d{1,2})$")


class Battleship(NativeGame):
    """Battleship for two players on a `size` x `size` grid (default 6).

    Each player has a hidden fleet (default ships of length 3, 2 and 2) placed at random, in straight
    lines, without overlapping. Rows are letters (A, B, ...) and columns numbers (1, 2, ...).
    Players take turns firing one shot at a cell of the opponent's grid they have not fired at, e.g.
    `B4`. You are told whether it was a hit or a miss, and when a ship is sunk. The first player to
    sink the whole enemy fleet wins.
    Your view shows your own fleet (S = ship, X = hit on your ship, o = enemy miss) and your shots at
    the enemy (X = hit, o = miss, . = unknown). Invalid moves (a cell off the grid or already fired
    at) get feedback and two retries; a third invalid attempt in the same turn forfeits.
    """

    id: ClassVar[str] = "battleship"
    name: ClassVar[str] = "Battleship"
    STATE_FIELDS = ("ships", "shots", "current")

    OPTIONS = OptionSchema(
        (
            int_option("size", 6, 4, 10, "rows and columns of each grid"),
            int_list_option("fleet", (3, 2, 2), 1, 10, 1, 6, "the length of each ship"),
        ),
        (
            CrossCheck("fleet", "fleet: no ship longer than size", lambda v: _longest_ship_problem(v["size"], v["fleet"])),
            # Random placement must always find room.
            CrossCheck("fleet", "fleet: ships cover at most half of the grid", lambda v: _crowded_fleet_problem(v["size"], v["fleet"])),
        ),
    )

    def _setup(self) -> None:
        self.ships: list[list[list[int]]] = [self._place_fleet() for _ in range(2)]
        self.shots: list[list[int]] = [[], []]
        self.current = 0

    def _place_fleet(self) -> list[list[int]]:
        """Ships at random, straight and apart. Early ships can box a later one out of a crowded
        grid, so a stuck placement starts over (a bounded number of times) instead of looping."""
        size = self.options["size"]
        for _ in range(200):
            taken: set[int] = set()
            fleet: list[list[int]] = []
            for length in self.options["fleet"]:
                for _ in range(100):
                    horizontal = self.rng.random() < 0.5
                    row = self.rng.randrange(size if horizontal else size - length + 1)
                    col = self.rng.randrange(size - length + 1 if horizontal else size)
                    cells = [row * size + col + (i if horizontal else i * size) for i in range(length)]
                    if not taken.intersection(cells):
                        taken.update(cells)
                        fleet.append(cells)
                        break
                else:
                    break  # this ship found no room: place the whole fleet again
            if len(fleet) == len(self.options["fleet"]):
                return fleet
        raise GameError(f"{self.id}: could not place the fleet {self.options['fleet']} on a {size}x{size} grid")

    def _name(self, cell: int) -> str:
        size = self.options["size"]
        return f"{chr(65 + cell // size)}{cell % size + 1}"

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        fired = set(self.shots[player])
        return [self._name(c) for c in range(self.options["size"] ** 2) if c not in fired]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        size = self.options["size"]
        text = action.strip().strip("[]").strip().lower()
        match = _CELL.match(text) if len(text) <= 6 else None
        if match is None:
            return None, f"'{action.strip()[:40]}' is not a cell like B4"
        row, col = ord(match.group(1)) - 97, int(match.group(2)) - 1
        if not (0 <= row < size and 0 <= col < size):
            return None, f"{text.upper()} is off the {size}x{size} grid (rows A-{chr(64 + size)}, columns 1-{size})"
        cell = row * size + col
        if cell in self.shots[player]:
            return None, f"you already fired at {self._name(cell)}"
        return self._name(cell), None

    def _apply(self, player: int, move: str) -> None:
        size = self.options["size"]
        cell = (ord(move[0]) - 65) * size + int(move[1:]) - 1
        self.shots[player].append(cell)
        enemy = self.ships[1 - player]
        hit_ship = next((ship for ship in enemy if cell in ship), None)
        if hit_ship is None:
            self.log.append(f"Player {player} fired at {move}: miss")
        elif set(hit_ship) <= set(self.shots[player]):
            self.log.append(f"Player {player} fired at {move}: hit, and sank a ship of length {len(hit_ship)}")
        else:
            self.log.append(f"Player {player} fired at {move}: hit")
        if all(set(ship) <= set(self.shots[player]) for ship in enemy):
            scores = [0.0, 0.0]
            scores[player] = 1.0
            self.finish(scores, f"Player {player} sank the whole fleet")
        else:
            self.current = 1 - player

    def _grid(self, marks: dict[int, str]) -> list[str]:
        size = self.options["size"]
        header = "   " + " ".join(str(c + 1) for c in range(size))
        rows = [f"{chr(65 + r)}  " + " ".join(marks.get(r * size + c, ".") for c in range(size)) for r in range(size)]
        return [header, *rows]

    def _fleet_phrase(self, player: int) -> str:
        ships = ", ".join(f"{self._name(s[0])}-{self._name(s[-1])}" for s in self.ships[player])
        return f"Your ships (Player {player}): {ships}"

    def _render(self, player: int) -> str:
        enemy_shots = set(self.shots[1 - player])
        own: dict[int, str] = {c: "o" for c in enemy_shots}
        for ship in self.ships[player]:
            for c in ship:
                own[c] = "X" if c in enemy_shots else "S"
        enemy_cells = {c for ship in self.ships[1 - player] for c in ship}
        target = {c: ("X" if c in enemy_cells else "o") for c in self.shots[player]}
        lines = [f"You are Player {player}.", self._fleet_phrase(player), "Your fleet:", *self._grid(own), "Your shots at the enemy:", *self._grid(target)]
        if self.log:
            lines.append("Recent events:\n" + "\n".join(f"- {e}" for e in self.log[-4:]))
        return "\n".join(lines)

    def secrets(self, player: int) -> list[str]:
        return [] if self.finished else [self._fleet_phrase(player)]

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Hunt and target: fire next to unsunk hits; otherwise at random on a checkerboard."""
        size = self.options["size"]
        shots = set(self.shots[player])
        enemy = self.ships[1 - player]
        # Only what the shooter knows: which of its shots hit, and which of those ships are sunk.
        sunk_cells = {c for ship in enemy if set(ship) <= shots for c in ship}
        hits = [c for c in self.shots[player] if any(c in ship for ship in enemy) and c not in sunk_cells]
        targets = []
        for c in hits:
            r, col = divmod(c, size)
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                nr, nc = r + dr, col + dc
                if 0 <= nr < size and 0 <= nc < size and nr * size + nc not in shots:
                    targets.append(nr * size + nc)
        if not targets:
            targets = [c for c in range(size * size) if c not in shots and (c // size + c % size) % 2 == 0]
        if not targets:
            targets = [c for c in range(size * size) if c not in shots]
        return self._name(rng.choice(targets))


def _longest_ship_problem(size: int, fleet: list[int]) -> str | None:
    return f"no ship may be longer than the grid is wide ({size})" if max(fleet) > size else None


def _crowded_fleet_problem(size: int, fleet: list[int]) -> str | None:
    room = size * size // 2
    return f"ships of {sum(fleet)} cells do not fit: at most {room} on a {size}x{size} grid" if sum(fleet) > room else None
