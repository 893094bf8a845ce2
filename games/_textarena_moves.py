"""Move candidates for TextArena games, which rarely list their legal moves.

Two kinds of helpers, both keyed by env id:
- LEGAL_MOVES: exact legal moves read from the env's state, for the games where that is a few
  lines (also used by bench/engine.py's raw TextArena loop). No trial needed.
- CANDIDATES: a superset of well-formed actions (every card position, every free cell, every
  from-to square of one's own pieces, ...). The adapter keeps the ones TextArena itself accepts
  by stepping a copy of the env, so legality is always TextArena's, never re-implemented here.
  `exhaustive=True` means the candidates cover every legal move (then the filtered list is the
  game's legal_moves); otherwise they are only a sample for random play (free text, bet sizes).
When no helper exists, `listed_moves` reads a move list the game printed to the player
("Available Moves: [a2 b4], ...", "Valid moves: '[2, 3]'", "Your remaining hand: '[A]' '[2]'").
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

Env = Any
Lister = Callable[[Env, int], list[str]]
Candidates = Callable[[Env, int, random.Random], tuple[list[str], bool]]


# ---- exact, from state ----------------------------------------------------------------------
def _board_cells(env: Env, player: int) -> list[str]:
    board = env.state.game_state["board"]
    size = len(board)
    return [f"[{r * size + c}]" for r in range(size) for c in range(size) if board[r][c] == ""]


def _connect_four(env: Env, player: int) -> list[str]:
    board = env.state.game_state["board"]
    return [f"[col {c}]" for c in range(len(board[0])) if board[0][c] == "."]


def _kuhn(env: Env, player: int) -> list[str]:
    tree = env.state.game_state.get("current_legal_action_tree")
    return [f"[{k}]" for k in tree] if isinstance(tree, dict) else []


def _nim(env: Env, player: int) -> list[str]:
    piles = env.state.game_state["piles"]
    return [f"[{i} {q}]" for i, size in enumerate(piles) for q in range(1, size + 1)]


def _battleship(env: Env, player: int) -> list[str]:
    size = env.grid_size
    fired = env.state.game_state["tracking_board"][player]
    return [f"[{chr(65 + r)}{c}]" for r in range(size) for c in range(size) if fired[r][c] == "~"]


def _liars_dice(env: Env, player: int) -> list[str]:
    gs = env.state.game_state
    bid = gs["current_bid"]
    total = sum(gs["remaining_dice"].values())
    moves = ["[Call]"] if gs["last_bidder_id"] is not None and bid["quantity"] > 0 else []
    for quantity in range(max(1, bid["quantity"]), total + 1):
        for face in range(max(1, bid["face_value"]), 7):
            if (quantity, face) != (bid["quantity"], bid["face_value"]):
                moves.append(f"[Bid: {quantity}, {face}]")
    return moves


def _snake(env: Env, player: int) -> list[str]:
    return ["[up]", "[down]", "[left]", "[right]"]


LEGAL_MOVES: dict[str, Lister] = {
    "TicTacToe-v0": _board_cells,
    "ThreePlayerTicTacToe-v0": _board_cells,
    "ConnectFour-v0": _connect_four,
    "KuhnPoker-v0": _kuhn,
    "Nim-v0": _nim,
    "Battleship-v0": _battleship,
    "LiarsDice-v0": _liars_dice,
    "Snake-v0": _snake,
}


# ---- candidates, filtered by TextArena itself --------------------------------------------------
def _own_squares(board: list[list[str]], mark: str) -> list[tuple[int, int]]:
    return [(r, c) for r, row in enumerate(board) for c, cell in enumerate(row) if cell == mark]


def _on(board: list[list[str]], r: int, c: int) -> bool:
    return 0 <= r < len(board) and 0 <= c < len(board[0])


def _alquerque(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    from textarena.envs.Alquerque.env import rc_to_coord

    board = env.state.game_state["board"]
    moves = []
    for r, c in _own_squares(board, "R" if player == 0 else "B"):
        for dr in range(-2, 3):
            for dc in range(-2, 3):
                if (dr or dc) and _on(board, r + dr, c + dc) and board[r + dr][c + dc] in ("", "."):
                    moves.append(f"[{rc_to_coord(r, c)} {rc_to_coord(r + dr, c + dc)}]")
    return moves, True


def _breakthrough(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    board = env.state.game_state["board"]
    step = 1 if player == 0 else -1
    moves = []
    for r, c in _own_squares(board, "W" if player == 0 else "B"):
        for dc in (-1, 0, 1):
            if _on(board, r + step, c + dc):
                moves.append(f"[{chr(97 + c)}{r + 1}{chr(97 + c + dc)}{r + step + 1}]")
    return moves, True


def _lines_of_action(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    board = env.state.game_state["board"]
    mine = "O" if player == 0 else "X"
    moves = []
    for r, c in _own_squares(board, mine):
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            # the move distance is the number of pieces on the whole line through the piece
            line = [(r + k * dr, c + k * dc) for k in range(-7, 8) if _on(board, r + k * dr, c + k * dc)]
            distance = sum(1 for y, x in line if board[y][x])
            for sign in (1, -1):
                y, x = r + sign * distance * dr, c + sign * distance * dc
                if _on(board, y, x) and board[y][x] != mine:
                    moves.append(f"[{env.rc_to_coord(r, c)}{env.rc_to_coord(y, x)}]")
    return moves, True


def _ultimate_tictactoe(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    board = env.state.game_state["board"]
    return [f"[{m} {n}]" for m in range(9) for n in range(9) if board[m][n // 3][n % 3] == " "], True


def _memory(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    gs = env.state.game_state
    size = len(gs["board"])
    matched = gs["matched_positions"]
    cells = [(r, c) for r in range(size) for c in range(size) if (r, c) not in matched]
    pairs = [(a, b) for i, a in enumerate(cells) for b in cells[i + 1 :]]
    return [f"[{a[0]} {a[1]} {b[0]} {b[1]}]" for a, b in pairs], True


def _chopsticks(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    total = sum(env.state.game_state["hands"][player])
    attacks = [f"[attack {m} {o}]" for m in (0, 1) for o in (0, 1)]
    return attacks + [f"[split {left} {total - left}]" for left in range(total + 1)], True


def _trick_cards(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    hand = env.state.game_state["players"][player]["hand"]
    return [f"[play {i}]" for i in range(1, len(hand) + 1)], True


def _poker_like(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    sizes = sorted({rng.randint(1, 20), rng.randint(20, 100), rng.randint(100, 400)})
    moves = ["[Check]", "[Call]", "[Fold]"]
    moves += [f"[Bet {n}]" for n in sizes] + [f"[Raise {n}]" for n in sizes]
    return moves, False


def _two_thirds(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    return [f"[{rng.randint(0, 100)}]" for _ in range(4)], False


def _ultimatum(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    return [f"[Offer: ${rng.randint(0, 50)}]", "[Accept]", "[Reject]"], False


def _new_recruit(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    letters = "".join(rng.choice("ABCDE") for _ in range(8))
    return [f"I propose this. [Propose] {letters}", "[Accept]", "[Reject]"], False


def _two_dollar(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    return [f"This is fair. [Propose] ${rng.randint(0, 200) / 100:.2f}", "[Accept]", "[Reject]"], False


def _blotto(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    fields = list(getattr(env, "field_names", None) or "ABC")
    units = int(getattr(env, "num_total_units", 20))
    cuts = sorted(rng.randint(0, units) for _ in range(len(fields) - 1))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, units])]
    return ["[" + " ".join(f"{f}{n}" for f, n in zip(fields, parts)) + "]"], False


def _tak(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    board = env.state.game_state["board"]
    empty = [(r, c) for r, row in enumerate(board) for c, stack in enumerate(row) if not stack]
    return [f"[place () {{({r},{c}): [F{player}]}}]" for r, c in empty], False


def _talk_then_decide(env: Env, player: int, rng: random.Random) -> tuple[list[str], bool]:
    """Communication rounds take `{message}`; decision rounds a bracketed choice."""
    return ["{I suggest we all cooperate.}", "[E]", "[S]", *(f"[{n}]" for n in range(0, 21, 5))], False


CANDIDATES: dict[str, Candidates] = {
    "Alquerque-v0": _alquerque,
    "Breakthrough-v0": _breakthrough,
    "LinesOfAction-v0": _lines_of_action,
    "UltimateTicTacToe-v0": _ultimate_tictactoe,
    "MemoryGame-v0": _memory,
    "Chopsticks-v0": _chopsticks,
    "Briscola-v0": _trick_cards,
    "GermanWhist-v0": _trick_cards,
    "Poker-v0": _poker_like,
    "IndianPoker-v0": _poker_like,
    "IteratedTwoThirdsAverage-v0": _two_thirds,
    "IteratedUltimatumGame-v0": _ultimatum,
    "NewRecruit-v0": _new_recruit,
    "TwoDollar-v0": _two_dollar,
    "ColonelBlotto-v0": _blotto,
    "Tak-v0": _tak,
    "PublicGoodsGame-v0": _talk_then_decide,
    "MarketEntryGame-v0": _talk_then_decide,
}


# ---- moves the game printed ---------------------------------------------------------------------
_LIST_LINE = re.compile(
    r"(?:available moves|valid moves|legal moves|your options|remaining hand|remaining money cards)\s*:?(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
BRACKETED = re.compile(r"\[([^\[\]\n]{1,40})\]")


def listed_moves(messages: list[str]) -> list[str] | None:
    """The move list in the latest message that has one (deduplicated, in order), else None."""
    for text in reversed(messages):
        found = _LIST_LINE.findall(text)
        if found:
            moves = [f"[{m}]" for m in BRACKETED.findall(found[-1])]
            if moves:
                return list(dict.fromkeys(moves))
    return None


def mentioned_actions(messages: list[str]) -> list[str]:
    """Bracketed actions the game mentioned lately, plus a few generic replies, for free play."""
    found = [f"[{m}]" for m in BRACKETED.findall(" ".join(messages))]
    generic = ["[accept]", "[pass]", "[0]", "[1]", "{Hello.}", "Hello."]
    return list(dict.fromkeys(found + generic))
