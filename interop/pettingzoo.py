"""Every playable game as a PettingZoo AEC environment: `interop.pettingzoo.env("tictactoe")`.

PettingZoo is the interface multi-agent RL code already speaks (and its `api_test`/`seed_test`
are the checks researchers trust). The environment drives a `Game` directly, one agent per seat
(`player_0`, `player_1`, ...); nothing about the rules changes here: an invalid text move gets the
game's feedback and retry allowance, then the game's own rule (forfeit, elimination, random move).

Spaces, per agent (see docs/pettingzoo.md):
- observation: `Dict` with
  - `observation`: `Box(0, 255, (N,), uint8)`, the UTF-8 bytes of the player's view, zero padded
    (the tail is kept when a view is longer than N). A fixed-size encoding of exactly what the
    player may see, so it never leaks another seat's secrets.
  - `view`: the same view as text (`Text`, any Unicode, at most `VIEW_CHARS` characters).
  - `action_mask`: `int8` of length n, only where moves are enumerable: 1 for each index that
    names a legal move now.
- action: `Discrete(n)` where the game lists its legal moves: action i plays the i-th legal move
  in the order the game lists them (`infos[agent]["legal_moves"]`); n is the game's bound on how
  many legal moves one position can have. Free-text games (negotiation, most TextArena games)
  take a `Text` action: the move as the player would type it.

`reset(seed=s)` plays the game's seed s (the same game `arena play --seed s` plays); a later
`reset()` without a seed plays s+1, s+2, ...; the very first unseeded reset draws a seed.
Rewards are the outcome's scores, given when the game ends.
"""

from __future__ import annotations

import random
import string
from typing import Any, Callable

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from arena.game import Game, GameError
from arena.match import MAX_REPLY_CHARS
from games.registry import TEXTARENA_PREFIX, make_game

VIEW_CHARS = 65_536  # views are capped (tail kept): TextArena views grow with the game's log
NATIVE_VIEW_BYTES = 4_096  # native views are under 1 KB; the byte encoding leaves room to spare
TEXTARENA_VIEW_BYTES = 65_536
TEXTARENA_MOVE_BOUND = 512  # TextArena games with exact legal-move lists (TicTacToe 9 ... Othello 60)

# How many legal moves one position of a native game can have, from its options. A position with
# more would be a bug in this table: the environment raises rather than hide moves.
NATIVE_MOVE_BOUNDS: dict[str, Callable[[Game], int]] = {
    "battleship": lambda g: g.options["size"] ** 2,
    "chess": lambda g: 218,  # the most legal moves any reachable chess position has
    "connect_four": lambda g: 7,
    "kuhn_poker": lambda g: 2,
    "leduc_holdem": lambda g: 3,
    "liars_dice": lambda g: 1 + 6 * g.num_players * g.options["dice"],  # liar + every higher bid
    "nim": lambda g: sum(g.options["heaps"]),
    "pig": lambda g: 2,
    "prisoners_dilemma": lambda g: 2,
    "sealed_bid_auction": lambda g: g.options["budget"] + 1,
    "tictactoe": lambda g: 9,
}


