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
- `private-last`: the seat's private information (its card, dice or values: the request's
  `private` phrases, which only this seat's view holds) restated as the last line of every user
  turn the move sends (a rethink round's and the length retry's too). It joins any of the above (`san+private-last`). Why: a small model decides at
  the answer's first token, and what it read hundreds of tokens earlier barely reaches it there.
  Measured on the shipped SmolLM2-135M (bench/experiments/card_gradient_cosine.py, 2026-11-28): the
  LoRA gradients of one move at two Leduc information sets that differ only in the private card
  have a median cosine of 0.9996 with the default prompt and 0.9932 with the card restated last,
  so 16 times more of an update (1 - cosine: 0.006766 against 0.000426) can tell the cards
  apart. Restated is what the game names as the seat's secrets (`Game.secrets`); where it names none (a game without private
  information, or the TextArena adapter past a game's first round) the turn is asked as by
  `default`.
Which notations a game has is the game's to say (`Game.move_notation`); chess is the one that
has two.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from arena.policy import MoveRequest

NOTATIONS = ("san",)  # second notations games may offer (Game.move_notation)
NO_LEGAL_MOVES = "no-legal-moves"
PRIVATE_LAST = "private-last"
PROMPTS = ("default", NO_LEGAL_MOVES, "san", PRIVATE_LAST)  # the last three combine with `+`


@dataclass(frozen=True)
class PromptVariant:
    list_moves: bool = True
    notation: str | None = None  # a second notation to list and read moves in
    private_last: bool = False  # the seat's private information restated as the turn's last line

    @property
    def name(self) -> str:
        parts = [NO_LEGAL_MOVES] if not self.list_moves else []
        parts += [self.notation] if self.notation else []
        parts += [PRIVATE_LAST] if self.private_last else []
        return "+".join(parts) or "default"

    @classmethod
    def parse(cls, text: str) -> "PromptVariant":
        """`default`, or any of `no-legal-moves`, `san`, `private-last` joined by `+`, each at
        most once; ValueError names them."""
        parts = [p.strip().lower() for p in text.split("+")]
        list_moves, notation, private_last = True, None, False
        for part in parts:
            if part == NO_LEGAL_MOVES and list_moves:
                list_moves = False
            elif part in NOTATIONS and notation is None:
                notation = part
            elif part == PRIVATE_LAST and not private_last:
                private_last = True
            elif part == "default" and len(parts) == 1:
                pass
            else:
                raise ValueError(f"prompt must be {', '.join(PROMPTS[:-1])} or {PROMPTS[-1]} (the last three joined by + as needed), not {text!r}")
        return cls(list_moves, notation, private_last)


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
