"""Every TextArena game through our Game API, played by TextArena's own rules.

`textarena:ConnectFour-v0` builds a `TextArenaGame`. TextArena decides turn order, invalid moves
(its error allowance, then its penalty) and rewards; the adapter only translates:
- Observations: TextArena queues messages per player and `get_observation()` drains them, which
  makes observing destructive. We drain every player's queue after each step into our own
  per-player logs, so `observe()` is idempotent, never shows one player another's messages, and no
  observation wrapper can leak history across resets (a known TextArena wrapper pitfall).
- Chance: TextArena seeds and draws from the *global* `random` module (and some games from
  numpy's). Concurrent matches in one process would interleave those draws, so each adapted game
  keeps its own generator states and swaps them in around every call into TextArena.
- State: TextArena envs are not serialisable. Our state is the seed plus the action log; restoring
  replays it, which is exact because the game is deterministic given the seed.
- Availability: each env is probed once (reset at 1-6 players) and the result cached on disk per
  textarena and Python version; failures are classified into one line a user can act on.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import os
import random
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from arena.game import Game, GameError, GameInfo, Observation, Outcome, StepResult, ranks_from_scores

PREFIX = "textarena:"
PROBE_PLAYER_COUNTS = (1, 2, 3, 4, 5, 6)
PROBE_VERSION = 2

# A representative sample run through the whole conformance suite in CI: perfect- and
# imperfect-information games, free text, chance, and 3+ players.
CONFORMANCE_SAMPLE = [
    "TicTacToe-v0",
    "ConnectFour-v0",
    "KuhnPoker-v0",
    "Nim-v0",
    "Battleship-v0",
    "IteratedPrisonersDilemma-v0",
    "SimpleNegotiation-v0",
    "LiarsDice-v0",
    "ThreePlayerTicTacToe-v0",
]


# ---- availability ---------------------------------------------------------------------------
def _classify(exc: BaseException) -> str:
    """One line a user can act on, from the exception an env raised at import or reset."""
    text = str(exc)
    if isinstance(exc, SyntaxError) or "SyntaxError" in text:
        return "needs Python 3.12+ (its code uses newer syntax)"
    if isinstance(exc, LookupError) and ("nltk" in text.lower() or "Resource" in text):
        return "downloads NLTK data at run time (no network here)"
    if "OPENROUTER_API_KEY" in text or "OpenRouter" in text:
        return "needs OPENROUTER_API_KEY for its judge model"
    if isinstance(exc, FileNotFoundError):
        return "data files missing from the textarena wheel"
    if isinstance(exc, ImportError):
        return f"fails to import: {text.split('Error: ')[-1][:120]}"
    return f"fails to start: {type(exc).__name__}: {text[:120]}"


_SINK = open(os.devnull, "w")  # never closed: libraries (nltk) keep the stream they saw


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """TextArena envs print while they build; keep the user's terminal clean."""
    with contextlib.redirect_stdout(_SINK), contextlib.redirect_stderr(_SINK):
        yield


def _registry() -> dict[str, Any]:
    with _quiet():
        from textarena.envs.registration import ENV_REGISTRY
    return ENV_REGISTRY


def _probe_one(env_id: str) -> dict[str, Any]:
    import textarena as ta

    counts: list[int] = []
    reason = ""
    saved = random.getstate(), np.random.get_state()
    try:
        for n in PROBE_PLAYER_COUNTS:
            try:
                with _quiet():
                    env = ta.make(env_id)
                    env.reset(num_players=n, seed=0)
                counts.append(n)
            except AssertionError:
                continue  # wrong player count for this game
            except Exception as exc:  # noqa: BLE001 - we classify whatever the env raised
                reason = _classify(exc)
                if not isinstance(exc, ValueError) or "OpenRouter" in str(exc):
                    break
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    if not counts and not reason:
        reason = f"resets with none of {PROBE_PLAYER_COUNTS[0]}-{PROBE_PLAYER_COUNTS[-1]} players"
    return {"players": counts, "reason": "" if counts else reason}


def _cache_path() -> Path:
    import textarena

    base = Path(os.environ.get("ARENA_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "arena")
    version = getattr(textarena, "__version__", "unknown")
    return base / f"textarena-probe-v{PROBE_VERSION}-{version}-py{sys.version_info.major}.{sys.version_info.minor}.json"


@lru_cache(maxsize=1)
def probe_all() -> dict[str, dict[str, Any]]:
    """env id -> {"players": [...], "reason": str} for every `-v0` id, cached on disk."""
    path = _cache_path()
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    result = {env_id: _probe_one(env_id) for env_id in sorted(_registry()) if env_id.endswith("-v0")}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1))
        tmp.replace(path)
    except OSError:
        pass  # a read-only home only costs a re-probe
    return result


