"""A league that fails at start-up leaves the store exactly as it was (every table's rows, dumped
before and after), and the fixed file then runs under the same name: on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from llm_arena_cli.app import app

runner = CliRunner()

FIRST = "name: first\nseed: 1\ngames: [{id: tictactoe}]\npolicies: [bot, random]\n"
FIXED = "name: second\nseed: 2\ngames: [{id: tictactoe}]\npolicies: [{name: rnd, spec: 'random,seed=3'}, bot]\n"
# Each one fails at a different point of the start: the store, the policy factory, the config.
BROKEN = {
    "name clash": "name: second\nseed: 2\ngames: [{id: tictactoe}]\npolicies: [{name: bot, spec: 'random,seed=3'}, random]\n",
    "bad parameter": (
        "name: second\nseed: 2\ngames: [{id: tictactoe}]\n"
        "policies: [{name: rnd, spec: 'openai:m,base_url=http://127.0.0.1:9/v1,temperature=9'}, bot]\n"
    ),
    "unknown parameter": "name: second\nseed: 2\ngames: [{id: tictactoe}]\npolicies: [{name: rnd, spec: 'random,colour=3'}, bot]\n",
    "literal secret": (
        "name: second\nseed: 2\ngames: [{id: tictactoe}]\n"
        "policies: [{name: rnd, spec: 'openai:m,api_key=sk-TESTSECRET123'}, bot]\n"
    ),
    "unknown game": "name: second\nseed: 2\ngames: [{id: tictacto}]\npolicies: [{name: rnd, spec: 'random,seed=3'}, bot]\n",
    "changed schedule": "name: first\nseed: 9\ngames: [{id: tictactoe}]\npolicies: [bot, random]\n",
}


def dump(url: str) -> dict[str, list[tuple]]:
    """Every row of every table, in primary-key order."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            tables = sorted(inspect(connection).get_table_names())
            return {t: [tuple(r) for r in connection.execute(text(f'SELECT * FROM "{t}" ORDER BY 1'))] for t in tables}
    finally:
        engine.dispose()


def _run(config, url: str):
    return runner.invoke(app, ["league", "run", str(config), "--db", url, "-q"], terminal_width=200)


def test_a_failed_start_leaves_nothing_and_the_fixed_file_runs(store_url, tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(FIRST)
    assert _run(config, store_url).exit_code == 0
    before = dump(store_url)
    assert before["leagues"] and before["policies"] and before["matches"]
    for why, broken in BROKEN.items():
        config.write_text(broken)
        result = _run(config, store_url)
        assert result.exit_code == 2, (why, result.output)
        assert len(result.output.strip().splitlines()) == 1, (why, result.output)
        assert dump(store_url) == before, f"{why}: the store changed"
    config.write_text(FIXED)
    fixed = _run(config, store_url)
    assert fixed.exit_code == 0 and "second: 1 matches stored (1 played now" in fixed.output, fixed.output


def test_a_policy_that_cannot_be_built_writes_nothing_through_the_api(store):
    """The runner itself (not only the CLI's config checks): the league row, its games and
    policies are written after every policy is built, in one transaction."""
    import asyncio

    from league.config import parse_config
    from league.runner import LeagueError, run_league

    before = dump(store.url)
    config = parse_config({"name": "api", "games": [{"id": "kuhn_poker"}],
                           "policies": ["bot", {"name": "x", "spec": "openai:m,base_url=http://127.0.0.1:9/v1,top_p=7"}]})
    with pytest.raises(LeagueError, match=r"policies\[1\]\.spec"):
        asyncio.run(run_league(config, store))
    assert dump(store.url) == before
