"""What the prompt shows around the game's own view (spec parameter `prompt=`).

- `default`: the legal moves listed as the game writes them.
- `no-legal-moves`: no list; the model finds its moves from the rules and its view, as Game Arena's
  NO_LEGAL_ACTIONS prompts ask. The game's own view still shows what it shows (a board's free cells,
  a hand of cards). Text mode only: tools and json enumerate the moves in their schema, and choice
  scores them.
- `san`: a game that also accepts a second notation lists its moves in it: chess lists SAN (`Nf3`,
  `O-O`, `exd5`) instead of UCI (`g1f3`). The answer is read against the SAN list and played as the
  game's own move, so records and ratings are unchanged. A game with one notation is asked as by
  `default` (the turn's meta `notation` is set only where the SAN list was shown).
- `no-legal-moves+san`: both: asks for SAN without listing moves (Game Arena's chess prompt).
Which notations a game has is the game's to say (`Game.move_notation`); chess is the one that
has two.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from arena.policy import MoveRequest

NOTATIONS = ("san",)  # second notations games may offer (Game.move_notation)
NO_LEGAL_MOVES = "no-legal-moves"
PROMPTS = ("default", NO_LEGAL_MOVES, "san", f"{NO_LEGAL_MOVES}+san")


@dataclass(frozen=True)
class PromptVariant:
    list_moves: bool = True
    notation: str | None = None  # a second notation to list and read moves in

    @property
    def name(self) -> str:
        parts = ([] if self.list_moves else [NO_LEGAL_MOVES]) + ([self.notation] if self.notation else [])
        return "+".join(parts) or "default"

    @classmethod
    def parse(cls, text: str) -> "PromptVariant":
        """`default`, `no-legal-moves`, `san`, or the last two joined by `+`; ValueError names them."""
        parts = [p.strip().lower() for p in text.split("+")]
        list_moves, notation = True, None
        for part in parts:
            if part == NO_LEGAL_MOVES and list_moves:
                list_moves = False
            elif part in NOTATIONS and notation is None:
                notation = part
            elif part == "default" and len(parts) == 1:
                pass
            else:
                raise ValueError(f"prompt must be one of {', '.join(PROMPTS)}, not {text!r}")
        return cls(list_moves, notation)


@dataclass
class PromptView:
    """A move request as a variant shows it: its legal moves in the shown notation, and the way
    back to the game's own names for the move that is played."""

    request: MoveRequest
    variant: PromptVariant  # as applied: no notation where the game has none by that name
    to_game: dict[str, str]  # shown name -> the game's name

    def game_move(self, action: str) -> str:
        return self.to_game.get(action, action)


def view(variant: PromptVariant, request: MoveRequest) -> PromptView:
    """`request` as `variant` shows it."""
    legal = request.legal_moves
    names = None
    if variant.notation and legal and request.move_notation is not None:
        names = request.move_notation(variant.notation)
    if not names or len(names) != len(legal or []):
        return PromptView(request, dataclasses.replace(variant, notation=None), {})
    shown = dataclasses.replace(request, observation=dataclasses.replace(request.observation, legal_moves=list(names)))
    return PromptView(shown, variant, dict(zip(names, legal or [])))
