"""Every TextArena game through our Game API, played by TextArena's own rules.

`textarena:ConnectFour-v0` builds a `TextArenaGame`. TextArena decides turn order, invalid moves
(its error allowance, then its penalty) and rewards; the adapter only translates:
- Observations: TextArena queues messages per player and `get_observation()` drains them, which
  makes observing destructive. We drain every player's queue after each step into our own
  per-player logs, so `observe()` is idempotent, never shows one player another's messages, and no
  observation wrapper can leak history across resets (a known TextArena wrapper pitfall). Each
  reset builds a fresh env for the same reason.
- Chance: TextArena seeds and draws from the *global* `random` module (and some games from
  numpy's). Concurrent matches in one process would interleave those draws, so each adapted game
  keeps its own generator states and swaps them in around every call into TextArena.
- Legal moves: read from state where cheap, else candidates filtered by stepping a copy of the
  env, so legality is TextArena's own (see games/_textarena_moves.py). None for free text.
- Eliminations: some TextArena envs eliminate a player for invalid moves and then keep asking that
  player to move (Poker, PublicGoodsGame, Santorini). The adapter passes the turn to the next
  player still in, and ends the game when one is left (survivor first, then reverse elimination).
- State: TextArena envs are not serialisable. Our state is the seed plus the action log; restoring
  replays it, which is exact because the game is deterministic given the seed.
- Availability: see games/_textarena_probe.py (probed once, cached on disk, one-line reasons).
- Options: only those declared in games/textarena_options.py, within their ranges, reach
  `ta.make`; TextArena itself checks few and some loop forever or fill memory on bad ones.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import json
import random
from typing import Any, Iterator

import numpy as np

from arena.game import Game, GameError, GameInfo, Observation, Outcome, StepResult, UnknownGameError, ranks_from_scores
from arena.rules_text import normalise_rules
from games._textarena_moves import CANDIDATES, LEGAL_MOVES, listed_moves, mentioned_actions
from games._textarena_probe import offline, probe_all, probe_one, quiet, registry
from games.textarena_options import schema_for

PREFIX = "textarena:"
MAX_TRIALS = 48  # candidate moves tried on a copy of the env per random move
RECENT_MESSAGES = 6  # messages a free-text random move draws its bracketed actions from

# A representative sample run through the whole conformance suite: perfect- and imperfect-
# information games, cards, dice, free text, chance, moves listed by the game or found by trial,
# TextArena's elimination rule, and 3 players.
CONFORMANCE_SAMPLE = [
    "TicTacToe-v0",
    "ConnectFour-v0",
    "KuhnPoker-v0",
    "Nim-v0",
    "Battleship-v0",
    "LiarsDice-v0",
    "Poker-v0",
    "Briscola-v0",
    "Othello-v0",
    "IteratedPrisonersDilemma-v0",
    "SimpleNegotiation-v0",
    "ThreePlayerTicTacToe-v0",
]


# ---- listing and building ----------------------------------------------------------------------
def game_infos() -> list[GameInfo]:
    """Every TextArena `-v0` id; fast once probed (the probe result is cached on disk)."""
    infos = []
    for env_id, probe in sorted(probe_all().items()):
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
    """Build a TextArena game; unknown ids and games that cannot run here raise one clear line."""
    probes = probe_all()
    probe = probes.get(env_id)
    if probe is None:
        known = registry()
        if env_id not in known:
            close = difflib.get_close_matches(env_id, sorted(probes) or [i for i in known if i.endswith("-v0")], n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(PREFIX + c for c in close)}?" if close else "; run `arena games --source textarena`"
            raise UnknownGameError(f"unknown TextArena game {PREFIX + env_id!r}{hint}")
        probe = probe_one(env_id)  # a registered variant outside the `-v0` listing (e.g. `-raw`)
    if not probe["players"]:
        raise GameError(f"{PREFIX}{env_id} cannot run here: {probe['reason']}")
    players = probe["players"]
    n = int(num_players) if num_players is not None else (2 if 2 in players else players[0])
    if n not in players:
        raise GameError(f"{PREFIX}{env_id} takes {_spans(players)} players, not {n}")
    return TextArenaGame(env_id, n, **options)


def _spans(counts: list[int]) -> str:
    return f"{counts[0]}-{counts[-1]}" if len(counts) > 1 and counts == list(range(counts[0], counts[-1] + 1)) else ", ".join(map(str, counts))


class TextArenaGame(Game):
    """A TextArena environment behind our Game API (see the module docstring)."""

    source = "textarena"

    def __init__(self, env_id: str, num_players: int, **options: Any) -> None:
        self.env_id = env_id
        self.id = PREFIX + env_id
        self.name = env_id.removesuffix("-v0")
        self.num_players = num_players
        # Only declared options, within their ranges, ever reach ta.make (games/textarena_options.py).
        # The ones given are kept as given (cleaned): the defaults are TextArena's own.
        cleaned = schema_for(env_id).validate(self.id, options)
        self.options = {name: cleaned[name] for name in options}
        self.seed = 0
        self._env: Any = None
        self._actions: list[list[Any]] = []
        self._logs: list[list[tuple[int, str, str]]] = [[] for _ in range(num_players)]
        self._snapshot: tuple[str, dict[str, Any]] | None = None  # the last state set_state built

    @property
    def rules(self) -> str:
        """TextArena puts the rules in each player's first message; show player 0's, normalised
        like every game's (its texts are often indented triple-quoted strings)."""
        if self._logs and self._logs[0]:
            return normalise_rules(self._logs[0][0][1])
        return f"{self.name} from TextArena."

    # ---- chance isolation ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _own_chance(self, keep: bool = True) -> Iterator[None]:
        """Run TextArena code on this game's own generator states; `keep=False` for trials."""
        outer = random.getstate(), np.random.get_state()
        random.setstate(self._py_state)
        np.random.set_state(self._np_state)
        try:
            with quiet():
                yield
        finally:
            if keep:
                self._py_state = random.getstate()
                self._np_state = np.random.get_state()
            random.setstate(outer[0])
            np.random.set_state(outer[1])

    # ---- protocol ------------------------------------------------------------------------------
    def reset(self, seed: int) -> None:
        import textarena as ta

        self.seed = int(seed)
        self._actions = []
        self._logs = [[] for _ in range(self.num_players)]
        self._feedback: list[str | None] = [None] * self.num_players
        self._rendered: list[tuple[int, str]] = [(0, "")] * self.num_players
        self._forced_result: dict[str, Any] | None = None
        self._moves_at: tuple[int, int, list[str] | None] | None = None
        self._py_state = random.Random(self.seed).getstate()
        self._np_state = np.random.RandomState(self.seed % 2**32).get_state()
        with self._own_chance(), offline():
            self._env = ta.make(self.env_id, **self.options)  # fresh: nothing leaks from the last game
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
        if self.is_over() or player not in self.to_act():
            return None
        key = (len(self._actions), player)
        if self._moves_at is not None and self._moves_at[:2] == key:
            return self._moves_at[2]
        moves = self._find_legal_moves(player)
        self._moves_at = (*key, moves)
        return moves

    def _find_legal_moves(self, player: int) -> list[str] | None:
        lister = LEGAL_MOVES.get(self.env_id)
        if lister is not None:
            return lister(self._env, player)
        candidates: list[str] | None = None
        generator = CANDIDATES.get(self.env_id)
        if generator is not None:
            found, exhaustive = generator(self._env, player, random.Random(0))
            candidates = found if exhaustive else None
        else:
            candidates = listed_moves([text for _s, text, _k in self._logs[player][-RECENT_MESSAGES:]])
        if candidates is None:
            return None
        accepted = [move for move in dict.fromkeys(candidates) if self._accepts(move)]
        return accepted or None

    def _accepts(self, action: str) -> bool:
        """Would TextArena take `action` now as a valid move? Stepped on a copy of the env."""
        state = self._env.state
        player = int(state.current_player_id)
        with self._own_chance(keep=False):
            # TextArena's state keeps a log of every message; the copy starts with an empty one,
            # or each trial would cost time proportional to the game's length so far.
            logs = getattr(state, "logs", None)
            trial = copy.deepcopy(self._env, {id(logs): []} if isinstance(logs, list) else None)
            before = _snapshot(trial.state, player)
            try:
                trial.step(action)
            except Exception:  # noqa: BLE001 - an env that crashes on a move did not accept it
                return False
        return _verdict(trial.state, player, before) == "valid"

    def observe(self, player: int) -> Observation:
        self._check_player(player)
        return Observation(
            player=player,
            text=self._render(player),
            legal_moves=self.legal_moves(player),
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

    def step(self, player: int, action: str) -> StepResult:
        self._check_player(player, must_act=True)
        before = _snapshot(self._env.state, player)
        try:
            with self._own_chance():
                self._env.step(str(action))
        except Exception as exc:  # noqa: BLE001 - a TextArena bug on odd input must not end the league
            # Rebuild the game as it was (the env may be half-changed), then apply TextArena's rule.
            self._env = None
            self.set_state({"seed": self.seed, "actions": self._actions, "num_players": self.num_players, "options": self.options})
            return self._apply_textarena_invalid(player, f"the game could not process this move ({type(exc).__name__})")
        self._actions.append([player, str(action)])
        fresh = self._drain()
        result = self._result_for(player, before, fresh[player])
        self._end_stalled_game()
        return result

    def _end_stalled_game(self) -> None:
        """End, as TextArena's rules mean it, a game that TextArena leaves unfinished with no move left."""
        stalled = STALLED_GAMES.get(self.env_id)
        reason = stalled(self._env) if stalled is not None and not self.is_over() else None
        if reason is not None:
            scores = [0.0] * self.num_players
            self._forced_result = {"scores": scores, "ranks": ranks_from_scores(scores), "reason": reason}

    def _result_for(self, player: int, before: dict[str, Any], fresh: list[tuple[int, str, str]]) -> StepResult:
        verdict = _verdict(self._env.state, player, before)
        admin = [text for _s, text, kind in fresh if kind == "GAME_ADMIN" or "invalid" in text.lower()]
        if verdict == "valid":
            self._feedback[player] = None
            self._settle_eliminations()
            return StepResult(valid=True)
        if verdict == "retry":
            self._feedback[player] = admin[-1] if admin else "Invalid move; try again."
            return StepResult(valid=False, feedback=self._feedback[player])
        self._feedback[player] = None
        reason = admin[-1] if admin else self._reason() or "invalid move"
        if verdict == "eliminated":
            self._settle_eliminations()
            return StepResult(valid=False, feedback=reason, penalty="forfeit" if self._ended_by(player) else "eliminate")
        return StepResult(valid=False, feedback=reason, penalty="forfeit")

    def _ended_by(self, player: int) -> bool:
        """Did eliminating `player` end the game (a two-player game is then a forfeit)?"""
        return self.is_over() and self.outcome().ranks[player] == max(self.outcome().ranks)

    def _settle_eliminations(self) -> None:
        """Pass the turn on when TextArena leaves an eliminated player to move; end the game when
        one player is left. Envs that handle their eliminations never reach either branch."""
        state = self._env.state
        order = list(dict.fromkeys(getattr(state, "elimination_order", None) or []))
        if state.done or int(state.current_player_id) not in order:
            return
        alive = [p for p in range(self.num_players) if p not in order]
        if len(alive) <= 1:
            placing = alive + order[::-1]  # survivor first, then the last one out, ...
            scores = [0.0] * self.num_players
            for place, p in enumerate(placing):
                scores[p] = float(self.num_players - 1 - place)
            out = ", ".join(f"Player {p}" for p in order)
            self._forced_result = {"scores": scores, "ranks": ranks_from_scores(scores), "reason": f"{out} eliminated after invalid moves; last player standing"}
            return
        nxt = (int(state.current_player_id) + 1) % self.num_players
        while nxt in order:
            nxt = (nxt + 1) % self.num_players
        state.current_player_id = nxt
        state.error_count = 0

    def fail(self, player: int, reason: str) -> StepResult:
        self._check_player(player, must_act=True)
        self._actions.append([player, {"fail": reason}])
        with self._own_chance():
            result = self._apply_fail(player, reason)
        self._drain()
        return result

    def reject(self, player: int, reason: str) -> StepResult:
        self._check_player(player, must_act=True)
        return self._apply_textarena_invalid(player, reason)

    def _apply_textarena_invalid(self, player: int, reason: str) -> StepResult:
        self._actions.append([player, {"invalid": reason}])
        before = _snapshot(self._env.state, player)
        with self._own_chance():
            self._env.state.set_invalid_move(reason=reason)
            self._env.state.step()
        fresh = self._drain()
        return self._result_for(player, before, fresh[player])

    def _apply_fail(self, player: int, reason: str) -> StepResult:
        """TextArena's invalid-move rule, applied at once: exhaust the allowance, then one more."""
        state = self._env.state
        state.error_count = getattr(state, "error_allowance", 0)
        state.set_invalid_move(reason=reason)
        state.step()
        if state.done:
            return StepResult(valid=False, feedback=reason, penalty="forfeit")
        if player in (getattr(state, "elimination_order", None) or []):
            self._settle_eliminations()
            return StepResult(valid=False, feedback=reason, penalty="forfeit" if self._ended_by(player) else "eliminate")
        # A state that leaves the penalty to an env that ignores it: decide it here so the match ends.
        scores = [1.0] * self.num_players
        scores[player] = -1.0
        self._forced_result = {"scores": scores, "ranks": ranks_from_scores(scores), "reason": f"Player {player} failed to move: {reason}"}
        return StepResult(valid=False, feedback=reason, penalty="forfeit")

    def outcome(self) -> Outcome:
        if not self.is_over():
            raise GameError(f"{self.id}: outcome() called before the game is over")
        if self._forced_result is not None:
            return Outcome.from_dict(self._forced_result)
        rewards = self._env.state.rewards or {}
        scores = [float(rewards.get(p, 0.0)) for p in range(self.num_players)]
        return Outcome(scores=scores, ranks=ranks_from_scores(scores), reason=self._reason() or "game over")

    def _reason(self) -> str:
        state = self._env.state
        info = state.game_info if isinstance(state.game_info, dict) else {}
        reasons = [str(info.get(p, {}).get("reason") or "") for p in range(self.num_players)]
        extra = getattr(state, "info", None)
        reasons.append(str(extra.get("reason") or "") if isinstance(extra, dict) else "")
        return next((r for r in reasons if r), "")

    def get_state(self) -> dict[str, Any]:
        return {"seed": self.seed, "actions": json.loads(json.dumps(self._actions)), "num_players": self.num_players, "options": dict(self.options)}

    def set_state(self, state: dict[str, Any]) -> None:
        """Replay the seed and the action log (TextArena envs cannot be serialised)."""
        if state.get("num_players") != self.num_players:
            raise GameError(f"{self.id}: state is for {state.get('num_players')} players, not {self.num_players}")
        key = json.dumps([state["seed"], state["actions"], state.get("options", {})], sort_keys=True)
        if self._snapshot is not None and self._snapshot[0] == key:
            # The same state again (a search probing moves): copy it instead of replaying.
            for name, value in copy.deepcopy(self._snapshot[1]).items():
                setattr(self, name, value)
            self._moves_at = None
            return
        actions = list(state["actions"])
        if self._env is not None and int(state["seed"]) == self.seed and actions[: len(self._actions)] == self._actions:
            actions = actions[len(self._actions) :]  # already there: replay only the rest
        else:
            self.reset(int(state["seed"]))
        for player, action in actions:
            if isinstance(action, dict) and "fail" in action:
                self.fail(player, action["fail"])
            elif isinstance(action, dict) and "invalid" in action:
                self._apply_textarena_invalid(player, action["invalid"])
            else:
                self.step(player, action)
        self._snapshot = (key, copy.deepcopy({name: getattr(self, name) for name in _SNAPSHOT_FIELDS}))

    # ---- movers ----------------------------------------------------------------------------------
    def random_move(self, player: int, rng: random.Random) -> str:
        """A uniformly random legal move where they are known; otherwise a random candidate that
        TextArena accepts (bracketed actions the game mentioned, the game's own templates)."""
        legal = self.legal_moves(player)
        if legal:
            return rng.choice(legal)
        candidates: list[str] = []
        generator = CANDIDATES.get(self.env_id)
        if generator is not None:
            candidates += generator(self._env, player, rng)[0]
        candidates += mentioned_actions([text for _s, text, _k in self._logs[player][-RECENT_MESSAGES:]])
        candidates = list(dict.fromkeys(candidates))
        rng.shuffle(candidates)
        for move in candidates[:MAX_TRIALS]:
            if self._accepts(move):
                return move
        return candidates[0]

    def secrets(self, player: int) -> list[str]:
        """Private information we can name cheaply: Kuhn card, Liar's Dice dice, Poker hole cards.
        Dice and hole cards only for the first round/hand, where no earlier view can hold the same
        phrase by coincidence."""
        if self.is_over():
            return []
        gs = self._env.state.game_state
        if self.env_id == "KuhnPoker-v0":
            card = {0: "J", 1: "Q", 2: "K"}.get(gs.get("player_cards", {}).get(player))
            if card is not None:
                return [f"Starting round {gs.get('current_round')} out of {self._env.max_rounds} rounds. Your card is: '{card}'"]
        if self.env_id == "LiarsDice-v0" and all(n == 5 for n in gs["remaining_dice"].values()):
            phrases = {p: "Your current Dice are: " + ", ".join(map(str, dice)) for p, dice in gs["dice_rolls"].items()}
            return _unique_phrase(phrases, player)
        if self.env_id == "Poker-v0" and gs.get("round") == 1:
            phrases = {p: "Your hole: " + ", ".join(f"{c['rank']}{c['suit']}" for c in hand) for p, hand in gs["player_hands"].items()}
            shown = phrases.get(player, "") in self._render(player)  # TextArena shows it on one's turn
            return _unique_phrase(phrases, player) if shown else []
        return []

    def _check_player(self, player: int, must_act: bool = False) -> None:
        if not 0 <= player < self.num_players:
            raise GameError(f"{self.id}: no player {player} in a {self.num_players}-player game")
        if must_act:
            if self.is_over():
                raise GameError(f"{self.id}: the game is over")
            if player not in self.to_act():
                raise GameError(f"{self.id}: it is not player {player}'s turn")


def _ultimate_tictactoe_stalled(env: Any) -> str | None:
    """TextArena's UltimateTicTacToe marks a mini-board on the macro board only when it is won and
    calls a draw only when every macro cell is marked, so once all 81 cells are full with a drawn
    mini-board among them nobody can move and the game never ends (random play reached it in about
    1 match in 6 and forfeited on its next, necessarily refused, move). A full board without three
    won mini-boards in a row is a draw."""
    board = env.state.game_state["board"]
    if any(cell == " " for mini in board for row in mini for cell in row):
        return None
    return "Every cell is full and nobody won three mini-boards in a row: a draw"


# TextArena games that can reach a position with no legal move that TextArena does not end.
STALLED_GAMES = {"UltimateTicTacToe-v0": _ultimate_tictactoe_stalled}

_SNAPSHOT_FIELDS = ("seed", "_env", "_actions", "_logs", "_feedback", "_rendered", "_forced_result", "_py_state", "_np_state")


def _unique_phrase(phrases: dict[int, str], player: int) -> list[str]:
    mine = phrases.get(player)
    if not mine or any(mine in other for p, other in phrases.items() if p != player):
        return []
    return [mine]


def _snapshot(state: Any, player: int) -> dict[str, Any]:
    info = state.game_info.get(player, {}) if isinstance(state.game_info, dict) else {}
    return {
        "turn": state.turn,
        "flagged": bool(info.get("invalid_move")),
    }


def _verdict(state: Any, player: int, before: dict[str, Any]) -> str:
    """How TextArena took `player`'s move: valid, retry (allowance left), eliminated or forfeit.
    TextArena advances its turn counter only on a valid move; running out of allowance sets the
    player's invalid_move flag (two-player games end, free-for-all games eliminate)."""
    after = _snapshot(state, player)
    if after["flagged"] and not before["flagged"]:
        return "forfeit" if state.done else "eliminated"
    if after["turn"] != before["turn"]:
        return "valid"  # eliminations by the game's own rules (a lost last die) are valid moves
    return "forfeit" if state.done else "retry"