def game_infos() -> list[GameInfo]:
    infos = []
    for env_id, probe in probe_all().items():
        players = probe["players"] or [2]
        infos.append(
            GameInfo(
                id=PREFIX + env_id,
                name=env_id.removesuffix("-v0"),
                min_players=min(players),
                max_players=max(players),
                source="textarena",
                available=bool(probe["players"]),
                reason=probe["reason"],
            )
        )
    return infos


def make(env_id: str, num_players: int | None = None, **options: Any) -> "TextArenaGame":
    from games.registry import UnknownGameError

    registry = _registry()
    if env_id not in registry:
        close = difflib.get_close_matches(env_id, [i for i in registry if i.endswith("-v0")], n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(PREFIX + c for c in close)}?" if close else "; run `arena games --source textarena`"
        raise UnknownGameError(f"unknown TextArena game {PREFIX + env_id!r}{hint}")
    probe = probe_all().get(env_id) or _probe_one(env_id)
    if not probe["players"]:
        raise GameError(f"{PREFIX}{env_id} cannot run here: {probe['reason']}")
    players = probe["players"]
    n = num_players if num_players is not None else (2 if 2 in players else players[0])
    if n not in players:
        raise GameError(f"{PREFIX}{env_id} takes {', '.join(map(str, players))} players, not {n}")
    return TextArenaGame(env_id, n, **options)


# ---- legal moves where TextArena's state makes them cheap to list ------------------------------
def _board_cells(env: Any, player: int) -> list[str]:
    board = env.state.game_state["board"]
    size = len(board)
    return [f"[{r * size + c}]" for r in range(size) for c in range(size) if board[r][c] == ""]


def _connect_four(env: Any, player: int) -> list[str]:
    board = env.state.game_state["board"]
    return [f"[col {c}]" for c in range(len(board[0])) if board[0][c] == "."]


def _kuhn(env: Any, player: int) -> list[str]:
    tree = env.state.game_state.get("current_legal_action_tree")
    return [f"[{k}]" for k in tree] if isinstance(tree, dict) else []


def _nim(env: Any, player: int) -> list[str]:
    piles = env.state.game_state["piles"]
    return [f"[{i} {q}]" for i, size in enumerate(piles) for q in range(1, size + 1)]


def _battleship(env: Any, player: int) -> list[str]:
    size = env.grid_size
    fired = env.state.game_state["tracking_board"][player]
    return [f"[{chr(65 + r)}{c}]" for r in range(size) for c in range(size) if fired[r][c] == "~"]


def _liars_dice(env: Any, player: int) -> list[str]:
    gs = env.state.game_state
    bid = gs["current_bid"]
    total = sum(gs["remaining_dice"].values())
    moves = ["[Call]"] if gs["last_bidder_id"] is not None and bid["quantity"] > 0 else []
    for quantity in range(max(1, bid["quantity"]), total + 1):
        for face in range(max(1, bid["face_value"]), 7):
            if (quantity, face) != (bid["quantity"], bid["face_value"]):
                moves.append(f"[Bid: {quantity}, {face}]")
    return moves


def _snake(env: Any, player: int) -> list[str]:
    return ["[up]", "[down]", "[left]", "[right]"]


LEGAL_MOVES: dict[str, Callable[[Any, int], list[str]]] = {
    "TicTacToe-v0": _board_cells,
    "ConnectFour-v0": _connect_four,
    "KuhnPoker-v0": _kuhn,
    "Nim-v0": _nim,
    "Battleship-v0": _battleship,
    "LiarsDice-v0": _liars_dice,
    "Snake-v0": _snake,
    "ThreePlayerTicTacToe-v0": _board_cells,
}

_BRACKETED = re.compile(r"\[([^\[\]\n]{1,40})\]")


