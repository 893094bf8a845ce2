"""Connect Four on the classic 6x7 board, kept on bitboards so play-outs are cheap.

Bit layout (after John Tromp / Pascal Pons): column c owns bits 7c..7c+6, row 0 at the bottom and
bit 7c+6 an always-empty sentinel, so a shift by 1, 7, 6 or 8 steps along a column, a row or a
diagonal without wrapping into the next column.
"""

from __future__ import annotations

import random
from typing import ClassVar

from arena.game import GameError, NativeGame

ROWS, COLS = 6, 7
H1 = ROWS + 1  # bits per column, sentinel included
MARKS = ("X", "O")
BOTTOM = sum(1 << (c * H1) for c in range(COLS))
BOARD = BOTTOM * ((1 << ROWS) - 1)
COLUMN_MASKS = tuple(((1 << ROWS) - 1) << (c * H1) for c in range(COLS))
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)  # search order: central columns take part in more lines
CENTRE_MASK = COLUMN_MASKS[3]
WIN = 1000  # a won position; minus the plies it takes, so quicker wins score higher
SEARCH_DEPTH = 4  # plies the bot looks ahead after its candidate move
TOP_ROW = sum(1 << (c * H1 + ROWS - 1) for c in range(COLS))
_COLUMN_OF = {str(c + 1): c for c in range(COLS)}
# Legal-move lists by which columns are full (the top-row bits), so listing moves is one lookup.
_LEGAL_BY_TOP = {
    top: tuple(str(c + 1) for c in range(COLS) if not top & (1 << (c * H1 + ROWS - 1)))
    for top in (sum(1 << (c * H1 + ROWS - 1) for c in range(COLS) if k >> c & 1) for k in range(1 << COLS))
}
_PREFIXES = ("column", "col", "c")


def has_four(bits: int) -> bool:
    """True if `bits` (one player's discs) hold four in a line in any direction."""
    m = bits & (bits >> 1)  # vertical
    if m & (m >> 2):
        return True
    m = bits & (bits >> H1)  # horizontal
    if m & (m >> 2 * H1):
        return True
    m = bits & (bits >> (H1 - 1))  # diagonal \
    if m & (m >> 2 * (H1 - 1)):
        return True
    m = bits & (bits >> (H1 + 1))  # diagonal /
    return bool(m & (m >> 2 * (H1 + 1)))


def winning_cells(pos: int, mask: int) -> int:
    """Empty cells (playable now or later) that would complete four for the owner of `pos`."""
    r = (pos << 1) & (pos << 2) & (pos << 3)  # vertical: three below
    for d in (H1, H1 - 1, H1 + 1):  # horizontal and both diagonals: every gap position
        p = (pos << d) & (pos << 2 * d)
        r |= p & (pos << 3 * d)
        r |= p & (pos >> d)
        p = (pos >> d) & (pos >> 2 * d)
        r |= p & (pos << d)
        r |= p & (pos >> 3 * d)
    return r & (BOARD ^ mask)


def _evaluate(cur: int, other: int, mask: int) -> int:
    """Heuristic value for the side to move: open threats and central discs."""
    mine = winning_cells(cur, mask).bit_count()
    theirs = winning_cells(other, mask).bit_count()
    return 4 * (mine - theirs) + (cur & CENTRE_MASK).bit_count() - (other & CENTRE_MASK).bit_count()


def _negamax(cur: int, other: int, mask: int, depth: int, alpha: int, beta: int) -> int:
    """Alpha-beta value of the position for `cur`, the side to move."""
    possible = (mask + BOTTOM) & BOARD
    if winning_cells(cur, mask) & possible:
        return WIN + depth
    if mask == BOARD:
        return 0
    if depth == 0:
        return _evaluate(cur, other, mask)
    threats = winning_cells(other, mask)
    forced = possible & threats
    if forced:
        if forced & (forced - 1):  # two cells to block at once: lost
            return -WIN - depth
        possible = forced
    possible &= ~(threats >> 1)  # never play right under the opponent's winning cell
    if not possible:
        return -WIN - depth
    best = -WIN - depth - 1
    for col in CENTRE_FIRST:
        move = possible & COLUMN_MASKS[col]
        if move:
            score = -_negamax(other, cur | move, mask | move, depth - 1, -beta, -alpha)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
    return best


