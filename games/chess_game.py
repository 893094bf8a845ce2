"""Chess, with rules, move generation and notation from python-chess."""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

import chess

from arena.game import GameError, NativeGame
from arena.game_options import OptionSchema, int_option

_MOVE_TEXT = re.compile(r"[A-Za-z0-9=+#\-]{2,8}")


class Chess(NativeGame):
    """Chess for two players under the standard FIDE rules.

    Player 0 plays White and moves first; player 1 plays Black. Your view shows the board from your
    side (White's pieces are upper-case, Black's lower-case, '.' is empty), the position in FEN, the
    recent moves and the list of legal moves in UCI notation.

    A move is written in UCI (`e2e4`, `g1f3`, promotion `e7e8q`) or SAN (`e4`, `Nf3`, `O-O`, `exd5`,
    `e8=Q`); brackets are fine: `[e2e4]`.
    The game ends with checkmate (the mated side loses), stalemate, insufficient material, the
    75-move rule or fivefold repetition (draws). To keep games finite for models that shuffle
    pieces forever, the game is also drawn after `max_plies` half-moves (default 200).
    Invalid moves get feedback and two retries; a third invalid attempt in the same turn forfeits.
    """

    id: ClassVar[str] = "chess"
    name: ClassVar[str] = "Chess"
    STATE_FIELDS = ("start_fen", "moves")

    OPTIONS = OptionSchema((int_option("max_plies", 200, 1, 5000, "half-moves before the game is drawn"),))

    def _setup(self) -> None:
        self.start_fen = chess.STARTING_FEN
        self.moves: list[str] = []
        self._board = chess.Board()
        self._pushed: list[str] = []  # the moves on self._board's stack, to restore states fast
        self._board_start = self.start_fen

    # The python-chess board is derived state: rebuilt from the start position and the move list,
    # which also restores the repetition history that FEN alone would lose. Restores usually
    # revisit a nearby position (replays, probes of every legal move), so the board is brought to
    # the target by popping back to the common prefix and pushing the rest, not rebuilt.
    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        board: chess.Board | None = getattr(self, "_board", None)
        pushed: list[str] = getattr(self, "_pushed", [])
        try:
            if board is None or getattr(self, "_board_start", None) != self.start_fen:
                board, pushed = chess.Board(self.start_fen), []
            common = 0
            for have, want in zip(pushed, self.moves):
                if have != want:
                    break
                common += 1
            for _ in range(len(pushed) - common):
                board.pop()
            for uci in self.moves[common:]:
                move = chess.Move.from_uci(uci)
                if not board.is_legal(move):  # push() would accept it and corrupt the position
                    raise ValueError(f"illegal move {uci} in the saved move list")
                board.push(move)
        except ValueError as exc:
            self._board, self._pushed, self._board_start = chess.Board(), [], chess.STARTING_FEN
            raise GameError(f"chess: bad saved state: {str(exc)[:80]}") from exc
        self._board, self._pushed, self._board_start = board, list(self.moves), self.start_fen

    def role(self, player: int) -> str:
        return f"Player {player} ({'White' if player == 0 else 'Black'})"

    def _current(self) -> list[int]:
        return [0 if self._board.turn == chess.WHITE else 1]

    def _legal_moves(self, player: int) -> list[str]:
        return [move.uci() for move in self._board.legal_moves]

    def move_notation(self, player: int, notation: str) -> list[str] | None:
        """SAN (`Nf3`, `O-O`, `exd5`), which `_check` accepts as well as UCI, in legal-move order."""
        if notation != "san" or self.finished:
            return None
        return [self._board.san(move) for move in self._board.legal_moves]

    def _check(self, player: int, action: str) -> tuple[str | None, str | None]:
        text = action.strip().strip("[]").strip()
        if not text or len(text) > 12 or not _MOVE_TEXT.fullmatch(text):
            return None, f"'{action.strip()[:40]}' is not a move in UCI (e2e4) or SAN (Nf3) notation"
        try:
            move = chess.Move.from_uci(text.lower())
            if move in self._board.legal_moves:
                return move.uci(), None
        except (ValueError, chess.InvalidMoveError):
            pass
        try:
            return self._board.parse_san(text).uci(), None
        except (ValueError, chess.IllegalMoveError, chess.AmbiguousMoveError, chess.InvalidMoveError) as exc:
            kind = "ambiguous" if isinstance(exc, chess.AmbiguousMoveError) else "not legal here"
            return None, f"{text} is {kind}"

    def _apply(self, player: int, move: str) -> None:
        parsed = chess.Move.from_uci(move)
        san = self._board.san(parsed)
        self._board.push(parsed)
        self.moves.append(move)
        self._pushed.append(move)
        self.log.append(f"{'White' if player == 0 else 'Black'} played {san} ({move})")
        outcome = self._board.outcome(claim_draw=False)
        if outcome is not None:
            if outcome.winner is None:
                self.finish([0.5, 0.5], f"draw by {outcome.termination.name.lower().replace('_', ' ')}")
            else:
                scores = [1.0, 0.0] if outcome.winner == chess.WHITE else [0.0, 1.0]
                self.finish(scores, f"{'White' if outcome.winner == chess.WHITE else 'Black'} wins by checkmate")
        elif len(self.moves) >= self.options["max_plies"]:
            self.finish([0.5, 0.5], f"draw: {self.options['max_plies']} half-moves played")

    def _render(self, player: int) -> str:
        board = str(self._board if player == 0 else self._board.transform(chess.flip_vertical).transform(chess.flip_horizontal))
        files = "a b c d e f g h" if player == 0 else "h g f e d c b a"
        ranks = range(8, 0, -1) if player == 0 else range(1, 9)
        rows = [f"{r} {line}" for r, line in zip(ranks, board.splitlines())]
        lines = [f"You play {'White (upper-case)' if player == 0 else 'Black (lower-case)'}.", *rows, f"  {files}", f"FEN: {self._board.fen()}"]
        if self.log:
            lines.append("Recent moves: " + "; ".join(self.log[-6:]))
        if self._board.is_check() and not self.finished:
            lines.append("Check!")
        return "\n".join(lines)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """Two-ply material search: mate in one if any; else the move whose best reply (for the
        opponent) leaves the best material balance, random among equals, skipping moves that
        allow mate in one."""
        board = self._board
        me = board.turn
        scored: dict[int, list[chess.Move]] = {}
        for move in list(board.legal_moves):
            board.push(move)
            if board.is_checkmate():
                board.pop()
                return move.uci()
            # The reply is scored without pushing it: the material it wins is what it captures
            # (plus a promotion), which keeps a bot move around a millisecond.
            gains = [_reply_gain(board, reply) for reply in board.legal_moves]
            value = _material(board, me) - max(gains) if gains else 0  # no reply: stalemate, a draw
            board.pop()
            scored.setdefault(value, []).append(move)
        for value in sorted(scored, reverse=True):
            tier = scored[value]
            rng.shuffle(tier)
            for move in tier:
                if not _allows_mate_in_one(board, move):
                    return move.uci()
        if not scored:
            raise GameError("chess: no legal move for the bot")
        return rng.choice(scored[max(scored)]).uci()  # every move loses to mate: any best one


PIECE_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def _material(board: chess.Board, color: chess.Color) -> int:
    """Material balance for `color`: pawns 1, knights and bishops 3, rooks 5, queens 9."""
    mine, theirs = board.occupied_co[color], board.occupied_co[not color]
    total = 0
    for mask, value in ((board.pawns, 1), (board.knights, 3), (board.bishops, 3), (board.rooks, 5), (board.queens, 9)):
        total += value * (chess.popcount(mask & mine) - chess.popcount(mask & theirs))
    return total


def _reply_gain(board: chess.Board, move: chess.Move) -> int:
    """Material the side to move wins with `move`: what it captures plus a promotion's gain."""
    captured = chess.PAWN if board.is_en_passant(move) else board.piece_type_at(move.to_square)
    gain = PIECE_VALUES[captured] if captured else 0
    if move.promotion:
        gain += PIECE_VALUES[move.promotion] - 1
    return gain


def _allows_mate_in_one(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        for reply in list(board.legal_moves):
            board.push(reply)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return True
        return False
    finally:
        board.pop()
