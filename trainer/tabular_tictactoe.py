"""Tic-Tac-Toe self-play with one free logit per (board, cell): the reference learner for
`bench.strategy --game tictactoe` (used by bench/experiments/ttt_tabular_reference.py).

bench.strategy trains a LoRA shared by every position on 16 games a step, half of the groups
against earlier checkpoints, and asks whether the draw-or-win rate against the minimax bot rose.
Two seeds of three pass at any one setting (docs/experiments/tictactoe-choice-selfplay.md). This
learner takes the LoRA's coupling out: each board has its own logits, so what it reaches is what
the signal of that many games can teach when nothing generalises and nothing interferes. It runs
the bench's recipe step for step (trainer.rollouts' plan, trainer.advantages, trainer.loss's
choice-sample loss at ratio 1, trainer.kl_control, trainer.schedule, the average of iterates):

- a step is `groups` groups of `group_size` games; a group is self-play (both seats trained) or,
  with probability `lagged`, the learner in a random seat against one earlier checkpoint (one
  every `checkpoint_every` steps, drawn by PFSP's (1 - score)^2);
- a game scores 1 for a win, 1/2 for a draw, 0 for a loss; each (group, seat)'s scores are
  normalised (GRPO), every decision of a game carries its game's advantage, minus the mean of the
  other decisions made on the same board this step (`state_baseline`);
- per decision, -A log pi(a) + kl_coef k3(pi_ref(a) / pi(a)), averaged over the step's decisions,
  one Adam step on the logits; the KL coefficient doubles or halves around `kl_target` from the
  step's own drift, as `algorithm.kl_target`; the learning rate warms up, then falls on a cosine;
- the reported policy is the average of the logits of the iterates from `average_from` of the run
  on, as the LoRA's weights are averaged.

A board's logits start at the start policy's (uniform unless given), so boards it never visits
keep playing as the start does. `exact_draw_or_win` scores a board-keyed policy against the bot
with no sampling, as evaluation.tictactoe_vs_bot scores an LLM's.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from games.tictactoe import MARKS, best_cells, winner_of
from trainer.advantages import grpo_advantages, state_baseline
from trainer.config import AlgorithmSettings
from trainer.kl_control import adapted_kl_coef
from trainer.opponent_sampling import pfsp_weight
from trainer.schedule import scheduled_learning_rate
from trainer.tabular_selfplay import adam_update, decision_loss_gradient, softmax

EMPTY_BOARD = "." * 9
SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}  # trainer.rewards' outcome score for two players


def to_move(board: str) -> int:
    """The seat to move: X (0) when both have as many marks, else O (1)."""
    return 0 if board.count("X") == board.count("O") else 1


def empty_cells(board: str) -> list[int]:
    return [i for i, c in enumerate(board) if c == "."]


def after(board: str, cell: int) -> str:
    return board[:cell] + MARKS[to_move(board)] + board[cell + 1 :]


def k3(q: float) -> float:
    """trainer.loss.k3 for one log-ratio q = log pi_ref(a) - log pi(a): e^q - q - 1."""
    return math.exp(q) - q - 1.0


Logits = dict[str, list[float]]  # board -> one logit per empty cell, in cell order
Policy = Callable[[str], list[float]]  # board -> one probability per empty cell


@dataclass(frozen=True)
class TicTacToeSettings:
    """bench.strategy --game tictactoe's defaults, in this learner's terms."""

    learning_rate: float  # Adam's, on the logits
    steps: int = 20
    groups: int = 4
    group_size: int = 4
    lagged: float = 0.5
    checkpoint_every: int = 2
    kl_coef: float = 0.1
    kl_target: float | None = 0.25
    warmup_steps: int = 4
    lr_final_fraction: float = 0.1
    average_from: float = 0.5
    state_baseline: bool = True
    seed: int = 0

    def algorithm(self) -> AlgorithmSettings:
        """The trainer's settings of the schedule and the KL controller, at a unit rate: Adam's rate
        on free logits runs past AlgorithmSettings' bound of 1, and the schedule scales with it."""
        return AlgorithmSettings(learning_rate=1.0, lr_schedule="cosine", lr_final_fraction=self.lr_final_fraction,
                                 lr_warmup_steps=self.warmup_steps, kl_coef=self.kl_coef, kl_target=self.kl_target)


@dataclass
class TicTacToeRun:
    final: Logits  # the last iterate
    average: Logits  # the average of iterates the bench reports
    kl_coefs: list[float] = field(default_factory=list)  # each step's coefficient
    boards_trained: int = 0  # distinct boards with a decision in some step


