"""Chat prompts for LLM players, built only from a MoveRequest (so never from another seat's view).

The messages are:
  system     the game's rules, the player's role and the stated answer format
  history    ("history" mode) this seat's earlier observations and replies as user/assistant turns,
             with the game's feedback in front of the next user turn when a reply was rejected
  current    the observation, the legal moves when enumerable, and the answer format again; on a
             retry it opens with the "rethinking" note carrying the game's feedback

"state" mode sends only the current observation (plus, on a retry, the rejected reply and the
game's feedback). Prompts are kept within a token budget by dropping the oldest history first.
A prompt variant (prompt_variants.py) may leave the legal moves out, list them in the game's other
notation (the request it is given already holds the moves as shown), or restate the seat's private
information as the turn's last line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

from arena.llm.prompt_variants import PromptVariant
from arena.policy import Exchange, MoveRequest

Message = dict[str, str]
TokenCounter = Callable[[list[Message]], int]

MAX_LISTED_MOVES = 300  # beyond this the prompt names a sample; the game still validates
MAX_QUOTED_REPLY_CHARS = 600  # a rejected reply quoted back to the model
MAX_HISTORY_REPLY_CHARS = 2000  # one earlier reply as an assistant turn
TOOL_NAME = "make_move"
DEFAULT_VARIANT = PromptVariant()


class Mode(str, enum.Enum):
    """How the model states its move."""

    TEXT = "text"  # free text; the move is parsed out of it
    TOOLS = "tools"  # a function call whose argument schema enumerates the legal moves
    JSON = "json"  # structured output: {"move": <one of the legal moves>}
    CHOICE = "choice"  # the bare move as the whole reply, scored among the legal moves (local models)


class ObsMode(str, enum.Enum):
    """How much of the match the model sees."""

    HISTORY = "history"  # every earlier ask and answer of this seat in this match
    STATE = "state"  # the current observation only
    # local models: the seat's chat exactly as the model saw and wrote it, as token ids that only
    # grow (arena.llm.token_chats); elsewhere the same as history
    CHAT = "chat"


class PromptTooLarge(Exception):
    """Even with no history and shortened rules the prompt exceeds the budget."""


def estimate_tokens(messages: list[Message]) -> int:
    """A provider-neutral, deliberately high token estimate (~3 characters per token + framing).

    Remote tokenizers are not available offline; over-estimating only trims history a bit early.
    """
    return sum(len(m["content"]) // 3 + 8 for m in messages) + 4


def answer_format(mode: Mode, legal_moves: list[str] | None, variant: PromptVariant = DEFAULT_VARIANT) -> str:
    """The sentence that tells the model how to state its move (its example is a legal move only
    where the moves are listed anyway)."""
    if legal_moves is None:
        return "Reply with your move or message exactly as the rules describe, and nothing else."
    example = legal_moves[0] if legal_moves and variant.list_moves else "move"
    if mode is Mode.TOOLS:
        return f"Call the function `{TOOL_NAME}` with your move, one of the legal moves."
    if mode is Mode.JSON:
        return f'Reply with a JSON object of the form {{"move": "{example}"}} naming one of the legal moves.'
    if mode is Mode.CHOICE:
        return f"Reply with exactly one legal move as it is listed and nothing else, for example: {example}"
    return f"Reply with exactly one legal move in square brackets, for example [{example}]."


def system_prompt(request: MoveRequest, mode: Mode, variant: PromptVariant = DEFAULT_VARIANT) -> str:
    obs = request.observation
    role = obs.role or f"Player {obs.player}"
    enumerable = request.legal_moves is not None and variant.list_moves
    lines = [
        f"You are playing the game {request.game_name} as {role}.",
        "",
        "Rules:",
        request.rules,  # normalised at the source (arena.rules_text)
        "",
        "Each turn you see the game from your side"
        + (" and the list of legal moves." if enumerable else "."),
        _general_format(mode, request.legal_moves is not None),
    ]
    if variant.notation and request.legal_moves is not None:
        lines.append(f"Write moves in {variant.notation.upper()} notation.")
    return "\n".join(lines)


def _general_format(mode: Mode, enumerable: bool) -> str:
    if not enumerable:
        return answer_format(mode, None)
    if mode is Mode.TOOLS:
        return f"Answer by calling the function `{TOOL_NAME}` with one of the legal moves."
    if mode is Mode.JSON:
        return 'Answer with a JSON object {"move": "<one of the legal moves>"}.'
    if mode is Mode.CHOICE:
        return "Answer with exactly one of the legal moves as it is listed, and nothing else."
    return "Answer with exactly one legal move in square brackets, e.g. [move]."


def legal_moves_line(legal_moves: list[str], notation: str | None = None) -> str:
    label = f"Legal moves ({notation.upper()})" if notation else "Legal moves"
    if len(legal_moves) <= MAX_LISTED_MOVES:
        return f"{label}: " + ", ".join(legal_moves)
    shown = ", ".join(legal_moves[:MAX_LISTED_MOVES])
    return f"{label} ({len(legal_moves)}; the first {MAX_LISTED_MOVES} shown): {shown}, ..."


def current_message(request: MoveRequest, mode: Mode, *, include_observation: bool = True, variant: PromptVariant = DEFAULT_VARIANT) -> str:
    """The user turn asking for this move (with the rethinking note on a retry)."""
    obs = request.observation
    parts: list[str] = []
    feedback = rejection_feedback(request)
    if feedback is not None:
        parts.append(rethinking_note(feedback))
    if include_observation:
        parts.append(obs.text.strip())
    if obs.legal_moves is not None and variant.list_moves:
        parts.append(legal_moves_line(obs.legal_moves, variant.notation))
    parts.append(answer_format(mode, obs.legal_moves, variant))
    return with_private_last("\n\n".join(parts), request, variant)


def with_private_last(text: str, request: MoveRequest, variant: PromptVariant) -> str:
    """`text` ending with the seat's private information when the variant restates it
    (prompt=private-last): every user turn a move sends, a rethink round's too, ends with it."""
    if not (variant.private_last and request.private):
        return text
    return f"{text}\n\n" + "\n".join(request.private)


