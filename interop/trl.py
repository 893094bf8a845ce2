"""One seat of any of our games as a TRL `GRPOTrainer(environment_factory=...)` environment.

TRL's contract (TRL >= 1.8, experimental there; tested with 1.16): the factory is a zero-argument callable; TRL keeps a
pool of instances (one per rollout of a generation batch) and, per rollout, calls
`reset(**dataset_row)` (the returned text is appended to the prompt's last user message), exposes
every public method other than `reset`/`get_reward` to the model as a tool, runs the model's tool
calls until it stops calling them, then calls `get_reward()` once.

Here the one tool is `make_move(move)`: it plays the model's move for its seat, the other seats are
played in-process by policy specs (`bot`, `random`, ...) through `arena.seat_environment` (the
single-seat view `arena serve-env`, GEM and verifiers share), and the tool answers with what the
seat sees next, the game's feedback on a rejected move, or the result. Retries after invalid
moves and forfeits are the league's. The reward is the seat's outcome score. A rollout that stops
calling `make_move` before the game ends is finished the way a league treats a seat that stops
answering: its missing replies are empty, so the game's invalid-move rule decides (a forfeit in
most games, scored below a loss).

GRPO compares the rollouts of one prompt, so they must play the same deal: every dataset row
carries a `seed` (`seed_dataset` builds such rows), and the rollouts of a row share it.

    from trl import GRPOConfig, GRPOTrainer
    from interop.trl import environment_factory, seed_dataset

    trainer = GRPOTrainer(model, args=GRPOConfig(...), train_dataset=seed_dataset(64),
                          environment_factory=environment_factory("kuhn_poker", opponents=["bot"]))
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import re
import threading
import weakref
from typing import Any, Callable, Coroutine, Sequence, TypeVar

from arena.llm.prompting import Mode, TOOL_NAME, answer_format
from arena.match import MatchRecord
from arena.policy import PolicySpec
from arena.seat_environment import SeatEnvironment, SeatView
from games.registry import make_game
from interop.seat_prompt import intro, turn_text

PLAYER_NAME = "trl-player"  # the trained seat's policy name in its MatchRecords
REFUSED_KINDS = frozenset({"human"})  # would wait on a terminal in the middle of training
MIN_TRL = (1, 8)  # the first TRL whose environments may own their reward (`get_reward`)
FINISH_LIMIT = 10_000  # empty replies at most when finishing an abandoned episode (match step cap)

T = TypeVar("T")
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the one event loop, in a daemon thread, that hosts every environment's
    episode. Not the caller's thread: TRL calls tools from its training thread, and in a notebook
    that thread already runs a loop of its own."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="arena-trl-episodes", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()


async def _new_environment(**kwargs: Any) -> SeatEnvironment:
    return SeatEnvironment(**kwargs)  # built on the episodes' loop, so its asyncio objects belong to it


def _close_environment(environment: SeatEnvironment) -> None:
    # Not waited for: a garbage collection may run this on the loop's own thread.
    if _loop is not None and _loop.is_running():
        asyncio.run_coroutine_threadsafe(environment.close(), _loop)


class ArenaGameEnv:
    """One seat of `game` against `opponents` (policy specs, in seat order; default `random` for
    each other seat). Build it through `environment_factory(...)`, which TRL calls per rollout.

    Public methods are TRL tools, so everything else here is private or a property."""

    def __init__(
        self,
        game: str = "kuhn_poker",
        opponents: Sequence[str] | None = None,
        seat: int = 0,
        num_players: int | None = None,
        options: dict[str, Any] | None = None,
        name: str = PLAYER_NAME,
        opponent_timeout: float | None = 60.0,
    ) -> None:
        self._game_id, self._options, self._num_players = game, dict(options or {}), num_players
        probe = make_game(game, num_players, **self._options)  # a bad id or option fails here, in one line
        self._game_name = probe.name
        self._opponents = [str(s) for s in opponents] if opponents is not None else ["random"] * (probe.num_players - 1)
        if not self._opponents:
            raise ValueError(f"{game}: TRL trains one seat, so it needs opponents (hot-seat would score one seat for every seat's moves)")
        for spec in self._opponents:
            if PolicySpec.parse(spec).kind in REFUSED_KINDS:
                raise ValueError(f"opponent {spec!r}: a human cannot play inside a training run")
        self._seat = int(seat)
        self._environment = _run(_new_environment(make_game=make_game, name=name, opponent_timeout=opponent_timeout))
        # TRL never closes its pooled environments: release the opponents when one is collected.
        self._closer = weakref.finalize(self, _close_environment, self._environment)
        self._closer.atexit = False  # at exit the process takes everything with it
        self._view: SeatView | None = None
        self._seed: int | None = None
        self._reward: float | None = None

    # ---- TRL's contract -------------------------------------------------------------------------
    def reset(self, seed: int | None = None, seat: int | None = None, **row: Any) -> str:
        """Start the episode of one dataset row: `seed` picks the deal and the opponents' sampling
        (every rollout of a GRPO group gets the same row, hence the same episode); an optional
        `seat` column overrides the factory's seat. Other columns (`prompt`, yours) are ignored."""
        if seed is None:
            raise ValueError(
                f"{type(self).__name__}.reset: the dataset row has no `seed` column, so the rollouts of a GRPO group "
                "would play different deals; build the train_dataset with interop.trl.seed_dataset(...)"
            )
        try:
            self._seed = int(seed)
            seat = self._seat if seat is None else int(seat)
        except (TypeError, ValueError):
            raise ValueError(f"{type(self).__name__}.reset: seed and seat must be integers, got seed={seed!r} seat={seat!r}") from None
        self._reward = None
        self._view = _run(self._environment.reset(
            self._game_id,
            seed=self._seed,
            seat=seat,
            options=self._options,
            opponents=self._opponents,
            num_players=self._num_players,
        ))
        return intro(self._view, self._game_name) + "\n\n" + _turn_text(self._view)

    def make_move(self, move: str) -> str:
        """
        Play your move in the game. The other players then move until it is your turn again.

        Args:
            move: Your move, written exactly as the rules describe (one of the legal moves when they are listed).

        Returns:
            What you see next: your view of the game and the legal moves, why your move was rejected, or the result.
        """
        if self._view is None:
            raise RuntimeError("no game is running")
        if self._view.done:
            raise RuntimeError("the game is over; stop calling make_move")
        self._view = _run(self._environment.step(str(move)))
        return _turn_text(self._view)

    def get_reward(self) -> float:
        """The seat's outcome score, finishing the episode first if the model stopped playing."""
        if self._reward is not None:
            return self._reward
        if self._view is None:
            raise RuntimeError(f"{type(self).__name__}.get_reward: reset was never called")
        for _ in range(FINISH_LIMIT):
            if self._view.done:
                break
            self._view = _run(self._environment.step(""))  # an empty reply: rejected, then the invalid-move rule
        self._reward = float(self._view.reward or 0.0)
        return self._reward

    # ---- read-only results (properties: TRL exposes only methods as tools) ------------------------
    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def view(self) -> SeatView | None:
        """The last view of the episode (its `outcome` once done)."""
        return self._view

    @property
    def record(self) -> MatchRecord | None:
        """The finished episode's MatchRecord (every turn, as a league stores it), or None."""
        return self._environment.record

    @property
    def state(self) -> dict[str, Any]:
        """The episode's JSON state; the game's full state only once done (it holds the opponents' secrets)."""
        return self._environment.state()


