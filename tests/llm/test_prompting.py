"""Prompts: rules, role, legal moves and answer format; history vs state; trimming; rethinking."""

from __future__ import annotations

import pytest

from arena.game import Observation
from arena.llm.prompting import Mode, ObsMode, PromptTooLarge, build_prompt, estimate_tokens
from arena.policy import Exchange, MoveRequest


def _request(text="Board A", legal=("0", "4"), history=(), attempt=0, feedback=None, rules="Rules of the game."):
    obs = Observation(player=1, text=text, legal_moves=list(legal) if legal is not None else None, role="Player 1 (O)", feedback=feedback)
    return MoveRequest(game_id="g", game_name="Game", rules=rules, observation=obs, history=list(history), attempt=attempt)


def test_system_prompt_has_rules_role_and_format_and_user_has_legal_moves():
    messages = build_prompt(_request()).messages
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "Rules of the game." in system and "Player 1 (O)" in system and "Game" in system
    assert "square brackets" in system
    assert "Board A" in user and "Legal moves: 0, 4" in user and "[0]" in user


@pytest.mark.parametrize("mode, phrase", [(Mode.TOOLS, "make_move"), (Mode.JSON, '{"move"')])
def test_structured_modes_state_their_format(mode, phrase):
    messages = build_prompt(_request(), mode=mode).messages
    assert phrase in messages[0]["content"] and phrase in messages[-1]["content"]


def test_free_text_games_list_no_moves():
    user = build_prompt(_request(legal=None)).messages[-1]["content"]
    assert "Legal moves" not in user and "exactly as the rules describe" in user


def test_history_mode_alternates_and_carries_feedback():
    history = [
        Exchange("Board A", "[9]", feedback="Invalid move: 9 is not a cell"),
        Exchange("Board A", "[4]"),  # retry of the same position
        Exchange("Board B", "[0]"),
    ]
    messages = build_prompt(_request(text="Board C", history=history)).messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == "[9]"
    retry_turn = messages[3]["content"]
    assert "9 is not a cell" in retry_turn and "Board A" not in retry_turn  # same position: not repeated
    assert messages[5]["content"] == "Board B"
    assert messages[-1]["content"].startswith("Board C")


def test_retry_in_history_mode_sends_the_rethinking_note_without_repeating_the_board():
    history = [Exchange("Board A", "I like 9", feedback="Invalid move: '9' is taken")]
    messages = build_prompt(_request(history=history, attempt=1, feedback="Invalid move: '9' is taken")).messages
    current = messages[-1]["content"]
    assert "rejected" in current and "'9' is taken" in current and "Rethink" in current
    assert "Board A" not in current and "Legal moves: 0, 4" in current
    assert messages[-2] == {"role": "assistant", "content": "I like 9"}


def test_state_mode_sends_only_the_current_observation_and_on_retry_the_rejected_reply():
    history = [Exchange("Board A", "[0]"), Exchange("Board B", "I like 9", feedback="Invalid move: taken")]
    plain = build_prompt(_request(text="Board C", history=history[:1]), obs_mode=ObsMode.STATE).messages
    assert len(plain) == 2 and "Board A" not in plain[1]["content"]
    retry = build_prompt(_request(text="Board B", history=history, attempt=1, feedback="Invalid move: taken"), obs_mode=ObsMode.STATE).messages
    assert len(retry) == 2
    assert "I like 9" in retry[1]["content"] and "Invalid move: taken" in retry[1]["content"] and "Board B" in retry[1]["content"]


def test_trimming_drops_the_oldest_history_first():
    history = [Exchange(f"Board {i} " + "x" * 300, f"[{i}]") for i in range(30)]
    request = _request(text="Board now", history=history)
    full = build_prompt(request)
    budget = full.tokens // 3
    trimmed = build_prompt(request, budget_tokens=budget)
    assert trimmed.tokens <= budget and estimate_tokens(trimmed.messages) == trimmed.tokens
    assert 0 < trimmed.history_kept < 30 and trimmed.history_kept + trimmed.history_dropped == 30
    kept_boards = [m["content"][:8] for m in trimmed.messages if m["role"] == "user"][:-1]
    assert kept_boards[-1] == "Board 29" and "Board 0 " not in str(trimmed.messages)
    assert trimmed.messages[-1]["content"].startswith("Board now")


def test_a_retry_whose_history_was_trimmed_away_shows_the_board_again():
    history = [Exchange("Board A " + "x" * 3000, "[9]", feedback="Invalid move: taken")]
    request = _request(text=history[0].observation, history=history, attempt=1, feedback="Invalid move: taken")
    prompt = build_prompt(request, budget_tokens=estimate_tokens(build_prompt(_request(text=history[0].observation)).messages) + 40)
    assert prompt.history_kept == 0 and "Board A" in prompt.messages[-1]["content"]


def test_rules_are_shortened_as_a_last_resort_and_an_impossible_budget_raises():
    request = _request(rules="R" * 4000)
    prompt = build_prompt(request, budget_tokens=600)
    assert prompt.tokens <= 600 and "rules shortened" in prompt.messages[0]["content"]
    with pytest.raises(PromptTooLarge):
        build_prompt(_request(text="B" * 5000), budget_tokens=100)


def test_private_last_ends_every_user_turn_of_a_move_with_the_seats_secret():
    """The first ask, a rethink round and the length retry's request all end with the card."""
    import dataclasses

    from arena.llm.prompt_variants import PromptVariant
    from arena.llm.prompting import rethink_turn, with_instruction

    request = dataclasses.replace(_request(), private=("Your card: K",))
    variant = PromptVariant.parse("private-last")
    messages = build_prompt(request, mode=Mode.TEXT, obs_mode=ObsMode.STATE, variant=variant).messages
    assert messages[-1]["content"].endswith("for example [0].\n\nYour card: K")
    retried = with_instruction(messages, "Reason briefly.", request, variant)[-1]["content"]
    assert retried.endswith("for example [0].\n\nReason briefly.\n\nYour card: K") and retried.count("Your card: K") == 1
    assert with_instruction(messages, "Reason briefly.")[-1]["content"].endswith("Your card: K\n\nReason briefly.")  # told nothing: appended
    assert rethink_turn("I pass", "no move", Mode.TEXT, request, variant)[-1]["content"].endswith("\n\nYour card: K")
    assert "Your card" not in rethink_turn("I pass", "no move", Mode.TEXT, request)[-1]["content"]  # the default variant