def rejection_feedback(request: MoveRequest) -> str | None:
    """The game's explanation of why this turn's previous attempt was rejected, if it was."""
    if request.attempt <= 0:
        return None
    if request.observation.feedback:
        return request.observation.feedback
    if request.history and request.history[-1].feedback:
        return request.history[-1].feedback
    return "Your previous reply was not a valid move."


def rethinking_note(feedback: str) -> str:
    return f"Your previous reply was rejected: {feedback.strip()}\nRethink your move and answer again."


def rethink_turn(reply: str, feedback: str, mode: Mode, request: MoveRequest, variant: PromptVariant = DEFAULT_VARIANT) -> list[Message]:
    """A refused answer sent back within one move (sampler rethink:N): the model's own reply, then
    the feedback and the answer format again (`request`: the move's, its moves as shown)."""
    note = with_private_last(rethinking_note(feedback) + "\n\n" + answer_format(mode, request.legal_moves, variant), request, variant)
    return [{"role": "assistant", "content": reply[:MAX_HISTORY_REPLY_CHARS] or "(no reply)"}, {"role": "user", "content": note}]


def with_instruction(messages: list[Message], instruction: str, request: MoveRequest | None = None, variant: PromptVariant = DEFAULT_VARIANT) -> list[Message]:
    """`messages` with `instruction` added to the last user turn (the length retry's request),
    before the restated private line where the variant ends every turn with it."""
    last = len(messages) - 1 - next(i for i, m in enumerate(reversed(messages)) if m["role"] == "user")
    content = messages[last]["content"]
    restated = with_private_last("", request, variant) if request is not None else ""
    if restated and content.endswith(restated):
        content = content.removesuffix(restated)
    return [*messages[:last], {**messages[last], "content": f"{content}\n\n{instruction}{restated}"}, *messages[last + 1:]]