class UnicodeText(spaces.Text):
    """A `Text` space over all of Unicode: gymnasium's `Text` only holds a listed charset, but a
    game's view (and a typed move) may contain any character. Samples are drawn from printable
    ASCII; membership only bounds the length."""

    def __init__(self, max_length: int, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def _move_bound(game: Game) -> int | None:
    """n for a `Discrete(n)` action space, or None where moves are free text."""
    if game.source == "textarena":
        from games._textarena_moves import LEGAL_MOVES

        return TEXTARENA_MOVE_BOUND if game.id[len(TEXTARENA_PREFIX) :] in LEGAL_MOVES else None
    bound = NATIVE_MOVE_BOUNDS.get(game.id)
    if bound is None:
        return None  # free text (negotiation) or a new game not in the table: typed moves still work
    return int(bound(game))


class ArenaAECEnv(AECEnv):
    """One of our games as an AEC environment (see the module docstring for the spaces)."""

    metadata = {"render_modes": ["human", "ansi"], "name": "arena", "is_parallelizable": False}

    def __init__(self, game_id: str, num_players: int | None = None, render_mode: str | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        self.game = make_game(game_id, num_players, **options)
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": self.game.id}
        self.possible_agents = [f"player_{p}" for p in range(self.game.num_players)]
        self._player = {agent: p for p, agent in enumerate(self.possible_agents)}
        self.move_bound = _move_bound(self.game)
        self.view_bytes = TEXTARENA_VIEW_BYTES if self.game.source == "textarena" else NATIVE_VIEW_BYTES
        obs_spaces: dict[str, spaces.Space[Any]] = {
            "observation": spaces.Box(0, 255, (self.view_bytes,), np.uint8),
            "view": UnicodeText(VIEW_CHARS),
        }
        if self.move_bound is not None:
            obs_spaces["action_mask"] = spaces.Box(0, 1, (self.move_bound,), np.int8)
        self.observation_spaces = {a: spaces.Dict(dict(obs_spaces)) for a in self.possible_agents}
        self.action_spaces: dict[str, gymnasium.Space[Any]] = {
            a: spaces.Discrete(self.move_bound) if self.move_bound is not None else UnicodeText(MAX_REPLY_CHARS)
            for a in self.possible_agents
        }
        self._next_seed: int | None = None
        self._legal: tuple[int, list[str] | None] | None = None  # (player, moves) until the next step
        self.agents = []

    # ---- spaces ------------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ---- the AEC protocol ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a game. `options` is PettingZoo's per-reset dict; game options go to `env()`."""
        if seed is None:
            seed = self._next_seed if self._next_seed is not None else random.SystemRandom().randrange(2**31)
        self.seed = int(seed)
        self._next_seed = self.seed + 1
        self.game.reset(self.seed)
        self._legal = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._select_next()

    def observe(self, agent: str) -> dict[str, Any]:
        player = self._player[agent]
        text = self.game.observe(player).text[-VIEW_CHARS:]
        encoded = text.encode("utf-8")[-self.view_bytes :]
        numeric = np.zeros(self.view_bytes, dtype=np.uint8)
        numeric[: len(encoded)] = np.frombuffer(encoded, dtype=np.uint8)
        obs: dict[str, Any] = {"observation": numeric, "view": text}
        if self.move_bound is not None:
            mask = np.zeros(self.move_bound, dtype=np.int8)
            if not self.game.is_over() and player in self.game.to_act():
                mask[: len(self._legal_moves(player) or [])] = 1
            obs["action_mask"] = mask
        return obs

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self._player[agent]
        move = self._move_text(agent, player, action)
        self._cumulative_rewards[agent] = 0.0
        self.game.step(player, move)
        self._legal = None
        self.rewards = {a: 0.0 for a in self.agents}
        if self.game.is_over():
            scores = self.game.outcome().scores
            for a in self.agents:
                self.rewards[a] = float(scores[self._player[a]])
                self.terminations[a] = True
        self._select_next()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The acting player's view (the final view of player 0 once the game is over)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' to env()")
            return None
        if not self.agents or self.game.is_over():
            outcome = self.game.outcome()
            text = f"{self.game.id} over: scores {outcome.scores} ({outcome.reason})\n{self.game.observe(0).text}"
        else:
            player = self._player[self.agent_selection]
            text = f"{self.game.id}, {self.agent_selection} to move:\n{self.game.observe(player).text}"
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        """Nothing outside this process is held; the game is dropped with the environment."""
        self.agents = []

    # ---- internals ------------------------------------------------------------------------------
    def _select_next(self) -> None:
        """Point `agent_selection` at the seat the game waits for; once over, at the first seat
        (PettingZoo then steps each terminated agent with None to retire it)."""
        acting = self.game.to_act()
        player = acting[0] if acting else 0
        self.agent_selection = self.possible_agents[player]
        self.infos = {a: {"role": self.game.role(self._player[a])} for a in self.agents}
        if acting:
            obs = self.game.observe(player)
            self.infos[self.agent_selection].update(
                legal_moves=self._legal_moves(player), turn=obs.turn, feedback=obs.feedback
            )

    def _legal_moves(self, player: int) -> list[str] | None:
        """The game's legal moves, listed once per position (TextArena finds some by trial)."""
        if self._legal is None or self._legal[0] != player:
            moves = self.game.legal_moves(player)
            if self.move_bound is not None and moves is not None and len(moves) > self.move_bound:
                raise GameError(
                    f"{self.game.id}: {len(moves)} legal moves exceed the action space Discrete({self.move_bound})"
                )
            self._legal = (player, moves)
        return self._legal[1]

    def _move_text(self, agent: str, player: int, action: Any) -> str:
        if self.move_bound is None:
            if not isinstance(action, str):
                raise ValueError(f"{self.game.id}: {agent} must send its move as text, got {type(action).__name__}")
            return action[:MAX_REPLY_CHARS]
        legal = self._legal_moves(player) or []
        try:
            index = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"{self.game.id}: {agent}'s action must be an integer index, got {action!r}") from None
        if not 0 <= index < len(legal):
            raise ValueError(
                f"{self.game.id}: {agent}'s action {index} is masked out: {len(legal)} legal move(s) now (see action_mask)"
            )
        return legal[index]


def raw_env(game_id: str, num_players: int | None = None, render_mode: str | None = None, **options: Any) -> ArenaAECEnv:
    """The environment without PettingZoo's order-enforcing wrapper."""
    return ArenaAECEnv(game_id, num_players, render_mode=render_mode, **options)


def env(game_id: str, num_players: int | None = None, render_mode: str | None = None, **options: Any) -> AECEnv:
    """`game_id` as typed to `arena play` (`tictactoe`, `textarena:ConnectFour-v0`); `options` are
    the game's options. Wrapped as PettingZoo's own environments are (order enforcing)."""
    return wrappers.OrderEnforcingWrapper(raw_env(game_id, num_players, render_mode=render_mode, **options))
