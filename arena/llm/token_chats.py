"""Token chats (`obs=chat`): a seat's conversation as a token sequence that only grows.

Re-rendering a seat's whole chat from text each move and re-tokenizing it costs a template pass
and a tokenization per move, and the ids can drift from what the model actually produced (a reply
decoded and re-encoded is not always the same ids). An engine with a prefix cache (vLLM) also only
hits its cache when the new prompt starts with exactly the ids it has seen. So a token chat keeps:

    next prompt = previous prompt ids + the exact generated ids (end-of-turn included)
                  + the ids of what the chat template puts after that reply (its closing text and
                    the newly templated user turn, with the generation header)

`ChatTemplate.continuation_ids` finds that tail by rendering the chat with and without the new
turns and checking that each rendering extends the previous one; where the template does not work
that way (it rewrites earlier turns, trims reply text, ...) it answers None and the caller renders
the whole chat, counted in `TokenChatStats.fallback`. History trimmed to fit the context breaks the
extension too and is counted in `TokenChatStats.trimmed`.
"""

from __future__ import annotations

import collections
from array import array
from dataclasses import dataclass, field
from typing import Any

from arena.llm.bounded_memo import BoundedMemo, ids_digest

Message = dict[str, str]
MAX_CHATS = 4096  # seats remembered per policy; matches never say they ended, so oldest go first
# Prompts whose ids `ChatTemplate.encode` keeps. Self-play asks the same few questions thousands of
# times a step (Kuhn: 12 prompts, ~2,250 asks), and rendering plus tokenizing a ~500-token prompt
# was most of a choice rollout's own work (docs/benchmarks.md); Tic-Tac-Toe's boards are a few
# thousand. An entry is a 16-byte digest and the ids at 4 bytes each: 2 KB for 500 tokens, so a
# full memo of 1,000-token prompts holds ~33 MB.
ENCODINGS_KEPT = 8192


@dataclass
class TokenChatStats:
    """How each prompt was built (benchmarks and tests read these)."""

    first: int = 0  # a seat's first prompt: rendered whole, nothing to extend
    incremental: int = 0  # previous ids + generated ids + templated new turn
    fallback: int = 0  # could not extend (template not incremental, history differs): rendered whole
    trimmed: int = 0  # history trimmed to fit the context: rendered whole from the trimmed chat


class ChatTemplate:
    """A tokenizer's chat template applied whole or incrementally."""

    def __init__(self, tokenizer: Any, end_ids: list[int], encodings_kept: int = ENCODINGS_KEPT):
        self.tokenizer = tokenizer
        self.end_ids = list(end_ids)
        self._end_texts = {i: tokenizer.decode([i]) for i in self.end_ids}
        self._encodings = BoundedMemo(encodings_kept)  # digest of the messages -> their ids, compact

    def render(self, messages: list[Message], *, generation_prompt: bool = True) -> str:
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)

    def encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, messages: list[Message]) -> list[int]:
        """The whole chat rendered and tokenized, generation header included. The same messages
        give the same ids, so they are remembered (the last ENCODINGS_KEPT chats asked for); each
        call returns a list of its own. (A template that reads the clock, as some print today's
        date, is rendered with the date of the chat's first encoding.)"""
        key = messages_key(messages)
        ids = self._encodings.get(key) if key is not None else None
        if ids is None:
            ids = array("i", self.encode_text(self.render(messages)))  # ids < 2**31 in every tokenizer
            if key is not None:
                self._encodings.put(key, ids)
        return ids.tolist()

    def continuation_ids(self, messages: list[Message], reply: str, completion_ids: list[int], new_user: Message) -> list[int] | None:
        """Ids that follow `completion_ids` so the sequence equals the template of
        messages + [assistant reply, new_user] with the generation header; None when the template
        cannot be applied incrementally for this chat."""
        before = self.render(messages)
        with_reply = self.render([*messages, {"role": "assistant", "content": reply}], generation_prompt=False)
        after = self.render([*messages, {"role": "assistant", "content": reply}, new_user])
        if not with_reply.startswith(before) or not after.startswith(with_reply):
            return None
        turn = with_reply[len(before):]
        if not turn.startswith(reply):  # the template rewrote the reply (trimmed it, escaped it)
            return None
        closing = turn[len(reply):]
        if completion_ids and completion_ids[-1] in self._end_texts:
            # The generated ids already hold the end-of-turn token the template writes next.
            end_text = self._end_texts[completion_ids[-1]]
            if not closing.startswith(end_text):
                return None
            closing = closing[len(end_text):]
        return self.encode_text(closing + after[len(with_reply):])


def messages_key(messages: list[Message]) -> bytes | None:
    """A 16-byte digest of the chat (every field of every message, in order), or None when a
    field is not text (such a chat is encoded afresh every time)."""
    parts: list[Any] = []
    for message in messages:
        parts.append(len(message))
        for name in sorted(message):
            value = message[name]
            if not isinstance(name, str) or not isinstance(value, str):
                return None
            parts += (name, value)
    return ids_digest(*parts)


@dataclass
class _TokenChat:
    messages: list[Message]
    ids: list[int]  # prompt ids + generated ids of the last turn
    reply: str  # the last reply's text, as the match will quote it back
    exchanges: int  # history length the next request must have


@dataclass
class TokenChatPrompt:
    """What to send for one move."""

    messages: list[Message]
    ids: list[int]
    how: str  # "first" | "incremental" | "fallback" | "trimmed"


@dataclass
class TokenChatBook:
    """The token chats of one policy, keyed by (match id, seat)."""

    template: ChatTemplate
    stats: TokenChatStats = field(default_factory=TokenChatStats)
    _chats: "collections.OrderedDict[tuple[str, int], _TokenChat]" = field(default_factory=collections.OrderedDict)

    def extend(self, key: tuple[str, int], exchanges: int, last_reply: str | None, new_user: Message) -> TokenChatPrompt | None:
        """The next prompt as an extension of the seat's chat, or None when there is none to
        extend (first move, or the match's history is not the one this chat saw)."""
        chat = self._chats.get(key)
        if chat is None:
            return None
        if exchanges != chat.exchanges or last_reply != chat.reply:
            self.forget(key)
            return None
        tail = self.template.continuation_ids(chat.messages, chat.reply, chat.ids[-1:], new_user)
        if tail is None:
            self.forget(key)
            return None
        messages = [*chat.messages, {"role": "assistant", "content": chat.reply}, new_user]
        return TokenChatPrompt(messages, chat.ids + tail, "incremental")

    def whole(self, messages: list[Message], how: str) -> TokenChatPrompt:
        """A prompt rendered whole (first move, fallback, trimmed)."""
        return TokenChatPrompt(messages, self.template.encode(messages), how)

    def count(self, how: str) -> None:
        setattr(self.stats, how, getattr(self.stats, how) + 1)

    def record(self, key: tuple[str, int], prompt: TokenChatPrompt, completion_ids: list[int], reply: str, exchanges: int) -> None:
        """After a move: remember exactly what was sent and generated."""
        self._chats[key] = _TokenChat(prompt.messages, list(prompt.ids) + list(completion_ids), reply, exchanges + 1)
        self._chats.move_to_end(key)
        while len(self._chats) > MAX_CHATS:
            self._chats.popitem(last=False)

    def forget(self, key: tuple[str, int]) -> None:
        self._chats.pop(key, None)
