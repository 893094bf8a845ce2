"""Strict parsing end to end: a reply with no bracketed move is an invalid attempt whose feedback
quotes the format, and a lenient "mention" parse, though the game accepts it, counts as invalid in
the leaderboard, the SFT/DPO exports and the training rewards (TurnRecord.clean)."""

from __future__ import annotations

from arena.match import play_match
from arena.policy import make_policy
from arena.scripted import BotPolicy
from games.registry import make_game
from league.export import dpo_rows, sft_rows
from league.scheduling import Pairing
from league.store import Store
from tests.llm.test_policies import ScriptedLLM
from trainer.rewards import format_penalty, invalid_penalty, is_format_failure
from web.queries import policy_stats

UNMEANT = "1, 2, 5, 6, 7\n\nA valid move: 1, 2, 5, 6, 7"


async def _first_turns(lenient: bool):
    policy = ScriptedLLM([UNMEANT, lambda legal: f"[{legal[0]}]"], parser="fuzzy" if lenient else "strict")
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=2)
    return record, policy


async def test_a_reply_without_a_bracketed_move_is_an_invalid_attempt_quoting_the_format():
    record, policy = await _first_turns(lenient=False)
    first, second = record.turns[0], record.turns[1]
    assert (first.valid, first.meta["parse"], first.turn) == (False, "unformatted", 0)
    assert "no move in square brackets" in first.feedback and "for example [" in first.feedback
    assert first.raw == UNMEANT  # the record keeps what the model wrote
    assert (second.valid, second.attempt, second.action) == (True, 1, "0")
    assert "no move in square brackets" in policy.calls[1]["messages"][-1]["content"]


async def test_a_lenient_mention_is_played_but_never_counted_clean(tmp_path):
    record, _ = await _first_turns(lenient=True)
    first = record.turns[0]
    assert (first.valid, first.meta["parse"], first.action, first.clean) == (True, "mention", "7", False)
    clean_turns = [t for t in record.turns if t.player == 0 and t.clean]
    assert clean_turns and all(t.meta["parse"] == "bracket" for t in clean_turns)

    # training rewards: the mention is an invalid, unformatted attempt
    seat_turns = [t for t in record.turns if t.player == 0]
    assert is_format_failure(first)
    assert invalid_penalty(record, 0) == -1 / len(seat_turns) == format_penalty(record, 0)

    # exports: never an SFT target or a DPO "chosen" reply, even for the winner
    record.outcome = {"scores": [1.0, 0.0], "ranks": [1, 2], "reason": "test"}
    assert UNMEANT not in [row["messages"][-1]["content"] for row in sft_rows([record])]
    assert UNMEANT not in [row["chosen"][0]["content"] for row in dpo_rows([record])]

    # the leaderboard's invalid rate
    store = Store(f"sqlite:///{tmp_path / 'clean.db'}")
    league = store.open_league("clean")
    store.schedule(league, [Pairing(record.match_id, "tictactoe", tuple(record.policies), 2)])
    store.finish(league, record.match_id, record)
    with store.session() as session:
        stats = policy_stats(session, league)["tictactoe"][record.policies[0]]
    assert stats.invalid == 1 and stats.moves == len(seat_turns)
    store.close()


def test_parse_mode_is_a_spec_parameter_and_the_older_name_of_parser():
    assert make_policy("local,parse=lenient").settings.harness.parser.name == "fuzzy"
    assert make_policy("local,parser=fuzzy").settings.harness.parser.name == "fuzzy"
    assert make_policy("local").settings.harness.parser.name == "strict"