def _tool_answer(legal_moves: list[str] | None) -> str:
    """How a reply states its move here: by calling the tool."""
    if legal_moves is not None:
        return answer_format(Mode.TOOLS, legal_moves)
    return f"Call the function `{TOOL_NAME}` with your move or message, written exactly as the rules describe."


def _turn_text(view: SeatView) -> str:
    """One turn as the tool answers it: the league's turn text, answered by calling the tool."""
    return turn_text(view, answer=_tool_answer)


def environment_factory(
    game: str,
    *,
    opponents: Sequence[str] | None = None,
    seat: int = 0,
    num_players: int | None = None,
    options: dict[str, Any] | None = None,
    name: str = PLAYER_NAME,
    opponent_timeout: float | None = 60.0,
) -> Callable[[], ArenaGameEnv]:
    """The zero-argument factory TRL's `environment_factory=` takes. The arguments are checked now
    by starting one episode, so a bad game id, option, seat or opponent spec fails here in one line,
    not inside the trainer. `name` is the trained seat's policy name in the episodes' MatchRecords."""
    _check_trl_version()
    kwargs = dict(game=game, opponents=opponents, seat=seat, num_players=num_players, options=options,
                  name=name, opponent_timeout=opponent_timeout)
    probe = ArenaGameEnv(**kwargs)
    try:
        probe.reset(seed=0)
    finally:
        probe._closer()
    return functools.partial(ArenaGameEnv, **kwargs)


def _check_trl_version() -> None:
    """Before TRL 1.8 `get_reward` was not the environment's reward but one more tool the model
    could call, so refuse those versions (where TRL is installed at all) with the fix."""
    try:
        installed = importlib.metadata.version("trl")
    except importlib.metadata.PackageNotFoundError:
        return
    if tuple(int(part) for part in re.findall(r"\d+", installed)[:2]) < MIN_TRL:
        raise RuntimeError(f"interop.trl needs trl>=1.8 (environments that own their reward); installed: trl {installed}")


def seed_dataset(num_seeds: int, first_seed: int = 0, prompt: str = "") -> Any:
    """A `datasets.Dataset` of `num_seeds` rows for GRPOTrainer: `seed` first_seed, first_seed+1,
    ... and a conversational `prompt` whose one user message is `prompt` (the environment's
    `reset` text is appended to it)."""
    from datasets import Dataset  # a TRL dependency; imported here so the module loads without it

    if num_seeds < 1 or first_seed < 0:
        raise ValueError(f"seed_dataset: num_seeds must be >= 1 and first_seed >= 0, got {num_seeds} and {first_seed}")
    seeds = list(range(first_seed, first_seed + num_seeds))
    return Dataset.from_dict({"prompt": [[{"role": "user", "content": prompt}] for _ in seeds], "seed": seeds})
