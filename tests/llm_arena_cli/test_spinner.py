"""Local models show a spinner while they load and while they think, on a terminal only."""

from __future__ import annotations

import io

from rich.console import Console

from arena.match import play_match
from arena.policy import make_policy
from arena.scripted import BotPolicy, RandomPolicy
from games.registry import make_game
from llm_arena_cli.spinner import ThinkingSpinner, is_local_model, make_with_loading_sign, with_thinking_signs


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=100), out


class Recorder(RandomPolicy):
    """A random player that remembers whether a spinner was up while it chose."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console, self.seen = console, []
        self.name, self.spec = "fake-local", "local"

    async def act(self, request):
        self.seen.append(self.console._live_stack[-1] if getattr(self.console, "_live_stack", None) else getattr(self.console, "_live", None))
        return await super().act(request)


def test_local_kinds_are_recognised():
    assert is_local_model("local,temperature=0.3") and is_local_model("hf:Qwen/Qwen2.5-0.5B-Instruct")
    assert not is_local_model("random") and not is_local_model("openai:gpt-4o-mini") and not is_local_model("")


async def test_a_spinner_runs_while_a_local_model_thinks_on_a_terminal():
    console, out = _console(terminal=True)
    inner = Recorder(console)
    seats = with_thinking_signs(console, [inner, BotPolicy()], ["local", "bot"])
    assert isinstance(seats[0], ThinkingSpinner) and isinstance(seats[1], BotPolicy)
    record = await play_match(make_game("tictactoe"), seats, seed=0)
    assert record.policies[0] == "fake-local" and record.specs[0] == "local"  # the record is the model's
    assert inner.seen and all(live is not None for live in inner.seen)
    assert "fake-local (seat 0) is thinking" in out.getvalue()


def test_nothing_is_added_off_a_terminal():
    console, out = _console(terminal=False)
    policies = [RandomPolicy(), BotPolicy()]
    assert with_thinking_signs(console, policies, ["local", "bot"]) == policies
    made = make_with_loading_sign(console, "random", make_policy)
    assert isinstance(made, RandomPolicy) and out.getvalue() == ""


def test_loading_shows_a_spinner_on_a_terminal():
    console, out = _console(terminal=True)
    make_with_loading_sign(console, "local", lambda spec: RandomPolicy())
    assert "loading the model for local" in out.getvalue()
