"""`arena policy add|list|remove`: the policies registered in a league store, by name."""

from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from arena.redaction import redact
from arena.user_errors import fail
from league.cli.store_option import DB_HELP, open_store

console = Console(highlight=False)

policy_app = typer.Typer(help="Policies registered in the league store.", no_args_is_help=True)


@policy_app.command("list")
def policy_list(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Registered policies with their specs.

    Example: arena policy list --db sqlite:///demo.db
    """
    store = open_store(db, must_exist=True)
    table = Table(title="Policies")
    for column in ("name", "display name", "spec", "metadata"):
        table.add_column(column)
    for row in store.policies():
        notes = ", ".join(f"{k}={v}" for k, v in sorted(row.meta.items()))
        table.add_row(row.name, redact(row.display_name), redact(row.spec), redact(notes))  # stores from before redaction too
    console.print(table)


@policy_app.command("add")
def policy_add(
    spec: str = typer.Argument(..., help="Policy spec, e.g. openai:gpt-4o-mini,temperature=0 (keys come from env vars, never the spec)."),
    name: Optional[str] = typer.Option(None, "--name", help="Name in the store and leaderboards (default: the spec)."),
    display_name: Optional[str] = typer.Option(None, "--display-name", help="Label for the web leaderboard."),
    meta: list[str] = typer.Option([], "--meta", help="KEY=VALUE notes, repeatable (key-like fields are dropped)."),
    replace: bool = typer.Option(False, "--replace", help="Change the spec of an existing name."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Register a policy.

    Example: arena policy add local,temperature=0.3 --name smol-cold --meta note=baseline
    """
    from league.config import check_spec
    from league.store import StoreError

    problem = check_spec(spec)
    if problem:
        raise fail(problem)
    notes: dict[str, str] = {}
    for item in meta:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--meta {item!r}: expected KEY=VALUE")
        notes[key.strip()] = value.strip()
    try:
        open_store(db).upsert_policy(name or spec, spec, notes, display_name or "", replace=replace)
    except StoreError as exc:
        raise fail(str(exc))
    console.print(f"added {name or spec} ({redact(spec)})", markup=False)


@policy_app.command("remove")
def policy_remove(
    name: str = typer.Argument(..., help="The policy's name."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Forget a registered policy (its matches stay in the log and in ratings).

    Example: arena policy remove smol-cold
    """
    if not open_store(db, must_exist=True).remove_policy(name):
        raise fail(f"no policy named {name!r}")
    console.print(f"removed {name}")
