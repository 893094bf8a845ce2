"""The league's commands, one module per command group: `arena league run|status|rerate`
(league_runs.py), `arena leaderboard` (leaderboard.py), `arena policy add|list|remove`
(policies.py) and `arena export` (export.py). llm_arena_cli/app.py calls `register(app)`.

Every user mistake (a bad config, an unknown policy, a store that cannot be opened) is one line on
stderr and exit code 2 (`arena.user_errors.fail`); an interrupted league exits 130 after saying how
to resume.
"""

from __future__ import annotations

import typer

from league.cli import export, leaderboard, league_runs, policies


def register(app: typer.Typer) -> None:
    app.add_typer(league_runs.league_app, name="league")
    app.add_typer(policies.policy_app, name="policy")
    app.command("leaderboard")(leaderboard.leaderboard_command)
    app.command("export")(export.export_command)
