"""Token sessions: the incrementally grown ids equal a full render of the same chat (SmolLM2's
template allows it), and templates that rewrite earlier turns are detected."""

from __future__ import annotations

import pytest

from arena.llm.model import local_model_dir
from arena.llm.token_chats import ChatTemplate, TokenChatBook


@pytest.fixture(scope="module")
def template() -> ChatTemplate:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(local_model_dir(show_progress=False))
    return ChatTemplate(tokenizer, [tokenizer.eos_token_id])


def reply_ids(template: ChatTemplate, text: str, *, ended: bool) -> list[int]:
    """What a model would have generated for `text` (end-of-turn included when it stopped)."""
    return template.encode_text(text) + ([template.end_ids[0]] if ended else [])


def test_incremental_ids_equal_a_full_render(template):
    book = TokenChatBook(template)
    key = ("match", 0)
    messages = [{"role": "system", "content": "You play Tic-Tac-Toe as X."}, {"role": "user", "content": "Board 1. Legal moves: 1, 2"}]
    prompt = book.whole(messages, "first")
    replies = [("I take [5].", True), ("Maybe the corner [1] is better than", False), ("[9]", True)]
    for turn, (text, ended) in enumerate(replies):
        book.record(key, prompt, reply_ids(template, text, ended=ended), text, exchanges=turn)
        user = {"role": "user", "content": f"Board {turn + 2}.\nLegal moves: 3, 4"}
        prompt = book.extend(key, turn + 1, text, user)
        assert prompt is not None
        assert prompt.ids == template.encode(prompt.messages)  # the same as rendering it all again
    assert prompt.messages[-2] == {"role": "assistant", "content": "[9]"}


def test_history_that_differs_from_the_session_is_not_extended(template):
    book = TokenChatBook(template)
    messages = [{"role": "user", "content": "Board."}]
    book.record(("m", 1), book.whole(messages, "first"), reply_ids(template, "[1]", ended=True), "[1]", exchanges=0)
    user = {"role": "user", "content": "Again."}
    assert book.extend(("m", 1), 1, "[2]", user) is None  # another reply than the one generated
    assert book.extend(("m", 1), 1, "[1]", user) is None  # the mismatch ended the session


def test_a_template_that_rewrites_replies_is_not_incremental(template):
    class Trimming:
        """A tokenizer whose template strips reply text, as some models' templates do."""

        def __init__(self, inner):
            self.inner = inner

        def apply_chat_template(self, messages, **kwargs):
            trimmed = [{**m, "content": m["content"].strip()} if m["role"] == "assistant" else m for m in messages]
            return self.inner.apply_chat_template(trimmed, **kwargs)

        def __call__(self, *args, **kwargs):
            return self.inner(*args, **kwargs)

        def decode(self, *args, **kwargs):
            return self.inner.decode(*args, **kwargs)

    trimming = ChatTemplate(Trimming(template.tokenizer), template.end_ids)
    messages = [{"role": "user", "content": "Board."}]
    assert trimming.continuation_ids(messages, " [1] ", [template.end_ids[0]], {"role": "user", "content": "Next."}) is None
    assert trimming.continuation_ids(messages, "[1]", [template.end_ids[0]], {"role": "user", "content": "Next."}) is not None


class CountingTokenizer:
    """The real tokenizer, counting how often it renders and tokenizes."""

    def __init__(self, tokenizer):
        self.tokenizer, self.renders, self.tokenizations = tokenizer, 0, 0

    def apply_chat_template(self, *args, **kwargs):
        self.renders += 1
        return self.tokenizer.apply_chat_template(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        self.tokenizations += 1
        return self.tokenizer(*args, **kwargs)

    def decode(self, *args, **kwargs):
        return self.tokenizer.decode(*args, **kwargs)


def test_an_encoding_is_remembered_and_each_caller_gets_its_own_list(template):
    counting = CountingTokenizer(template.tokenizer)
    remembering = ChatTemplate(counting, template.end_ids, encodings_kept=2)
    chats = [[{"role": "user", "content": f"Board {i}. Legal moves: 1, 2"}] for i in range(3)]
    first = remembering.encode(chats[0])
    assert first == template.encode_text(template.render(chats[0]))  # what rendering it afresh gives
    first.append(-1)  # a caller's list is its own: the remembered ids stay as they were
    assert remembering.encode([dict(m) for m in chats[0]]) == template.encode(chats[0])  # equal messages, not the same objects
    assert (counting.renders, counting.tokenizations) == (1, 1)
    remembering.encode(chats[1])
    remembering.encode(chats[2])  # past encodings_kept: the least recently used (chats[0]) goes
    assert (counting.renders, counting.tokenizations) == (3, 3)
    remembering.encode(chats[0])
    assert (counting.renders, counting.tokenizations) == (4, 4)
    other_role = [{"role": "system", "content": chats[0][0]["content"]}]
    assert remembering.encode(other_role) != remembering.encode(chats[0])  # the role is part of the key


def test_a_message_with_a_field_that_is_not_text_is_encoded_without_the_memo(template):
    counting = CountingTokenizer(template.tokenizer)
    remembering = ChatTemplate(counting, template.end_ids)
    chat = [{"role": "user", "content": "Board.", "tags": ["not", "text"]}]
    assert remembering.encode(chat) == remembering.encode(chat)
    assert counting.tokenizations == 2


def test_chats_that_differ_only_in_where_a_field_splits_have_different_keys():
    from arena.llm.token_chats import messages_key

    one = [{"role": "user", "content": "ab"}, {"role": "user", "content": "c"}]
    other = [{"role": "user", "content": "a"}, {"role": "user", "content": "bc"}]
    assert messages_key(one) != messages_key(other)
    assert messages_key(one) == messages_key([{"content": "ab", "role": "user"}, {"role": "user", "content": "c"}])  # field order aside
    assert messages_key([{"role": "user", "content": "x", "name": "a"}]) != messages_key([{"role": "user", "content": "x"}])