class ConnectFour(NativeGame):
    """Connect Four for two players on a board of 6 rows and 7 columns.

    Player 0 plays X and moves first; player 1 plays O. On your turn you drop one of your discs
    into a column that is not full; it falls to the lowest empty cell of that column. Columns are
    numbered 1 to 7 from left to right, as shown above the board.

    A move is a column number, e.g. `4` for the centre column (`[4]` is accepted too).
    The first player to get four of their own discs in a line - horizontally, vertically or
    diagonally - wins. If all 42 cells fill up without a line of four, the game is a draw.
    Invalid moves (a full column, not a number 1-7) get feedback and two retries; a third invalid
    attempt in the same turn forfeits the game.
    """

    id: ClassVar[str] = "connect_four"
    name: ClassVar[str] = "Connect Four"
    STATE_FIELDS = ("bits", "heights", "current")

    def _setup(self) -> None:
        self.bits = [0, 0]  # one bitboard per player
        self.heights = [0] * COLS  # discs in each column
        self.current = 0

    def role(self, player: int) -> str:
        return f"Player {player} ({MARKS[player]})"

    def _current(self) -> list[int]:
        return [self.current]

    def _legal_moves(self, player: int) -> list[str]:
        bits = self.bits
        return list(_LEGAL_BY_TOP[(bits[0] | bits[1]) & TOP_ROW])

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        col = _COLUMN_OF.get(action)
        if col is None:
            col = _parse_column(action)
            if col is None:
                return None, f"'{action.strip()[:40]}' is not a column number 1-{COLS}"
        if self.heights[col] >= ROWS:
            return None, f"column {col + 1} is full"
        return str(col + 1), None

    def _apply(self, player: int, move: str) -> None:
        col = int(move) - 1
        height = self.heights[col]
        bits = self.bits[player] | (1 << (col * H1 + height))
        self.bits[player] = bits
        self.heights[col] = height + 1
        self.log.append(f"{MARKS[player]} dropped a disc in column {move}")
        if has_four(bits):
            scores = [0.0, 0.0]
            scores[player] = 1.0
            self.finish(scores, f"{MARKS[player]} connected four")
        elif self.bits[0] | self.bits[1] == BOARD:
            self.finish([0.5, 0.5], "the board is full")
        else:
            self.current = 1 - player

    def _render(self, player: int) -> str:
        x_bits, o_bits = self.bits
        rows = [" " + " ".join(str(c + 1) for c in range(COLS))]
        for row in range(ROWS - 1, -1, -1):
            cells = []
            for col in range(COLS):
                bit = 1 << (col * H1 + row)
                cells.append("X" if x_bits & bit else "O" if o_bits & bit else ".")
            rows.append(" " + " ".join(cells))
        lines = [
            f"You are {MARKS[player]}. Drop a disc by naming a column 1-{COLS}; '.' is an empty cell.",
            "\n".join(rows),
        ]
        full = [str(c + 1) for c in range(COLS) if self.heights[c] >= ROWS]
        if full:
            lines.append(f"Full columns: {', '.join(full)}.")
        if self.log:
            lines.append(f"Last move: {self.log[-1]}.")
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Win now if possible, else block, else never set up the opponent's win; then a
        depth-limited alpha-beta search on threats and central discs, ties broken centre-first
        and then at random."""
        if self.finished:
            raise GameError(f"{self.id}: the game is over")
        cur, other = self.bits[player], self.bits[1 - player]
        mask = cur | other
        playable = [c for c in range(COLS) if self.heights[c] < ROWS]
        cell = {c: 1 << (c * H1 + self.heights[c]) for c in playable}
        mine = winning_cells(cur, mask)
        wins = [c for c in playable if cell[c] & mine]
        if wins:
            return str(_central(wins, rng) + 1)
        threats = winning_cells(other, mask)
        blocks = [c for c in playable if cell[c] & threats]
        if blocks:
            return str(_central(blocks, rng) + 1)
        safe = [c for c in playable if not (cell[c] << 1) & threats] or playable
        scores = {}
        for c in safe:
            move = cell[c]
            scores[c] = -_negamax(other, cur | move, mask | move, SEARCH_DEPTH, -WIN - 100, WIN + 100)
        best = max(scores.values())
        return str(_central([c for c in safe if scores[c] == best], rng) + 1)


def _central(columns: list[int], rng: random.Random) -> int:
    """The most central of `columns`; a random one of the two when two are equally central."""
    nearest = min(abs(c - 3) for c in columns)
    return rng.choice([c for c in columns if abs(c - 3) == nearest])


def _parse_column(action: str) -> int | None:
    """Column index from tolerant text ('[4]', ' 4 ', 'col 4', 'column 4'), or None."""
    text = action.strip()
    if len(text) > 24:
        return None
    text = text.strip("[]()' \"`").strip().lower()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :].strip(" :.")
            break
    return _COLUMN_OF.get(text)