class TextArenaGame(Game):
    """A TextArena environment behind our Game API (see the module docstring)."""

    source = "textarena"

    def __init__(self, env_id: str, num_players: int, **options: Any) -> None:
        self.env_id = env_id
        self.id = PREFIX + env_id
        self.name = env_id.removesuffix("-v0")
        self.num_players = num_players
        self.options = options
        self.seed = 0
        self._env: Any = None
        self._actions: list[list[Any]] = []
        self._logs: list[list[tuple[int, str, str]]] = [[] for _ in range(num_players)]

    @property
    def rules(self) -> str:
        """TextArena puts the rules in each player's first message; show player 0's."""
        if self._logs and self._logs[0]:
            return self._logs[0][0][1]
        return f"{self.name} from TextArena."

    # ---- chance isolation ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _own_chance(self) -> Iterator[None]:
        outer = random.getstate(), np.random.get_state()
        random.setstate(self._py_state)
        np.random.set_state(self._np_state)
        try:
            with _quiet():
                yield
        finally:
            self._py_state = random.getstate()
            self._np_state = np.random.get_state()
            random.setstate(outer[0])
            np.random.set_state(outer[1])

    # ---- protocol ------------------------------------------------------------------------------
    def reset(self, seed: int) -> None:
        import textarena as ta

        self.seed = int(seed)
        self._actions = []
        self._logs: list[list[tuple[int, str, str]]] = [[] for _ in range(self.num_players)]
        self._feedback: list[str | None] = [None] * self.num_players
        self._rendered: list[tuple[int, str]] = [(0, "")] * self.num_players
        self._forced_result: dict[str, Any] | None = None
        seeded = random.Random(self.seed)
        self._py_state = seeded.getstate()
        self._np_state = np.random.RandomState(self.seed % 2**32).get_state()
        with self._own_chance():
            # A fresh env per reset: no state can leak from the previous game.
            self._env = ta.make(self.env_id, **self.options)
            self._env.reset(num_players=self.num_players, seed=self.seed)
        self._drain()

    def _drain(self) -> list[list[tuple[int, str, str]]]:
        """Move TextArena's queued messages into our logs; return what each player just got."""
        fresh: list[list[tuple[int, str, str]]] = []
        queues = self._env.state.observations
        for pid in range(self.num_players):
            new = [(int(sender), str(text), getattr(kind, "name", str(kind))) for sender, text, kind in queues.get(pid, [])]
            queues[pid] = []
            self._logs[pid].extend(new)
            fresh.append(new)
        return fresh

    def to_act(self) -> list[int]:
        if self.is_over():
            return []
        return [int(self._env.state.current_player_id)]

    def is_over(self) -> bool:
        return self._forced_result is not None or bool(self._env.state.done)

    def legal_moves(self, player: int) -> list[str] | None:
        if self.is_over():
            return None
        lister = LEGAL_MOVES.get(self.env_id)
        if lister is None or player not in self.to_act():
            return None
        return lister(self._env, player)

    def observe(self, player: int) -> Observation:
        self._check_player(player)
        return Observation(
            player=player,
            text=self._render(player),
            legal_moves=self.legal_moves(player) if player in self.to_act() else None,
            turn=len(self._actions),
            role=self.role(player),
            feedback=self._feedback[player],
        )

    def _render(self, player: int) -> str:
        # Logs only grow, so the rendered text is extended rather than rebuilt on every observe.
        done, text = self._rendered[player]
        log = self._logs[player]
        if done < len(log):
            names = getattr(self._env.state, "role_mapping", {}) or {}
            lines = []
            for sender, message, _kind in log[done:]:
                who = "GAME" if sender == -1 else names.get(sender, f"Player {sender}")
                lines.append(f"[{who}] {message}")
            text = "\n".join([text, *lines]) if text else "\n".join(lines)
            self._rendered[player] = (len(log), text)
        return text

    def role(self, player: int) -> str:
        return f"Player {player}"

    def step(self, player: int, action: str) -> StepResult:
        self._check_player(player, must_act=True)
        state = self._env.state
        turn_before = state.turn
        try:
            with self._own_chance():
                self._env.step(str(action))
        except Exception as exc:  # noqa: BLE001 - a TextArena bug on odd input must not end the league
            # Rebuild the game as it was, then let TextArena's own invalid-move rule apply.
            snapshot = self._actions
            self.set_state({"seed": self.seed, "actions": snapshot, "num_players": self.num_players, "options": self.options})
            return self._apply_textarena_invalid(player, f"the game could not process this move ({type(exc).__name__})")
        self._actions.append([player, str(action)])
        fresh = self._drain()
        return self._result_for(player, turn_before, fresh[player])

    def _result_for(self, player: int, turn_before: int, fresh: list[tuple[int, str, str]]) -> StepResult:
        state = self._env.state
        info = state.game_info.get(player, {}) if isinstance(state.game_info, dict) else {}
        admin = [text for _s, text, kind in fresh if kind == "GAME_ADMIN" or "invalid move" in text.lower()]
        invalid_flag = bool(info.get("invalid_move"))
        if state.done:
            if invalid_flag:
                return StepResult(valid=False, feedback=admin[-1] if admin else str(info.get("reason", "invalid move")), penalty="forfeit")
            self._feedback[player] = None
            return StepResult(valid=True, move=None)
        if state.turn == turn_before:  # TextArena only advances the turn on a valid move
            if invalid_flag or getattr(state, "elimination_order", None) and player in state.elimination_order:
                self._feedback[player] = None
                return StepResult(valid=False, feedback=admin[-1] if admin else "invalid move", penalty="eliminate")
            self._feedback[player] = admin[-1] if admin else "Invalid move; try again."
            return StepResult(valid=False, feedback=self._feedback[player])
        self._feedback[player] = None
        return StepResult(valid=True)

    def fail(self, player: int, reason: str) -> StepResult:
        self._check_player(player, must_act=True)
        self._actions.append([player, {"fail": reason}])
        with self._own_chance():
            result = self._apply_fail(player, reason)
        self._drain()
        return result

    def _apply_textarena_invalid(self, player: int, reason: str) -> StepResult:
        self._actions.append([player, {"invalid": reason}])
        state = self._env.state
        turn_before = state.turn
        with self._own_chance():
            state.set_invalid_move(reason=reason)
            state.step()
        fresh = self._drain()
        return self._result_for(player, turn_before, fresh[player])

    def _apply_fail(self, player: int, reason: str) -> StepResult:
        """TextArena's invalid-move rule, applied at once: exhaust the allowance, then one more."""
        state = self._env.state
        state.error_count = getattr(state, "error_allowance", 0)
        state.set_invalid_move(reason=reason)
        state.step()
        if state.done:
            return StepResult(valid=False, feedback=reason, penalty="forfeit")
        if player in (getattr(state, "elimination_order", None) or []):
            return StepResult(valid=False, feedback=reason, penalty="eliminate")
        # A game whose state ignores the allowance: decide it here so the match still ends.
        scores = [1.0] * self.num_players
        scores[player] = -1.0
        self._forced_result = {"scores": scores, "ranks": ranks_from_scores(scores), "reason": f"Player {player} failed to move: {reason}"}
        return StepResult(valid=False, feedback=reason, penalty="forfeit")

    def outcome(self) -> Outcome:
        if not self.is_over():
            raise GameError(f"{self.id}: outcome() called before the game is over")
        if self._forced_result is not None:
            return Outcome.from_dict(self._forced_result)
        state = self._env.state
        rewards = state.rewards or {}
        scores = [float(rewards.get(p, 0.0)) for p in range(self.num_players)]
        info = state.game_info if isinstance(state.game_info, dict) else {}
        reasons = [str(info.get(p, {}).get("reason", "")) for p in range(self.num_players)]
        reason = next((r for r in reasons if r), "game over")
        return Outcome(scores=scores, ranks=ranks_from_scores(scores), reason=reason)

    def get_state(self) -> dict[str, Any]:
        return {"seed": self.seed, "actions": json.loads(json.dumps(self._actions)), "num_players": self.num_players, "options": dict(self.options)}

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("num_players") != self.num_players:
            raise GameError(f"{self.id}: state is for {state.get('num_players')} players, not {self.num_players}")
        self.reset(int(state["seed"]))
        for player, action in state["actions"]:
            if isinstance(action, dict) and "fail" in action:
                self.fail(player, action["fail"])
            elif isinstance(action, dict) and "invalid" in action:
                self._apply_textarena_invalid(player, action["invalid"])
            else:
                self.step(player, action)

    # ---- movers ----------------------------------------------------------------------------------
    def random_move(self, player: int, rng: random.Random) -> str:
        legal = self.legal_moves(player)
        if legal:
            return rng.choice(legal)
        # No listed moves: pick a bracketed action the game mentioned to this player lately.
        recent = " ".join(text for _s, text, _k in self._logs[player][-6:])
        options = sorted(set(_BRACKETED.findall(recent)))
        if options:
            return f"[{rng.choice(options)}]"
        return rng.choice(["[accept]", "[pass]", "hello", "[0]", "[1]"])

    def secrets(self, player: int) -> list[str]:
        if self.env_id == "KuhnPoker-v0" and not self.is_over():
            gs = self._env.state.game_state
            round_no = gs.get("current_round")
            card = {0: "J", 1: "Q", 2: "K"}.get(gs.get("player_cards", {}).get(player))
            if card is not None:
                return [f"Starting round {round_no} out of {self._env.max_rounds} rounds. Your card is: '{card}'"]
        return []

    def _check_player(self, player: int, must_act: bool = False) -> None:
        if not 0 <= player < self.num_players:
            raise GameError(f"{self.id}: no player {player} in a {self.num_players}-player game")
        if must_act:
            if self.is_over():
                raise GameError(f"{self.id}: the game is over")
            if player not in self.to_act():
                raise GameError(f"{self.id}: it is not player {player}'s turn")
