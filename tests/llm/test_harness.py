"""The harness as spec parameters: samplers (single, vote:N, rethink:N), parsers (strict, fuzzy,
extractor:SPEC), prompt variants (no-legal-moves, san), each recorded with every turn and part of
the policy's identity (two harnesses of one model are two league rows; `local` stays `local`)."""

from __future__ import annotations

import asyncio

import pytest

from arena.game import Observation
from arena.llm.harness import describe_spec
from arena.llm.llm_policy import LOCAL_PARAMS, Completion, LLMSettings
from arena.llm.parsers import ParserChoice
from arena.match import play_match
from arena.policy import MoveRequest, PolicyFailure, PolicySpec, PolicySpecError, make_policy
from arena.scripted import BotPolicy
from games.registry import make_game
from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.ratings import leaderboard
from league.runner import run_league
from league.store import Store
from tests.llm.test_policies import ScriptedLLM


def _request(legal=("0", "4", "8"), check=None, notation=None):
    obs = Observation(player=0, text="board", legal_moves=list(legal), role="X")
    return MoveRequest(game_id="g", game_name="G", rules="rules", observation=obs, match_id="m1", check_move=check, move_notation=notation)


# ---------------------------------------------------------------- vote:N


async def test_vote_plays_the_majority_and_records_every_answer():
    policy = ScriptedLLM(["I like [8]", "[4]", "centre: [4]"], sampler="vote:3")
    reply = await policy.act(_request())
    assert reply.action == "4" and reply.raw == "[4]"
    assert reply.meta["votes"] == {"8": 1, "4": 2}
    assert [s["raw"] for s in reply.meta["samples"]] == ["I like [8]", "[4]", "centre: [4]"]
    assert (reply.prompt_tokens, reply.completion_tokens) == (33, 9)  # three calls
    seeds = [c["seed"] for c in policy.calls]
    assert len(set(seeds)) == 3  # independent draws, each seeded


async def test_a_tie_goes_to_the_move_named_first_and_unparsed_answers_do_not_vote():
    reply = await ScriptedLLM(["no idea", "[8]", "[0]", "[0]", "[8]"], sampler="vote:5").act(_request())
    assert reply.action == "8" and reply.meta["votes"] == {"8": 2, "0": 2}


async def test_a_vote_without_any_move_plays_the_first_answer():
    reply = await ScriptedLLM(["hmm", "no idea"], sampler="vote:2").act(_request())
    assert reply.rejection and reply.raw == "hmm" and reply.meta["votes"] == {}


async def test_a_single_draw_asks_once_and_records_no_samples():
    policy = ScriptedLLM(["[4]"])
    reply = await policy.act(_request())
    assert len(policy.calls) == 1 and "samples" not in reply.meta
    assert reply.meta["harness"] == {"sampler": "single", "parser": "strict", "prompt": "default"}


async def test_a_failed_sample_is_left_out_of_the_vote_and_all_failing_fails_the_move():
    class Flaky(ScriptedLLM):
        async def _complete(self, messages, mode, legal_moves, seed, budget):
            if len(self.calls) % 2 == 1:
                self.calls.append({"seed": seed})
                raise PolicyFailure("provider down after retries")
            return await super()._complete(messages, mode, legal_moves, seed, budget)

    reply = await Flaky(["[8]"], sampler="vote:3").act(_request())
    assert reply.action == "8" and reply.meta["failed_samples"] == 1 and len(reply.meta["samples"]) == 2

    class Down(ScriptedLLM):
        async def _complete(self, *args):
            raise PolicyFailure("provider down after retries")

    with pytest.raises(PolicyFailure):
        await Down(["[8]"], sampler="vote:3").act(_request())


# ---------------------------------------------------------------- rethink:N


async def test_rethink_shows_the_model_its_reply_and_the_games_feedback_inside_one_attempt():
    policy = ScriptedLLM(["[4]", "[0]"], sampler="rethink:2")
    game = make_game("tictactoe")
    record = await play_match(game, [policy, BotPolicy()], seed=1, max_steps=1)  # first move only
    assert record.turns[0].valid and record.turns[0].attempt == 0  # the game saw one answer
    # nothing was refused: one round
    assert record.turns[0].meta["rethinks"] == 0 and len(policy.calls) == 1

    policy = ScriptedLLM(["I pass", "[4]"], sampler="rethink:2")
    reply = await policy.act(_request())
    assert reply.action == "4" and reply.meta["rethinks"] == 1
    follow_up = policy.calls[1]["messages"][-2:]
    assert follow_up[0] == {"role": "assistant", "content": "I pass"}
    assert "no move in square brackets" in follow_up[1]["content"] and "Rethink" in follow_up[1]["content"]
    assert [s["raw"] for s in reply.meta["samples"]] == ["I pass", "[4]"]
    assert "no move in square brackets" in reply.meta["samples"][0]["feedback"]


