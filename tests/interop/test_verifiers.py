"""Our games as verifiers (0.4) environments, run by verifiers' own evaluation (`run_eval`, the
code behind `vf-eval`) with its OpenAI-compatible client pointed at `arena serve-model` on the
shipped model: the rewards verifiers reports equal the outcomes our league store records for the
same seeds, and equal what an independent replay gives: the replies verifiers' own trace says the
model sent, played through the plain match driver on a fresh game against a fresh `bot`."""

from __future__ import annotations

import asyncio

import pytest
from verifiers.v1.cli.eval.runner import run_eval
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.types import content_text

from arena.llm.parsing import parse_move
from arena.match import MatchRecord, play_match
from arena.policy import MoveRequest, Policy, PolicyReply, make_policy
from games.registry import make_game
from interop.verifiers import PLAYER_NAME, REWARD_NAME, load_environment
from league.store import Store
from tests.local_server import serve_model_process

pytestmark = pytest.mark.slow

SEEDS = [0, 1]
OPTIONS = {"hands": 1}


class ReplayedReplies(Policy):
    """The model's seat in the replay: each move request gets the next reply verifiers recorded,
    read by the league's parser as interop/verifiers.py reads it. Requests beyond the recorded
    replies are counted (and answered with nothing), so a replay that wants more moves than the
    model made fails the test instead of hiding in the driver's error handling."""

    name, spec, provider = PLAYER_NAME, "replay", "replay"

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.used, self.extra = replies, 0, 0

    async def act(self, request: MoveRequest) -> PolicyReply:
        if self.used == len(self.replies):
            self.extra += 1
            return PolicyReply(action="", raw="")
        reply = self.replies[self.used]
        self.used += 1
        return PolicyReply(action=parse_move(reply, request.observation.legal_moves).action, raw=reply)


def replay(replies: list[str], seed: int) -> tuple[MatchRecord, ReplayedReplies]:
    """The episode again, without verifiers, SeatEnvironment or the store: a fresh game and a fresh
    bot under `play_match` (whose seeds depend on the match seed and seat only)."""
    seat = ReplayedReplies(replies)
    record = asyncio.run(play_match(make_game("kuhn_poker", **OPTIONS), [seat, make_policy("bot")], seed))
    return record, seat


@pytest.fixture(scope="module")
def server():
    with serve_model_process() as url:
        yield url


def test_verifiers_eval_rewards_equal_the_stored_outcomes(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "unused")  # verifiers reads the key from an env var
    store_url = f"sqlite:///{tmp_path / 'episodes.db'}"
    env = load_environment(
        game="kuhn_poker", opponents=["bot"], options=OPTIONS, first_seed=SEEDS[0], num_seeds=len(SEEDS), store=store_url
    )
    config = EvalConfig.model_validate(
        {
            "env": env.config,
            "model": "local",
            "client": {"type": "eval", "base_url": server, "api_key_var": "ARENA_TEST_DUMMY_KEY"},
            "sampling": {"temperature": 0.0, "max_tokens": 12},
            "rich": None,
            "output_dir": str(tmp_path / "outputs"),
        }
    )
    episodes = asyncio.run(run_eval(config))
    assert len(episodes) == len(SEEDS) and all(e.ok for e in episodes), [e.errors for e in episodes]
    reported, replies = {}, {}
    for episode in episodes:
        (trace,) = episode.traces
        assert trace.calls and all(call.error is None for call in trace.calls)  # the model really played
        reported[trace.info["seed"]] = trace.rewards[REWARD_NAME].score
        replies[trace.info["seed"]] = [content_text(message.content).strip() for message in trace.assistant_messages]
    with Store(store_url) as store:
        records = {r.seed: r for r in store.iter_records()}
    assert sorted(records) == SEEDS
    for seed, record in records.items():
        assert record.policies[0] == PLAYER_NAME and record.specs[1] == "bot"
        assert reported[seed] == record.outcome["scores"][0]
        # Independently: the model's replies as verifiers recorded them, replayed on a fresh game
        again, seat = replay(replies[seed], seed)
        assert seat.used == len(replies[seed]) and seat.extra == 0, (seed, seat.used, seat.extra, len(replies[seed]))
        assert again.status == "finished" and again.outcome["scores"][0] == reported[seed], (seed, again.outcome, reported[seed])
        assert [(t.player, t.action, t.valid) for t in again.turns] == [(t.player, t.action, t.valid) for t in record.turns]
