"""`arena export`: stored matches as JSONL (records, SFT, DPO, LMArena battles), plus the kinds a
layer above league adds through `register_export_kind` (trainer adds `atropos`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console

from arena.user_errors import fail
from league.cli.store_option import DB_HELP, league_id_of, open_store

console = Console(highlight=False)


@dataclass(frozen=True)
class ExportKind:
    """An export kind composed above league: `write(store, out, league_id, game, push)` writes `out`
    and returns the line to print (a mistake raises `arena.user_errors.fail`); `pushes`
    says whether it takes --push."""

    write: Callable[[Any, Path, Optional[int], Optional[str], Optional[str]], str]
    pushes: bool = False


# Kinds that need a layer above league (`atropos` scores groups with trainer's rewards), added by
# that layer's command module through `register_export_kind`, so league never imports it.
EXPORT_KINDS_FROM_ABOVE: dict[str, ExportKind] = {}


def register_export_kind(kind: str, write: Callable[[Any, Path, Optional[int], Optional[str], Optional[str]], str], *, pushes: bool = False) -> None:
    EXPORT_KINDS_FROM_ABOVE[kind] = ExportKind(write, pushes)


def export_command(
    out: Path = typer.Option(..., "--out", help="JSONL file to write."),
    kind: str = typer.Option("records", "--kind", help="records (full match records), sft (winners' valid turns as chat messages), dpo (chosen/rejected replies at the same state), battles (LMArena's model_a/model_b/winner rows), leaderboard (one row per policy: rating, results, tokens, cost, time, invalid and forfeit rates) or atropos (scored groups of exact token ids for an Atropos hub)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, "--league", help="Only this league."),
    game: Optional[str] = typer.Option(None, "--game", help="Only this game id."),
    push: Optional[str] = typer.Option(None, "--push", help="With --kind atropos: also POST the groups to this Atropos hub (run-api), e.g. http://127.0.0.1:8000."),
    by: Optional[str] = typer.Option(None, "--by", help="With --kind leaderboard: the rating system, trueskill (default), elo or bt."),
) -> None:
    """Export stored matches as JSONL: TRL's SFTTrainer and DPOTrainer formats, LMArena's battles,
    or Atropos scored groups (exact token ids; pushed to a `run-api` hub with --push).

    Example: arena export --kind sft --out sft.jsonl --db sqlite:///demo.db
    Example: arena export --kind battles --out battles.jsonl --db sqlite:///demo.db
    Example: arena export --kind leaderboard --by bt --out board.jsonl --db sqlite:///demo.db
    Example: arena export --kind atropos --out groups.jsonl --push http://127.0.0.1:8000
    """
    from league.export import EXPORTERS, RATED_EXPORTS
    from league.ratings import SYSTEMS

    kinds = [*EXPORTERS, *EXPORT_KINDS_FROM_ABOVE]
    if kind not in kinds:
        raise fail(f"--kind {kind!r}: choose one of {', '.join(kinds)}")
    from_above = EXPORT_KINDS_FROM_ABOVE.get(kind)
    if push and not (from_above and from_above.pushes):
        pushing = [name for name, entry in EXPORT_KINDS_FROM_ABOVE.items() if entry.pushes]
        raise fail(f"--push needs --kind {' or '.join(pushing)} (got --kind {kind})" if pushing else "--push: no export kind here pushes")
    if by is not None and kind not in RATED_EXPORTS:
        raise fail(f"--by needs --kind {' or '.join(RATED_EXPORTS)} (got --kind {kind})")
    if by is not None and by not in SYSTEMS:
        raise fail(f"--by {by!r}: choose one of {', '.join(SYSTEMS)}")
    if out.parent and not out.parent.exists():
        raise fail(f"--out {out}: folder {out.parent} does not exist")
    store = open_store(db, must_exist=True)
    if from_above is not None:
        console.print(from_above.write(store, out, league_id_of(store, league), game, push), soft_wrap=True, markup=False)
        return
    rated = {"by": by or "trueskill"} if kind in RATED_EXPORTS else {}
    count = EXPORTERS[kind](store, out, league_id=league_id_of(store, league), game=game, **rated)
    console.print(f"wrote {count} {kind} rows to {out}")