async def test_rethink_asks_the_game_about_moves_off_the_list_and_quotes_its_feedback():
    game = make_game("chess")
    game.reset(0)
    policy = ScriptedLLM(["[Ke2]", "[Nf3]"], sampler="rethink:1")
    request = MoveRequest(
        game_id="chess", game_name="Chess", rules="r", observation=game.observe(0),
        check_move=lambda text: game.check_move(0, text),
    )
    reply = await policy.act(request)
    assert reply.meta["rethinks"] == 1 and reply.action == "Nf3"  # SAN off the UCI list: the game accepts it
    assert "Ke2 is not legal here" in policy.calls[1]["messages"][-1]["content"]
    assert game.step(0, reply.action).valid


async def test_rethink_gives_up_after_n_rounds_and_the_game_judges_the_last_answer():
    policy = ScriptedLLM(["nothing"], sampler="rethink:2")
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=1)
    first = record.turns[0]
    assert not first.valid and first.attempt == 0 and first.meta["rethinks"] == 2
    assert len(first.meta["samples"]) == 3


async def test_a_failed_rethink_round_plays_the_answer_in_hand():
    class FailsSecond(ScriptedLLM):
        async def _complete(self, messages, mode, legal_moves, seed, budget):
            if self.calls:
                raise PolicyFailure("provider down after retries")
            return await super()._complete(messages, mode, legal_moves, seed, budget)

    reply = await FailsSecond(["I pass"], sampler="rethink:2").act(_request())
    assert reply.rejection and reply.meta["rethinks"] == 0 and "provider down" in reply.meta["rethink_error"]


# ---------------------------------------------------------------- parsers


async def test_fuzzy_is_the_old_lenient_parse():
    for parser in ("fuzzy",):
        reply = await ScriptedLLM(["I would take 8 here"], parser=parser).act(_request())
        assert (reply.action, reply.meta["parse"]) == ("8", "mention")
    def harness(spec):
        return LLMSettings.from_spec(PolicySpec.parse(spec), LOCAL_PARAMS, default_max_new_tokens=8).harness

    assert harness("local,parse=lenient") == harness("local,parser=fuzzy") != harness("local,parse=strict") == harness("local")


def _with_extractor(policy: ScriptedLLM, extractor: ScriptedLLM) -> ScriptedLLM:
    policy.parser.choice = ParserChoice("extractor", "fake")
    policy.parser.extractor = extractor
    return policy


async def test_the_extractor_is_asked_only_when_the_strict_reading_finds_no_legal_move():
    extractor = ScriptedLLM([Completion(content="[8]", prompt_tokens=50, completion_tokens=2)])
    policy = _with_extractor(ScriptedLLM(["[4]", "After all that, the corner opposite mine."]), extractor)
    clean = await policy.act(_request())
    assert clean.meta["parse"] == "bracket" and not extractor.calls
    extracted = await policy.act(_request())
    assert (extracted.action, extracted.meta["parse"]) == ("8", "extracted")
    question = extractor.calls[0]["messages"]
    assert "0, 4, 8" in question[0]["content"] and "the corner opposite mine" in question[1]["content"]
    assert extracted.meta["extractor"] == {"spec": "fake", "answer": "[8]", "move": "8", "prompt_tokens": 50, "completion_tokens": 2, "cost_usd": None}
    assert (extracted.prompt_tokens, extracted.completion_tokens) == (11, 3)  # the player's own tokens only


async def test_an_extractor_answer_off_the_list_changes_nothing_and_never_sees_the_reasoning():
    extractor = ScriptedLLM(["[none]"])
    policy = _with_extractor(ScriptedLLM(["<think>maybe [0]</think>I resign"]), extractor)
    reply = await policy.act(_request())
    assert reply.meta["parse"] == "unformatted" and reply.rejection and reply.meta["extractor"]["move"] is None
    assert "maybe" not in extractor.calls[0]["messages"][1]["content"]


