"""Which reading of a reply counts as its move (spec parameter `parser=`).

- `strict` (default): the bracketed answer the prompt asks for, or the tool call / JSON object
  (parsing.py).
- `fuzzy`: also the last legal move mentioned anywhere in the reply (parse method `mention`).
  `parse=lenient`, the older name, is an alias, and `parse=strict` names the default.
- `extractor:SPEC`: where the strict reading finds no legal move, a second model (any LLM policy
  spec: `extractor:local`, `extractor:openai:gpt-4o-mini`) is asked which move the reply chose; its
  answer counts only when it names a legal move (parse method `extracted`), as Game Arena's
  LLMParser behind its rule-based parser. The extractor sees the reply's answer, never its
  reasoning, and the legal moves; it answers greedily (temperature 0) unless its spec sets a
  temperature. Its spec's own parameters are separated by `;`, since `,` ends the outer spec's
  parameter: `parser=extractor:openai:local;base_url=http://127.0.0.1:8000/v1`.

A `mention` or `extracted` move is played, but it was not stated as asked: leaderboards, exports
and rewards count it as invalid (arena.match.LENIENT_PARSES). The extractor's call is recorded in
the turn's meta (`extractor`: its answer, the move it named, its tokens and cost), apart from the
player's own tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.llm.parsing import ParsedMove, parse_move, parse_structured
from arena.llm.prompting import Message, Mode
from arena.policy import MoveRequest, PolicyFailure, PolicySpecError, make_policy

if TYPE_CHECKING:
    from arena.llm.llm_policy import Completion, LLMPolicy

PARSERS = ("strict", "fuzzy", "extractor:SPEC")
LEGACY_PARSE = {"strict": "strict", "lenient": "fuzzy"}  # parse=, the older parameter
LLM_KINDS = ("openai", "litellm", "local", "hf")
EXTRACTOR_REPLY_CHARS = 4000  # of the reply shown to the extractor
EXTRACTOR_ANSWER_CHARS = 200  # of the extractor's answer kept in the record


@dataclass(frozen=True)
class ParserChoice:
    """The parser a spec names (text only: the extractor is built by `MoveParser`)."""

    kind: str = "strict"  # strict | fuzzy | extractor
    extractor_spec: str = ""  # extractor: the second model's spec, `;` already turned into `,`

    @property
    def name(self) -> str:
        return f"extractor:{self.extractor_spec.replace(',', ';')}" if self.kind == "extractor" else self.kind

    @classmethod
    def parse(cls, text: str) -> "ParserChoice":
        """`strict`, `fuzzy` or `extractor:SPEC`; ValueError names the accepted forms."""
        value = text.strip()
        head, sep, rest = value.partition(":")
        if head.lower() in ("strict", "fuzzy") and not sep:
            return cls(head.lower())
        if head.lower() == "extractor" and rest.strip():
            spec = ",".join(part.strip() for part in rest.split(";"))
            kind = spec.partition(",")[0].partition(":")[0].strip().lower()
            if kind not in LLM_KINDS:
                raise ValueError(f"parser=extractor:SPEC needs an LLM policy spec ({', '.join(LLM_KINDS)}), not {rest!r}")
            return cls("extractor", spec)
        raise ValueError(f"parser must be one of {', '.join(PARSERS)}, not {text!r}")


class MoveParser:
    """Reads the move out of one answer, as the spec's parser says."""

    def __init__(self, choice: ParserChoice):
        self.choice = choice
        self.extractor: LLMPolicy | None = None
        if choice.kind == "extractor":
            self.extractor = _make_extractor(choice.extractor_spec)

    @property
    def fuzzy(self) -> bool:
        return self.choice.kind == "fuzzy"

    async def read(self, completion: "Completion", mode: Mode, request: MoveRequest, seed: int) -> tuple[ParsedMove, dict[str, Any]]:
        """The move in `completion` (its answer only: reasoning is set apart before), and what
        the turn's meta should keep about how it was found."""
        legal = request.legal_moves
        if mode is Mode.CHOICE:
            return ParsedMove(completion.content or "", "choice"), {}  # one of the legal moves by construction
        if mode is Mode.TEXT:
            parsed = parse_move(completion.content or "", legal, lenient=self.fuzzy)
        else:
            parsed = parse_structured(completion.tool_arguments, completion.content, legal, lenient=self.fuzzy)
        if self.extractor is None or not legal or parsed.matched:
            return parsed, {}
        reply = " ".join(s for s in (completion.content, completion.tool_arguments) if s).strip()
        if not reply:
            return parsed, {}
        return await self._extract(reply, request, legal, parsed, seed)

    async def _extract(self, reply: str, request: MoveRequest, legal: list[str], parsed: ParsedMove, seed: int) -> tuple[ParsedMove, dict[str, Any]]:
        assert self.extractor is not None
        record: dict[str, Any] = {"spec": self.choice.extractor_spec}
        try:
            answer = await self.extractor.complete_text(extraction_messages(request.game_name, reply, legal), seed)
        except PolicyFailure as exc:
            record["error"] = str(exc)[:300]
            return parsed, {"extractor": record}
        found = parse_move(answer.content or "", legal)
        record.update({
            "answer": (answer.content or "")[:EXTRACTOR_ANSWER_CHARS],
            "move": found.action if found.matched else None,
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "cost_usd": answer.cost_usd,
        })
        if found.matched:
            return ParsedMove(found.action, "extracted"), {"extractor": record}
        return parsed, {"extractor": record}

    async def close(self) -> None:
        if self.extractor is not None:
            await self.extractor.close()


def extraction_messages(game_name: str, reply: str, legal: list[str]) -> list[Message]:
    """The extractor's question: which legal move did this reply choose?"""
    system = (
        f"You read one reply of a player in the game {game_name} and report the move the player chose. "
        "Do not choose a move yourself. The legal moves are: " + ", ".join(legal) + ". "
        f"Answer with the chosen move exactly as listed, in square brackets, for example [{legal[0]}]; "
        "answer [none] when the reply chooses no legal move."
    )
    user = "The player's reply:\n\n" + reply[:EXTRACTOR_REPLY_CHARS]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _make_extractor(spec: str) -> "LLMPolicy":
    from arena.llm.llm_policy import LLMPolicy

    params = dict(part.partition("=")[::2] for part in spec.split(",")[1:])
    if "temperature" not in params:
        spec += ",temperature=0"  # an extractor reads; it should not draw
    policy = make_policy(spec)
    if not isinstance(policy, LLMPolicy):  # pragma: no cover - ParserChoice admits LLM kinds only
        raise PolicySpecError(f"parser=extractor:{spec}: the extractor must be an LLM policy ({', '.join(LLM_KINDS)})")
    return policy
