"""`arena eval`: the commands that measure policies rather than play leagues (they compose games,
policies and the league store, so the group sits in the CLI package above all of them).

Each evaluation lives in its own module with a `register(eval_app)` function, listed in
EVAL_COMMAND_MODULES, so evaluations added side by side never edit one shared file.
"""

from __future__ import annotations

import importlib

import typer

eval_app = typer.Typer(
    help="Measure policies: frozen benchmark suites with anchored ratings, exact exploitability in small poker games.",
    no_args_is_help=True,
)
EVAL_COMMAND_MODULES = ("evaluation.cli", "evaluation.exploitability_cli")


def register(app: typer.Typer) -> None:
    for name in EVAL_COMMAND_MODULES:
        importlib.import_module(name).register(eval_app)
    app.add_typer(eval_app, name="eval")