def _history_messages(history: list[Exchange]) -> list[list[Message]]:
    """Earlier exchanges as [user, assistant] pairs. A retry of an unchanged position does not
    repeat the observation, only the game's feedback."""
    pairs: list[list[Message]] = []
    previous: Exchange | None = None
    for exchange in history:
        if previous is not None and previous.feedback:
            note = rethinking_note(previous.feedback)
            same = exchange.observation == previous.observation
            user = note if same else f"{note}\n\n{exchange.observation.strip()}"
        else:
            user = exchange.observation.strip()
        reply = exchange.reply[:MAX_HISTORY_REPLY_CHARS] or "(no reply)"
        pairs.append([{"role": "user", "content": user}, {"role": "assistant", "content": reply}])
        previous = exchange
    return pairs


@dataclass
class Prompt:
    messages: list[Message]
    history_kept: int  # earlier exchanges included
    history_dropped: int  # earlier exchanges trimmed to fit the budget
    tokens: int  # as counted by the policy's counter


def build_prompt(
    request: MoveRequest,
    *,
    mode: Mode = Mode.TEXT,
    obs_mode: ObsMode = ObsMode.HISTORY,
    budget_tokens: int | None = None,
    count_tokens: TokenCounter = estimate_tokens,
    variant: PromptVariant = DEFAULT_VARIANT,
) -> Prompt:
    """The chat messages for `request`, trimmed (oldest history first) to `budget_tokens`."""
    system = {"role": "system", "content": system_prompt(request, mode, variant)}
    pairs: list[list[Message]] = []
    short_current: Message | None = None  # the current turn when the last pair already shows the position
    if obs_mode is not ObsMode.STATE:  # history, or a chat rendered whole
        pairs = _history_messages(request.history)
        last = request.history[-1] if request.history else None
        current = {"role": "user", "content": current_message(request, mode, variant=variant)}
        if last is not None and last.feedback and last.observation == request.observation.text:
            short_current = {"role": "user", "content": current_message(request, mode, include_observation=False, variant=variant)}
    else:
        current = {"role": "user", "content": _state_message(request, mode, variant)}

    def assemble(keep: int) -> list[Message]:
        if keep == 0:
            return [system, current]
        kept = pairs[len(pairs) - keep :]
        return [system, *(m for pair in kept for m in pair), short_current or current]

    total = len(pairs)
    if budget_tokens is None:
        messages = assemble(total)
        return Prompt(messages, total, 0, count_tokens(messages))
    # Largest number of recent exchanges that fits: binary search (counting renders the template).
    lo, hi = 0, total
    if count_tokens(assemble(total)) <= budget_tokens:
        lo = total
    else:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count_tokens(assemble(mid)) <= budget_tokens:
                lo = mid
            else:
                hi = mid - 1
    messages = assemble(lo)
    tokens = count_tokens(messages)
    if tokens > budget_tokens:
        messages, tokens = _shorten_rules(messages, budget_tokens, count_tokens)
    return Prompt(messages, lo, total - lo, tokens)


def _state_message(request: MoveRequest, mode: Mode, variant: PromptVariant) -> str:
    """State mode: the current observation; a retry also quotes the rejected reply."""
    text = current_message(request, mode, variant=variant)
    if request.attempt > 0 and request.history:
        quoted = request.history[-1].reply.strip()[:MAX_QUOTED_REPLY_CHARS]
        text = f"Your previous reply was:\n{quoted}\n\n{text}"
    return text


def _shorten_rules(messages: list[Message], budget: int, count_tokens: TokenCounter) -> tuple[list[Message], int]:
    """Last resort when even the current turn alone is too long: cut the rules text, then fail."""
    system = messages[0]["content"]
    for keep in (0.5, 0.25, 0.1, 0.0):
        head = system[: int(len(system) * keep)]
        shortened = [{"role": "system", "content": head + "\n(rules shortened to fit the context)"}, *messages[1:]]
        tokens = count_tokens(shortened)
        if tokens <= budget:
            return shortened, tokens
    raise PromptTooLarge(f"the current observation alone needs {count_tokens(messages[1:])} tokens; budget {budget}")