class SparseAdam:
    """torch.optim.Adam (no weight decay) on rows of logits that appear as they are first trained:
    a row with no gradient this step still moves by its momentum, as a torch parameter would."""

    def __init__(self, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.lr, self.betas, self.eps, self.t = lr, betas, eps, 0
        self.m: dict[str, list[float]] = {}
        self.v: dict[str, list[float]] = {}

    def step(self, params: Logits, grads: dict[str, list[float]]) -> None:
        self.t += 1
        for key in grads:
            self.m.setdefault(key, [0.0] * len(grads[key]))
            self.v.setdefault(key, [0.0] * len(grads[key]))
        for key, m in self.m.items():
            row = params[key]
            adam_update(row, grads.get(key) or [0.0] * len(row), m, self.v[key], self.t, self.lr, self.betas, self.eps)


def table_policy(logits: Logits, start: Policy) -> Policy:
    """The policy of a table: its softmax where it has a row, `start` elsewhere."""
    def policy(board: str) -> list[float]:
        row = logits.get(board)
        return softmax(row) if row is not None else start(board)
    return policy


def uniform(board: str) -> list[float]:
    n = len(empty_cells(board))
    return [1.0 / n] * n


def play(policies: tuple[Policy, Policy], rng: random.Random) -> tuple[list[tuple[str, int]], tuple[float, float]]:
    """One game from the empty board: every decision (board, index among its empty cells) in order,
    and each seat's score."""
    board, path = EMPTY_BOARD, []
    while True:
        winner = winner_of(board)
        if winner is not None:
            return path, (1.0, 0.0) if winner == "X" else (0.0, 1.0)
        if "." not in board:
            return path, (SCORE["draw"], SCORE["draw"])
        cells = empty_cells(board)
        index = rng.choices(range(len(cells)), policies[to_move(board)](board))[0]
        path.append((board, index))
        board = after(board, cells[index])


def tabular_tictactoe(settings: TicTacToeSettings, start: Policy = uniform) -> TicTacToeRun:
    """Self-play from `start` for `settings.steps` steps (module doc)."""
    rng = random.Random(settings.seed)
    algorithm = settings.algorithm()
    params: Logits = {}
    ref_logps: dict[str, list[float]] = {}
    checkpoints: list[Logits] = []
    scores: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])  # checkpoint index -> [score sum, games]
    average: Logits = {}
    averaged = 0
    average_start = max(1, math.ceil(settings.average_from * settings.steps))
    adam = SparseAdam(settings.learning_rate)
    kl_coef = settings.kl_coef
    run = TicTacToeRun(final=params, average=average)
    trained: set[str] = set()

    def row(board: str) -> list[float]:
        if board not in params:
            logps = [math.log(max(p, 1e-9)) for p in start(board)]
            ref_logps[board] = logps
            params[board] = list(logps)
        return params[board]

    def learner(board: str) -> list[float]:
        return softmax(row(board))

    for step in range(1, settings.steps + 1):
        adam.lr = settings.learning_rate * scheduled_learning_rate(algorithm, step, settings.steps)
        episodes: list[list[tuple[str, int]]] = []  # a trained seat's decisions in one game
        rewards: list[float] = []
        groups: list[tuple[int, int]] = []
        for g in range(settings.groups):
            opponent = None
            if checkpoints and rng.random() < settings.lagged:
                weights = [pfsp_weight(scores[c][0] / scores[c][1] if scores[c][1] else 0.5) for c in range(len(checkpoints))]
                opponent = rng.choices(range(len(checkpoints)), weights if sum(weights) > 0 else None)[0]
            seat = rng.randrange(2)
            for _ in range(settings.group_size):
                if opponent is None:
                    policies, seats = (learner, learner), (0, 1)
                else:
                    frozen = table_policy(checkpoints[opponent], start)
                    policies, seats = ((learner, frozen) if seat == 0 else (frozen, learner)), (seat,)
                path, outcome = play(policies, rng)
                if opponent is not None:
                    scores[opponent][0] += outcome[seat]
                    scores[opponent][1] += 1
                for s in seats:
                    turns = [(b, i) for b, i in path if to_move(b) == s]
                    if turns:
                        rewards.append(outcome[s])
                        groups.append((g, s))
                        episodes.append(turns)
        advantages = grpo_advantages(rewards, groups)
        flat = [(b, i, a) for turns, a in zip(episodes, advantages) for b, i in turns]  # (board, index, advantage)
        per_decision = [a for _, _, a in flat]
        if settings.state_baseline:
            per_decision = state_baseline(per_decision, [b for b, _, _ in flat])
        if settings.kl_target is not None:  # the step's drift from the start, before it updates (trainer.kl_control)
            drifts = [k3(ref_logps[b][i] - math.log(softmax(row(b))[i])) for b, i, _ in flat]
            kl_coef = adapted_kl_coef(kl_coef, statistics.fmean(drifts) if drifts else None, algorithm)
        run.kl_coefs.append(kl_coef)
        grads: dict[str, list[float]] = {}
        for (board, index, _), advantage in zip(flat, per_decision):
            g = decision_loss_gradient(row(board), index, advantage, ref_logps[board][index], kl_coef, 0.0)
            acc = grads.setdefault(board, [0.0] * len(g))
            for j, gj in enumerate(g):
                acc[j] += gj / len(flat)  # the loss is a mean over decisions
            trained.add(board)
        if grads:
            adam.step(params, grads)
        if step % settings.checkpoint_every == 0 and settings.lagged:
            checkpoints.append({b: list(z) for b, z in params.items()})
        if step >= average_start:
            averaged += 1
            for board, z in params.items():
                if averaged == 1:
                    average[board] = list(z)
                    continue
                avg = average.setdefault(board, list(ref_logps[board]))  # a row met later sat at the start's in the earlier iterates
                for j in range(len(z)):
                    avg[j] += (z[j] - avg[j]) / averaged
    run.boards_trained = len(trained)
    return run


def exact_draw_or_win(policy: Policy) -> dict[str, float]:
    """A board-keyed policy's draw-or-win rate against the minimax bot, exactly: as X, as O and
    with seats alternating (their mean), as evaluation.tictactoe_vs_bot reports an LLM's."""

    def rate(me: int) -> float:
        @lru_cache(maxsize=None)
        def value(board: str) -> float:
            winner = winner_of(board)
            if winner is not None:
                return 1.0 if winner == MARKS[me] else 0.0
            if "." not in board:
                return 1.0
            turn = to_move(board)
            if turn == me:
                return sum(p * value(after(board, cell)) for p, cell in zip(policy(board), empty_cells(board)) if p > 0)
            return statistics.fmean(value(after(board, int(cell))) for cell in best_cells(board, turn))

        return value(EMPTY_BOARD)

    as_x, as_o = rate(0), rate(1)
    return {"as_x": as_x, "as_o": as_o, "alternating": (as_x + as_o) / 2}
