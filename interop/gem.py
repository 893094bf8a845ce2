"""Every playable game as a GEM environment: `import interop.gem; gem.make("arena:kuhn_poker")`.

GEM (`gem-llm`) is a gym for LLM agents: `reset(seed) -> (obs, info)` and
`step(action) -> (obs, reward, terminated, truncated, info)` with text in and out, and wrappers
that turn the episode into one growing chat. One episode is one seat of a match; the other seats
are played in-process by policy specs (`random`, `bot`, `local`, `openai:...`) through
`arena.seat_environment`, the same single-seat view `arena serve-env` serves, so retries after invalid
moves and forfeits are exactly a league match's.

Observations are the league's prompt text (rules on the first turn, then the player's view, the
legal moves and the answer format); actions are the model's raw reply, parsed as the league's
LLM policy parses it. The reward is the seat's outcome score, given on the step that ends the
episode (0 before). Importing this module registers `arena:<game id>` for every playable game
(`arena:tictactoe`, `arena:textarena:ConnectFour-v0`).
"""

from __future__ import annotations

import random
from typing import Any, Sequence

import gem
from gem.core import Env

from arena.seat_environment import SeatView, SyncSeatEnvironment
from games.registry import list_games, make_game
from interop.seat_prompt import first_text, parse_reply, reply_fields, turn_text

ID_PREFIX = "arena:"


class ArenaGemEnv(Env):
    """One seat of one of our games (see the module docstring)."""

    def __init__(
        self,
        game: str,
        opponents: Sequence[str] | None = None,
        seat: int = 0,
        num_players: int | None = None,
        options: dict[str, Any] | None = None,
        seed: int | None = None,
        opponent_timeout: float | None = 60.0,
    ) -> None:
        super().__init__()
        self.game_id = game
        self.options = dict(options or {})
        probe = make_game(game, num_players, **self.options)  # a bad id or option fails here, in one line
        self.game_name = probe.name
        if opponents is None:  # every other seat plays uniformly random legal moves
            opponents = ["random"] * (probe.num_players - 1)
        self.opponents = [str(spec) for spec in opponents]
        self.seat = int(seat)
        self.num_players = num_players
        self._next_seed = seed
        self.seed: int | None = None
        self._environment = SyncSeatEnvironment(make_game=make_game, opponent_timeout=opponent_timeout)
        self._view: SeatView | None = None

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode. `seed` picks the deal (the game's seed, as in `arena play --seed`);
        without one, the seed after the last one is used (the first draws one)."""
        if seed is None:
            seed = self._next_seed if self._next_seed is not None else random.SystemRandom().randrange(2**31)
        self.seed = int(seed)
        self._next_seed = self.seed + 1
        view = self._environment.reset(
            self.game_id,
            seed=self.seed,
            seat=self.seat,
            options=self.options,
            opponents=self.opponents,
            num_players=self.num_players,
        )
        self._view = view
        return first_text(view, self.game_name), self._info(view)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play the model's reply for this seat; other seats move until it is this seat's turn again."""
        if self._view is None or self._view.done:
            raise RuntimeError(f"{self.game_id}: the episode is over; call reset() to start another")
        parsed = parse_reply(str(action), self._view)
        view = self._environment.step(parsed.action, **reply_fields(str(action), parsed))
        self._view = view
        info = self._info(view)
        info["move"], info["parse"] = parsed.action, parsed.method
        if not view.done:
            return turn_text(view), 0.0, False, False, info
        truncated = view.status != "finished"  # the match was cut short (step limit), not decided
        return turn_text(view), float(view.reward or 0.0), not truncated, truncated, info

    def sample_random_action(self) -> str:
        """A random legal move in the answer format, or a random valid text for free-text games."""
        if self._view is None or self._view.done or self._view.player is None:
            raise RuntimeError(f"{self.game_id}: no move is due; call reset() first")
        rng = random.Random()
        if self._view.legal_moves:
            return f"[{rng.choice(self._view.legal_moves)}]"
        game = self._environment.environment.game
        assert game is not None
        return game.random_move(self._view.player, rng)

    def close(self) -> None:
        self._environment.close()

    @property
    def record(self) -> Any:
        """The finished episode's MatchRecord (every turn, as a league stores it), or None."""
        return self._environment.record

    def _info(self, view: SeatView) -> dict[str, Any]:
        info: dict[str, Any] = {
            "game": view.game_id,
            "seed": self.seed,
            "seat": view.seat,
            "role": view.role,
            "turn": view.turn,
            "attempt": view.attempt,
            "legal_moves": view.legal_moves,
            "feedback": view.feedback,
        }
        if view.done:
            info["outcome"], info["status"] = view.outcome, view.status
        return info


def register_all() -> list[str]:
    """Register `arena:<id>` in GEM for every playable game; returns the ids."""
    from gem.envs.registration import ENV_REGISTRY

    ids = []
    for info in list_games():
        env_id = ID_PREFIX + info.id
        if env_id not in ENV_REGISTRY:
            gem.register(env_id, entry_point=ArenaGemEnv, game=info.id)
        ids.append(env_id)
    return ids


GEM_IDS = register_all()
