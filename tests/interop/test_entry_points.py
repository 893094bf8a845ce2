"""The names users type outside our code keep working across moves inside it (issue 27): the
`arena` console script, the verifiers plugin id `arena-verifiers` (resolved by verifiers' own
loader, as `vf-eval arena-verifiers` resolves it) and the interop entry points the docs show."""

from __future__ import annotations

import importlib.metadata

import pytest

pytestmark = pytest.mark.slow  # importing verifiers takes ~10 s on 2 cores


def test_the_console_script_runs_the_arena_command():
    from llm_arena_cli.app import main

    (script,) = importlib.metadata.entry_points(group="console_scripts", name="arena")
    assert script.load() is main


def test_verifiers_finds_our_taskset_env_and_harness_by_the_plugin_id():
    from verifiers.v1.utils.loaders import environment_class, harness_class, taskset_class

    from interop.verifiers import ArenaChatHarness, ArenaEnv, ArenaTaskset

    assert taskset_class("arena-verifiers") is ArenaTaskset
    assert environment_class("arena-verifiers") is ArenaEnv
    assert harness_class("arena-verifiers") is ArenaChatHarness


def test_the_interop_entry_points_in_the_docs_exist():
    import gem

    import interop.gem
    from interop import pettingzoo, trl, verifiers

    assert callable(pettingzoo.env) and callable(pettingzoo.raw_env)  # docs/pettingzoo.md
    assert "arena:kuhn_poker" in interop.gem.GEM_IDS and gem.make("arena:kuhn_poker", opponents=["bot"]) is not None  # docs/gem.md
    assert callable(verifiers.load_environment)  # docs/verifiers.md
    assert callable(trl.environment_factory) and callable(trl.seed_dataset)  # docs/openenv.md, README