async def test_an_extracted_move_is_played_but_not_clean():
    extractor = ScriptedLLM([lambda legal: f"[{(legal or ['0'])[0]}]"])
    policy = _with_extractor(ScriptedLLM(["some prose"]), extractor)
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=2)
    turn = record.turns[0]
    assert turn.valid and turn.meta["parse"] == "extracted" and not turn.clean


def test_an_extractor_spec_takes_its_own_parameters_after_semicolons():
    policy = make_policy("openai:m,base_url=http://h/v1,parser=extractor:openai:x;base_url=http://e/v1;max_tokens=9")
    assert policy.parser.extractor.spec == "openai:x,base_url=http://e/v1,max_tokens=9,temperature=0"
    assert policy.settings.harness.parser.name == "extractor:openai:x;base_url=http://e/v1;max_tokens=9"


# ---------------------------------------------------------------- prompt variants


async def test_no_legal_moves_lists_none_and_names_none_in_its_examples():
    policy = ScriptedLLM(["I pass"], prompt="no-legal-moves")
    reply = await policy.act(_request(legal=("17", "23")))
    system, user = (m["content"] for m in policy.calls[0]["messages"])
    assert "Legal moves" not in user and "list of legal moves" not in system
    assert "17" not in system + user and "[move]" in user
    assert reply.rejection and "17" not in reply.rejection
    assert reply.meta["harness"]["prompt"] == "no-legal-moves"


async def test_san_lists_chess_moves_in_san_and_plays_the_games_move():
    game = make_game("chess")
    game.reset(0)
    request = MoveRequest(game_id="chess", game_name="Chess", rules="r", observation=game.observe(0),
                          move_notation=lambda notation: game.move_notation(0, notation))
    policy = ScriptedLLM(["[Nf3]"], prompt="san")
    reply = await policy.act(request)
    user = policy.calls[0]["messages"][-1]["content"]
    assert "Legal moves (SAN): " in user and "Nf3" in user and "g1f3" not in user
    assert reply.action == "g1f3" and reply.meta["notation"] == "san" and reply.meta["parse"] == "bracket"


async def test_san_in_tools_mode_enumerates_san_and_maps_the_call_back():
    game = make_game("chess")
    game.reset(0)
    request = MoveRequest(game_id="chess", game_name="Chess", rules="r", observation=game.observe(0),
                          move_notation=lambda notation: game.move_notation(0, notation))
    from arena.llm.prompting import Mode

    policy = ScriptedLLM([Completion(content=None, tool_arguments='{"move": "e4"}')], prompt="san", mode=Mode.TOOLS)
    reply = await policy.act(request)
    assert "e4" in policy.calls[0]["legal"] and reply.action == "e2e4"


async def test_a_game_with_one_notation_is_asked_as_by_default():
    policy = ScriptedLLM(["[4]"], prompt="san")
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=1, max_steps=1)
    assert record.turns[0].valid and "notation" not in record.turns[0].meta
    assert "(SAN)" not in policy.calls[0]["messages"][-1]["content"]
    assert record.turns[0].meta["harness"]["prompt"] == "san"


async def test_private_last_restates_each_seats_own_card_as_the_turns_last_line():
    policies = [ScriptedLLM(["[call]", "[check]"] * 4, prompt="private-last"), ScriptedLLM(["[call]", "[check]"] * 4, prompt="private-last")]
    record = await play_match(make_game("leduc_holdem"), policies, seed=3)
    game = make_game("leduc_holdem")
    game.reset(3)
    for seat, policy in enumerate(policies):
        card = game.secrets(seat)[0]  # "Your private card (Player N): X", this deal's
        other = game.secrets(1 - seat)[0]
        for call in policy.calls:
            user = call["messages"][-1]["content"]
            assert user.endswith("\n\n" + card)  # a retry too, which does not repeat the view
            assert other not in user  # never the other seat's
        assert policy.calls[0]["messages"][-1]["content"].count(card) == 2  # the view's own line, then the last
    assert {t.meta["harness"]["prompt"] for t in record.turns} == {"private-last"}


async def test_private_last_leaves_a_game_without_secrets_as_by_default():
    plain, restated = ScriptedLLM(["[4]"]), ScriptedLLM(["[4]"], prompt="private-last")
    for policy in (plain, restated):
        await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=1, max_steps=1)
    assert plain.calls[0]["messages"] == restated.calls[0]["messages"]


