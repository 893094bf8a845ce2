"""The opponents servers play for outsiders (league/opponent_pool.py): one rule for what is never
served, one cap, one object per opponent, for serve-env and the play page alike."""

from __future__ import annotations

import pytest

from arena.policy import Policy, PolicyReply, PolicySpecError, register_kind
from league.opponent_pool import MAX_HELD_OPPONENTS, OpponentPool, OpponentRefused, PoolFull, allowed_kinds
from league.outside_play import OutsidePlay


class HeldProbe(Policy):
    """A stand-in for a model-backed kind: not scripted, so the pool holds it; counts closes."""

    provider = "probe"
    closed = 0

    async def act(self, request):
        return PolicyReply(action="1")

    async def close(self) -> None:
        HeldProbe.closed += 1


register_kind("pool-probe", lambda spec: HeldProbe(), "pool-probe")


@pytest.fixture
def outside(store) -> OutsidePlay:
    store.upsert_policy("champion", "bot")
    store.upsert_policy("model-champ", "pool-probe")
    store.upsert_policy("terminal", "human")
    store.upsert_policy("agent-x", "serve-env:agent-x")
    return OutsidePlay(store, "outside")


def test_scripted_opponents_are_always_served_and_built_per_game() -> None:
    pool = OpponentPool(allowed_kinds([], "--allow"))
    assert pool.get("bot") is not pool.get("bot")  # cheap and stateless: no slot among the held ones
    assert pool.get("random,seed=z").spec == "random,seed=z"


def test_an_allowed_kind_is_built_once_for_the_whole_server() -> None:
    pool = OpponentPool(allowed_kinds(["pool-probe"], "--allow"))
    assert pool.get("pool-probe") is pool.get("pool-probe")
    assert pool.get("pool-probe,x=1") is not pool.get("pool-probe")


@pytest.mark.parametrize("wanted, says", [
    ("pool-probe", "policy kind 'pool-probe' is not served here (allowed: bot, random; HINT)"),
    ("human", "policy kind 'human' is not served here"),
])
def test_kinds_not_allowed_are_refused_with_what_is(wanted, says) -> None:
    pool = OpponentPool(allowed_kinds([], "--allow"), allow_hint="HINT")
    with pytest.raises(OpponentRefused, match=r"^" + says.replace("(", r"\(").replace(")", r"\)")):
        pool.get(wanted)
    assert pool.refusal(wanted).startswith(says)


def test_human_is_never_served_even_where_allowed() -> None:
    pool = OpponentPool({"bot", "random", "human"}, trust_league_policies=True)
    with pytest.raises(OpponentRefused, match="'human' is not served"):
        pool.get("human")


@pytest.mark.parametrize("trust", [True, False])
def test_league_policies_by_name(outside, trust) -> None:
    pool = OpponentPool(allowed_kinds([], "--allow"), outside=outside, trust_league_policies=trust)
    champion = pool.get("champion")
    assert champion.name == "champion" and champion.spec == "bot"
    with pytest.raises(OpponentRefused, match="league policy 'terminal' is a 'human' policy, a kind not served here"):
        pool.get("terminal")  # never served, however trusted the league is
    with pytest.raises(OpponentRefused, match="'agent-x' is an outside player"):
        pool.get("agent-x")
    assert [pool.serves_league_policy(spec) for spec in ("bot", "human", "serve-env:agent-x")] == [True, False, False]
    if trust:  # serve-env: the league's owner registered it, so its kind needs no --allow
        assert pool.get("model-champ").name == "model-champ" and pool.serves_league_policy("pool-probe")
    else:  # the play page: only league policies of allowed kinds
        with pytest.raises(OpponentRefused, match="league policy 'model-champ' is a 'pool-probe' policy"):
            pool.get("model-champ")
        assert not pool.serves_league_policy("pool-probe")


async def test_held_opponents_are_capped_and_closed_with_the_pool() -> None:
    pool = OpponentPool(allowed_kinds(["pool-probe"], "--allow"))
    held = [pool.get(f"pool-probe,n={i}") for i in range(MAX_HELD_OPPONENTS)]
    with pytest.raises(PoolFull, match=f"already holds {MAX_HELD_OPPONENTS} distinct opponents"):
        pool.get("pool-probe,n=extra")
    assert pool.get("pool-probe,n=0") is held[0] and pool.get("bot")  # held ones and scripted ones still come
    closed_before = HeldProbe.closed
    await pool.close()
    assert HeldProbe.closed - closed_before == MAX_HELD_OPPONENTS


def test_a_bad_spec_is_a_spec_error_not_a_refusal() -> None:
    pool = OpponentPool(allowed_kinds(["pool-probe"], "--allow"))
    with pytest.raises(PolicySpecError) as caught:
        pool.get("pool-probe,nokey")
    assert not isinstance(caught.value, OpponentRefused)


@pytest.mark.parametrize("extra, says", [(["human"], "--allow human: a human policy would read this server's terminal"),
                                         (["gpt"], "--allow gpt: no such policy kind")])
def test_the_operator_cannot_allow_human_or_an_unknown_kind(extra, says) -> None:
    with pytest.raises(ValueError, match=says):
        allowed_kinds(extra, "--allow")
    assert allowed_kinds([" Pool-Probe "], "--allow") == {"bot", "random", "pool-probe"}
