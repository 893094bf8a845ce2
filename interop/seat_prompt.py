"""The text an LLM environment shows one seat, built from a `SeatView` with the league's own
prompt pieces (rules, legal-moves line, answer format, rethinking note) and the league's own
reply parser, so a model trained in GEM or verifiers meets the prompts and parsing it meets in
`arena play` and leagues."""

from __future__ import annotations

import inspect
from typing import Callable

from arena.llm.parsing import ParsedMove, parse_move
from arena.llm.prompting import Mode, answer_format, legal_moves_line, rethinking_note
from arena.seat_environment import SeatView


def intro(view: SeatView, game_name: str) -> str:
    """What the model reads once, before its first turn: the game, its seat and the rules."""
    role = view.role or f"Player {view.player}"
    rules = inspect.cleandoc(view.rules) if view.rules else game_name
    enumerable = view.legal_moves is not None
    return "\n".join(
        [
            f"You are playing the game {game_name} as {role}.",
            "",
            "Rules:",
            rules,
            "",
            "Each turn you see the game from your side" + (" and the list of legal moves." if enumerable else "."),
        ]
    )


def text_answer(legal_moves: list[str] | None) -> str:
    """How a text-mode reply states its move (the league's own sentence)."""
    return answer_format(Mode.TEXT, legal_moves)


def turn_text(view: SeatView, answer: Callable[[list[str] | None], str] = text_answer) -> str:
    """One turn: the game's feedback on a rejected reply, the view, the legal moves, how to answer
    (`answer`; a tool-calling environment says to call its tool). Once the episode is over: the
    final view and the outcome."""
    if view.done:
        outcome = view.outcome or {}
        reason = outcome.get("reason") or view.status
        return f"{view.text.strip()}\n\nThe game is over ({reason}). Your score: {view.reward:g}."
    parts: list[str] = []
    if view.feedback and view.attempt > 0:
        parts.append(rethinking_note(view.feedback))
    parts.append(view.text.strip())
    if view.legal_moves is not None:
        parts.append(legal_moves_line(view.legal_moves))
    parts.append(answer(view.legal_moves))
    return "\n\n".join(parts)


def first_text(view: SeatView, game_name: str) -> str:
    return intro(view, game_name) + "\n\n" + turn_text(view)


def parse_reply(reply: str, view: SeatView) -> ParsedMove:
    """The move in a model's reply, found as the league's text-mode LLM policy finds it."""
    return parse_move(reply, view.legal_moves)


def reply_fields(reply: str, parsed: ParsedMove) -> dict[str, str | None]:
    """`SeatEnvironment.step`'s keywords for a parsed reply: the reply as written, the parse method,
    and the format feedback when no move was found (the game then counts an invalid attempt, as a
    league does, instead of receiving the unformatted text as a move)."""
    return {"raw": reply, "parse": parsed.method, "rejection": parsed.rejection}
