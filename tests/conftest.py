"""Suite-wide settings and the fixtures more than one folder of tests uses: the one vLLM engine a
test session shares, Kuhn poker's game tree, a private Ray instance.

Local-model specs default to `engine=auto` (vLLM where installed). The suite pins the hf engine
for every test that does not ask for vLLM, so existing tests keep one engine each and vLLM starts
once per session, for the tests that use `vllm_engine`.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ARENA_LOCAL_ENGINE", "hf")


@pytest.fixture(scope="session")
def vllm_engine():
    """The process's vLLM engine on the shipped model (started once, ~20-60 s on 2 cores)."""
    from arena.llm.engines import open_engine
    from arena.llm.engines.vllm import vllm_missing_reason

    reason = vllm_missing_reason()
    if reason:
        pytest.skip(reason)
    engine = open_engine("local", "vllm")
    yield engine
    engine.shutdown()


@pytest.fixture(scope="session")
def kuhn_tree():
    """One hand of Kuhn poker as the exact evaluation's game tree (12 information sets); read-only."""
    from evaluation.exploitability import build_tree
    from games.registry import make_game

    return build_tree(lambda: make_game("kuhn_poker", 2, hands=1))


@pytest.fixture(scope="module")
def ray_local():
    """A private 2-CPU Ray instance for the tests of one module, shut down after them."""
    from tests.services import local_ray

    with local_ray(cpus=2):
        yield