def test_private_last_keeps_the_public_state_of_two_cards_one():
    """The private contrast groups turns by their prompt with the card masked: the restated card
    is masked too, so the three cards of one public state still share it, and a state that differs
    only in what was bet does not."""
    from arena.llm.llm_policy import public_state
    from arena.llm.prompt_variants import PromptVariant
    from arena.llm.prompting import Mode, ObsMode, build_prompt
    from evaluation.exploitability import build_tree, infoset_labels

    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    by_label = {label: tree.infosets[key] for key, label in infoset_labels(tree).items()}
    variant = PromptVariant.parse("private-last")

    def state(label):
        request = by_label[label].request
        return public_state(build_prompt(request, mode=Mode.CHOICE, obs_mode=ObsMode.STATE, variant=variant).messages, request.legal_moves, request.private)

    opening = [label for label in by_label if "No actions yet" in label]
    assert len(opening) == 3 and len({state(label) for label in opening}) == 1
    second_seat = [label for label in by_label if "Player 0 checked. | It is your turn: check or bet." in label]
    assert len(second_seat) == 3 and len({state(label) for label in second_seat}) == 1
    assert state(second_seat[0]) != state(opening[0])


# ---------------------------------------------------------------- specs: errors, identity, display


@pytest.mark.parametrize("spec, message", [
    ("local,sampler=vote:1", r"sampler must be single, vote:N \(N 2-16\) or rethink:N \(N 1-8\), not 'vote:1'"),
    ("local,sampler=best", "sampler must be single, vote:N"),
    ("local,parser=regex", r"parser must be one of strict, fuzzy, extractor:SPEC, not 'regex'"),
    ("local,parser=extractor:bot", r"parser=extractor:SPEC needs an LLM policy spec \(openai, litellm, local, hf\)"),
    ("local,parser=fuzzy,parse=lenient", "give parser= or its older name parse=, not both"),
    ("local,prompt=ascii", r"prompt must be default, no-legal-moves, san or private-last \(the last three joined by \+ as needed\), not 'ascii'"),
    ("local,prompt=private-last+private-last", "not 'private-last\\+private-last'"),
    ("local,prompt=private-last+no-legal-moves,mode=choice", "prompt=no-legal-moves\\+private-last needs mode=text"),
    ("local,prompt=no-legal-moves,mode=tools", "prompt=no-legal-moves needs mode=text"),
    ("local,mode=choice,sampler=vote:3", "mode=choice draws one legal move .* takes sampler=single and parser=strict"),
    ("local,obs=chat,sampler=rethink:1", "obs=chat keeps one token chat per seat: use obs=history"),
])
def test_bad_harness_specs_get_one_line(spec, message):
    with pytest.raises(PolicySpecError, match=message) as err:
        make_policy(spec)
    assert "\n" not in str(err.value)


def test_the_policy_page_reads_the_harness_from_the_spec():
    assert describe_spec("local") == {"sampler": "single", "parser": "strict", "prompt": "default"}
    assert describe_spec("openai:m,sampler=vote:3,parse=lenient,prompt=san,reasoning_effort=low") == {
        "sampler": "vote:3", "parser": "fuzzy", "prompt": "san", "reasoning_effort": "low"}
    assert describe_spec("bot") is None and describe_spec("") is None
    assert describe_spec("local,sampler=nonsense")["sampler"] == "nonsense"  # shown as stored, never raised


@pytest.mark.slow
def test_two_harnesses_of_one_model_are_two_rows_and_the_default_spec_is_unchanged(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'harness.db'}")
    config = LeagueConfig(
        name="harness", seed=3, matches_per_pair=1, concurrency=2, games=[GameEntry(id="nim")],
        policies=[PolicyEntry(spec="local,max_new_tokens=6"), PolicyEntry(spec="local,max_new_tokens=6,sampler=vote:3"), PolicyEntry(spec="bot")],
    )
    asyncio.run(run_league(config, store))
    rows = {r.policy for r in leaderboard(store.results(), by="elo", bootstrap=0)}
    assert rows == {"local,max_new_tokens=6", "local,max_new_tokens=6,sampler=vote:3", "bot"}
    assert store.policy("local,max_new_tokens=6").spec == "local,max_new_tokens=6"
    records = list(store.iter_records())
    store.close()
    specs = {spec for record in records for spec in record.specs}
    assert "local,max_new_tokens=6" in specs  # the default harness adds nothing to a spec
    harnesses = {t.policy: t.meta["harness"]["sampler"] for r in records for t in r.turns if "harness" in t.meta}
    assert harnesses == {"local,max_new_tokens=6": "single", "local,max_new_tokens=6,sampler=vote:3": "vote:3"}
