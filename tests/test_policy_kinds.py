"""Policy kinds are registered explicitly (arena.policy.KINDS, one line per kind, factories named by
string): a line whose module or factory is gone fails here, and listing the kinds imports none of
the heavy SDKs, so `arena games` and `--help` stay fast."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.policy import KINDS, PolicySpecError, kind_factory, known_kinds, make_policy

HEAVY = ("torch", "transformers", "openai", "litellm", "httpx", "arena.llm.llm_policy", "arena.llm.local_policy", "arena.llm.openai_policy", "arena.llm.litellm_policy")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_line_names_a_factory_that_exists(kind):
    factory = kind_factory(kind)
    assert callable(factory), f"arena.policy.KINDS[{kind!r}] = {KINDS[kind].factory!r}: no such function"


def test_listing_and_making_scripted_kinds_imports_no_sdk():
    probe = ("import sys; from arena.policy import known_kinds, make_policy; kinds = known_kinds(); make_policy('bot'); "
             f"loaded = [m for m in {HEAVY!r} if m in sys.modules]; print(sorted(kinds), loaded)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    kinds, loaded = done.stdout.strip().rsplit("] ", 1)
    assert loaded == "[]", f"listing kinds imported {loaded}"
    assert all(f"'{kind}'" in kinds for kind in KINDS)


def test_an_unknown_kind_says_which_exist():
    with pytest.raises(PolicySpecError, match=r"unknown policy 'bott'; did you mean bot\b.*kinds: .*local"):
        make_policy("bott")
    assert set(KINDS) <= set(known_kinds())
