"""The match driver: turn records, retries, time limits, failing policies, simultaneous moves."""

import asyncio
import json

import pytest

from arena.match import MatchRecord, play_match
from arena.policy import MoveRequest, Policy, PolicyFailure, PolicyReply, make_policy
from games.registry import make_game


class Scripted(Policy):
    """Plays the given replies in order, then the game's random move."""

    provider = "test"

    def __init__(self, replies, name="scripted"):
        self.replies = list(replies)
        self.name = name
        self.requests: list[MoveRequest] = []

    async def act(self, request):
        self.requests.append(request)
        if self.replies:
            reply = self.replies.pop(0)
            if isinstance(reply, Exception):
                raise reply
            return PolicyReply(action=reply, raw=f"I choose {reply}", prompt_tokens=10, completion_tokens=3)
        return PolicyReply(action=request.legal_moves[0], raw=request.legal_moves[0])


class Slow(Policy):
    provider = "test"
    name = "slow"

    async def act(self, request):
        await asyncio.sleep(5)
        return PolicyReply(action="0")


async def test_record_is_complete_and_json_roundtrips(tmp_path):
    game = make_game("tictactoe")
    record = await play_match(game, [make_policy("bot"), make_policy("random")], seed=3)
    assert record.status == "finished" and record.outcome is not None
    assert all(t.valid for t in record.turns)
    assert [t.player for t in record.turns] == [i % 2 for i in range(len(record.turns))]
    assert record.turns[0].legal_moves == [str(i) for i in range(9)]
    path = tmp_path / "m.json"
    record.save(path)
    again = MatchRecord.load(path)
    assert again == record
    json.loads(path.read_text())


async def test_same_seed_same_match():
    a = await play_match(make_game("tictactoe"), [make_policy("random"), make_policy("random")], seed=5, match_id="m")
    b = await play_match(make_game("tictactoe"), [make_policy("random"), make_policy("random")], seed=5, match_id="m")
    assert [t.action for t in a.turns] == [t.action for t in b.turns]
    assert a.outcome == b.outcome


async def test_invalid_moves_get_feedback_retry_then_forfeit():
    bad = Scripted(["9", "banana", "x"], name="bad")
    record = await play_match(make_game("tictactoe"), [bad, make_policy("bot")], seed=0)
    assert [t.valid for t in record.turns] == [False, False, False]
    assert [t.attempt for t in record.turns] == [0, 1, 2]
    assert record.turns[-1].penalty == "forfeit"
    assert record.outcome["ranks"] == [2, 1]
    # the retry request carried the game's feedback and the rejected reply in the history
    retry = bad.requests[1]
    assert retry.attempt == 1 and "not a cell number" in retry.observation.feedback
    assert retry.history[0].reply == "I choose 9" and retry.history[0].feedback


async def test_timeout_applies_the_rule_and_match_ends():
    record = await play_match(make_game("tictactoe"), [Slow(), make_policy("bot")], seed=0, move_timeout=0.05)
    assert record.status == "finished"
    assert record.turns[0].error.startswith("timeout") and record.turns[0].penalty == "forfeit"
    assert record.outcome["ranks"] == [2, 1]


@pytest.mark.parametrize("error", [PolicyFailure("provider down"), RuntimeError("boom")])
async def test_failing_policy_is_recorded_not_raised(error):
    record = await play_match(make_game("tictactoe"), [make_policy("bot"), Scripted([error])], seed=0)
    failed = [t for t in record.turns if t.error]
    assert len(failed) == 1 and failed[0].player == 1 and failed[0].penalty
    assert record.outcome["ranks"] == [1, 2]


async def test_wrong_number_of_policies():
    with pytest.raises(ValueError, match="2 players"):
        await play_match(make_game("tictactoe"), [make_policy("bot")], seed=0)


async def test_long_replies_are_capped():
    huge = "7" * 100_000
    record = await play_match(make_game("tictactoe"), [Scripted([huge]), make_policy("bot")], seed=0)
    assert len(record.turns[0].raw) <= 8000 and len(record.turns[0].action) <= 8000
