"""Terminal rendering of matches (live and replayed). Model text is printed with markup off,
so a reply containing rich markup or escape-like text is shown literally."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from arena.game import Game
from arena.match import MatchRecord, TurnRecord


def _turn_line(turn: TurnRecord) -> Text:
    line = Text()
    line.append(f"[{turn.index:>3}] ", style="dim")
    line.append(f"{turn.policy} (seat {turn.player})", style="bold")
    if turn.error:
        line.append(f"  {turn.error}", style="red")
    elif turn.valid:
        line.append(f"  plays {turn.action}", style="green")
    else:
        line.append(f"  invalid: {(turn.action or '')[:80]!r}", style="yellow")
    if not turn.valid and turn.feedback:
        line.append(f"  ({turn.feedback[:160]})", style="yellow")
    if turn.penalty:
        line.append(f"  -> {turn.penalty}", style="bold red")
    if turn.raw and turn.raw.strip() != (turn.action or "").strip():
        line.append(f"\n      said: {turn.raw.strip()[:200]!r}", style="dim")
    line.append(f"  {turn.latency_s * 1000:.0f} ms", style="dim")
    return line


def _view_panel(turn: TurnRecord) -> Panel:
    return Panel(Text(turn.observation), title=f"seat {turn.player} sees", title_align="left", expand=False)


class TurnPrinter:
    """`on_turn` callback for play_match: prints each attempt as it happens."""

    def __init__(self, console: Console, show_views: bool = True) -> None:
        self.console = console
        self.show_views = show_views

    def __call__(self, game: Game, turn: TurnRecord) -> None:
        if self.show_views and turn.attempt == 0:
            self.console.print(_view_panel(turn))
        self.console.print(_turn_line(turn))


def print_final_view(console: Console, record: MatchRecord, seat: int = 0) -> None:
    """The position the match ended in, as `seat` sees it (the last move is otherwise never shown)."""
    if 0 <= seat < len(record.final_views):
        console.print(Panel(Text(record.final_views[seat]), title=f"final position (seat {seat})", title_align="left", expand=False))


def print_result(console: Console, record: MatchRecord) -> None:
    if record.outcome is None:
        console.print(Text(f"{record.game_id}: no result ({record.status})", style="bold red"))
        return
    out = record.result
    assert out is not None
    parts = []
    for seat, name in enumerate(record.policies):
        parts.append(f"{name} (seat {seat}): rank {out.ranks[seat]}, score {out.scores[seat]:g}")
    head = "Draw" if out.is_draw else "Winner: " + ", ".join(record.policies[w] + f" (seat {w})" for w in out.winners)
    body = Text(f"{head} - {out.reason}\n" + "\n".join(parts))
    console.print(Panel(body, title=f"{record.game_id} result", expand=False))


def print_record(console: Console, record: MatchRecord, show_views: bool = True) -> None:
    console.print(Text(f"{record.game_id}  seed {record.seed}  {record.started_at}  {len(record.turns)} turns", style="bold"))
    for turn in record.turns:
        if show_views and turn.attempt == 0:
            console.print(_view_panel(turn))
        console.print(_turn_line(turn))
    if show_views:
        print_final_view(console, record)
    print_result(console, record)
