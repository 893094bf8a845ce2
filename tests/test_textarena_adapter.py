"""The TextArena adapter: every playable game plays through our API; the rest say why not."""

import asyncio
import random

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.game import GameError
from arena.match import play_match
from arena.policy import make_policy
from games import textarena_adapter
from games.registry import UnknownGameError, list_games, make_game


def _two_player_ids():
    return [i.id for i in textarena_adapter.game_infos() if i.available and i.min_players <= 2 <= i.max_players]


def test_probe_classifies_the_known_failures():
    infos = {i.id: i for i in textarena_adapter.game_infos()}
    assert len(infos) >= 90
    expected = {
        "textarena:Chess-v0": "Python 3.12",
        "textarena:Wordle-v0": "NLTK",
        "textarena:Debate-v0": "OPENROUTER_API_KEY",
        "textarena:ScorableGames-v0": "data files",
        "textarena:BabyAiText-v0": "import",
    }
    for game_id, words in expected.items():
        info = infos[game_id]
        if info.available:  # a newer textarena or Python fixed it: nothing to explain
            continue
        assert words in info.reason and "\n" not in info.reason, (game_id, info.reason)
    playable = [i for i in infos.values() if i.available]
    assert len(playable) >= 70


def test_unknown_and_unavailable_ids_give_one_clear_line():
    with pytest.raises(UnknownGameError, match="did you mean textarena:ConnectFour-v0"):
        make_game("textarena:ConectFour-v0")
    unavailable = [i for i in textarena_adapter.game_infos() if not i.available]
    if unavailable:
        with pytest.raises(GameError, match="cannot run here: "):
            make_game(unavailable[0].id)
    with pytest.raises(GameError, match="takes 2 players, not 3"):
        make_game("textarena:TicTacToe-v0", num_players=3)


def test_arena_games_lists_playable_by_default_and_reasons_with_all():
    runner = CliRunner()
    plain = runner.invoke(app, ["games", "--source", "textarena"])
    assert plain.exit_code == 0 and "ConnectFour-v0" in plain.output and "Wordle-v0" not in plain.output
    everything = runner.invoke(app, ["games", "--all", "--source", "textarena"], terminal_width=200)
    assert everything.exit_code == 0 and "Wordle-v0" in everything.output and "NLTK" in everything.output


def test_concurrent_matches_do_not_share_chance():
    """TextArena draws from the global random module; interleaved games must not disturb each other."""
    alone = make_game("textarena:KuhnPoker-v0")
    alone.reset(11)
    cards_alone = alone.observe(0).text
    a, b = make_game("textarena:KuhnPoker-v0"), make_game("textarena:KuhnPoker-v0")
    a.reset(11)
    b.reset(99)
    random.random()
    assert a.observe(0).text == cards_alone


def test_observing_is_idempotent_and_private():
    game = make_game("textarena:KuhnPoker-v0")
    game.reset(3)
    first = game.observe(0).text
    assert game.observe(0).text == first
    assert game.secrets(0) and game.secrets(0)[0] in first and game.secrets(0)[0] not in game.observe(1).text


def test_invalid_move_follows_textarena_rules():
    game = make_game("textarena:TicTacToe-v0")
    game.reset(0)
    result = game.step(0, "[99]")
    assert not result.valid and "invalid" in result.feedback.lower() and game.to_act() == [0]
    # TextArena's default allowance is one retry; the second invalid move loses
    result = game.step(0, "[99]")
    assert result.penalty == "forfeit" and game.is_over()
    assert game.outcome().ranks == [2, 1]


@pytest.mark.slow
@pytest.mark.parametrize("game_id", _two_player_ids())
def test_every_two_player_game_plays_to_the_end_with_random(game_id):
    game = make_game(game_id, num_players=2)
    record = asyncio.run(play_match(game, [make_policy("random"), make_policy("random")], seed=1, max_steps=1000))
    assert record.status in {"finished", "aborted"}
    if record.status == "finished":
        assert len(record.outcome["ranks"]) == 2
