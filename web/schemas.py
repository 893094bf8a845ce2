"""The JSON API's response models: what /api/openapi.json documents, and helpers that fill them from
the query results (web.queries). Routes import them; nothing here knows about requests."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_type_hints

from fastapi import Path as PathParam
from pydantic import BaseModel, Field, create_model

from league.move_stats import DEFINITIONS
from web import queries as q
from web.data import LeaderboardRow

System = Literal["trueskill", "elo", "bt"]
Interval = Literal["bootstrap", "sandwich"]  # Bradley-Terry only
Pooling = Literal["games", "matches"]  # Bradley-Terry only
Result = Literal["win", "draw", "loss"]
MatchId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="the match's id")]  # a database integer
Status = Literal["finished", "aborted", "running", "scheduled", "abandoned"]


# One leaderboard row, the same fields as the read model's row (web.data.LeaderboardRow), so the
# API and the pages cannot drift apart; the per-move columns carry their definitions into the schema.
LeaderboardEntry = create_model("LeaderboardEntry", **{
    name: (hint, Field(..., description=DEFINITIONS.get(name))) for name, hint in get_type_hints(LeaderboardRow).items()
})


class LeaderboardOut(BaseModel):
    league: str
    game: str
    system: System
    ci: Interval = Field("bootstrap", description="Bradley-Terry interval: bootstrap over matches or sandwich (robust) standard errors")
    pooling: Pooling = Field("games", description="Bradley-Terry over all games: each game weighs the same, or each match once")
    from_snapshots: bool
    rows: list[LeaderboardEntry]


class MatchOut(BaseModel):
    id: int
    key: str
    game_id: str
    seats: list[str]
    status: str
    ranks: list[int]
    scores: list[float]
    reason: str
    winners: list[str]
    draw: bool
    seed: int
    attempts: int
    duration_s: float | None
    scheduled_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None


class MatchPage(BaseModel):
    league: str
    total: int
    page: int
    per_page: int
    matches: list[MatchOut]


class TurnOut(BaseModel):
    index: int
    player: int
    policy: str
    turn: int
    attempt: int
    observation: str
    legal_moves: list[str] | None
    raw: str
    action: str | None
    valid: bool
    feedback: str
    penalty: str | None
    error: str | None
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None


class MatchDetail(MatchOut):
    turns: list[TurnOut]
    final_views: list[str]


class PairOut(BaseModel):
    row: str
    column: str
    wins: int
    draws: int
    losses: int
    games: int
    win_rate: float | None


class HeadToHeadOut(BaseModel):
    league: str
    game: str
    policies: list[str]
    pairs: list[PairOut]


class HistoryPoint(BaseModel):
    after_matches: int
    rating: float
    lo: float
    hi: float
    rank: int
    games: int


class PolicyOut(BaseModel):
    league: str
    name: str
    spec: str
    harness: dict[str, Any] | None = None  # an LLM's sampler, parser, prompt (and reasoning budget), read from its spec
    system: System
    rating: HistoryPoint | None
    history: list[HistoryPoint]
    stats: dict[str, Any]
    per_game: list[dict[str, Any]]
    opponents: list[PairOut]


class LiveOut(BaseModel):
    league: str
    counts: dict[str, int]
    running: list[MatchOut]
    finished: list[MatchOut]
    standings: list[HistoryPoint | dict[str, Any]]


class LeagueOut(BaseModel):
    name: str
    games: list[str]


class RerateOut(BaseModel):
    league: str
    snapshot_rows: int


class RunSummaryOut(BaseModel):
    name: str
    base: str
    checkpoints: int
    evaluated: int
    last_step: int


class CheckpointOut(BaseModel):
    step: int
    policy: str
    spec: str
    eval_league: str | None
    rating: float | None
    lo: float | None
    hi: float | None
    rank: int | None
    wins: int
    draws: int
    losses: int
    games: int
    score: float | None  # wins + draws/2 over games, against the fixed opponents
    versus: list[PairOut]


class OpponentOut(BaseModel):
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int


class RunOut(BaseModel):
    name: str
    base: str
    system: Literal["bt"] = "bt"
    matches: int
    checkpoints: list[CheckpointOut]
    opponents: list[OpponentOut]


class PlayOut(BaseModel):
    """A browser game (`arena web --play`) as the visitor's seat sees it (web.play.view_out)."""

    id: str = Field(description="the game's session id: the capability to move in it")
    game_id: str
    seed: int
    seat: int = Field(description="the visitor's seat, 0-based")
    name: str = Field(description="the visitor's name, the policy the stored match is rated under")
    opponent: str | None = Field(description="the opponent as asked for; null in a one-player game")
    players: list[str] = Field(description="the policy name at each seat")
    solo: bool = Field(description="a one-player game: not stored, nothing to rate")
    player: int | None = Field(description="whose move the page sends next; null once done")
    role: str
    text: str = Field(description="the seat's private view as the game renders it (newest end kept)")
    text_cut: int = Field(description="characters cut from the start of `text`")
    legal_moves: list[str] | None = Field(description="null where moves are free text")
    feedback: str | None = Field(description="why the visitor's last move was rejected")
    turn: int
    attempt: int
    done: bool
    status: str
    outcome: dict[str, Any] | None
    reward: float | None
    result: Result | None = Field(description="from the visitor's seat, once done (null in a one-player game)")
    rank: int | None
    rules: str
    league: str = Field(description="the league finished games join")
    match_id: int | None = Field(description="the stored league match, once done")
    store_error: str | None


def point_out(st: q.Standing) -> HistoryPoint:
    return HistoryPoint(after_matches=st.after_matches, rating=st.rating, lo=st.lo, hi=st.hi, rank=st.rank, games=st.games)


def pair_out(a: str, b: str, pair: q.Pair) -> PairOut:
    return PairOut(row=a, column=b, wins=pair.wins, draws=pair.draws, losses=pair.losses, games=pair.games, win_rate=pair.win_rate)


def stats_dict(stats: q.PolicyStats) -> dict[str, Any]:
    return {
        "games": stats.games, "wins": stats.wins, "draws": stats.draws, "losses": stats.losses,
        "invalid": stats.invalid, "penalties": stats.penalties, "avg_tokens": stats.avg_tokens,
        "avg_latency_ms": None if stats.avg_latency_s is None else stats.avg_latency_s * 1000.0,
        "last_played": stats.last_played.isoformat(timespec="seconds") if stats.last_played else None,
        **stats.columns(),
    }
