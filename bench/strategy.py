"""Does self-play teach strategy, on every seed? Self-play in choice mode, measured exactly where the game allows.

    python -m bench.strategy --seeds 3                     # Kuhn poker: three independent runs of the Kuhn budget
    python -m bench.strategy --game leduc_holdem           # Leduc Hold'em, the same budget in minutes
    python -m bench.strategy --game tictactoe              # Tic-Tac-Toe against the minimax bot, before and after
    python -m bench.strategy --steps 5 --eval-games 40     # a short run (say so when you quote it)

The shipped SmolLM2 + a fresh LoRA plays the game against itself in choice mode (each move drawn
among the legal ones by the model's own probability of it, so every reply is legal and only
strategy is left to learn), rewarded by its outcome score. The update is the policy gradient of
that draw (trainer.learner, choice samples), with a KL penalty to the base (the "magnet" of
magnetic mirror descent) and a bonus on the draw's entropy, and a learning rate that falls on a
cosine to a tenth of itself by the last step, so the last iterate settles instead of circling the
equilibrium. Leduc trains with its own recipe: the card restated as the prompt's last line, each
move's advantage contrasted across the private cards, every information set alike, no entropy bonus
(PROMPT, PRIVATE_CONTRAST, STATE_WEIGHTING below; each can be set back). The policies evaluated
draw at the training temperature unless --temperature says otherwise: that is the policy self-play
optimises, and its checkpoints' spec.

The budget is a number of steps (--steps), the same on every seed and machine; each game's default
fits in 45 minutes on the reference machine (2 cores, quiet), and --minutes can cap the
wall time on top. The figure is the final policy's, never a checkpoint picked by its own score.

Poker (Kuhn; Leduc Hold'em): the live adapter's exact exploitability (evaluation.exploitability:
every information set scored) after every --curve-every steps; at the end the base's and the final
adapter's, and --eval-games sampled hands of the final adapter against the base and against `bot`
(the equilibrium in Kuhn, a heuristic in Leduc), seats alternating; chips per hand with a 95%
normal interval, hands won with Wilson's interval, the exact expected chips beside them. With
--seeds N, N independent runs (one process each, seeds --seed..--seed+N-1): the largest and the
median exploitability ratio, and every run's curve on one plot.

Tic-Tac-Toe: the tree is too large to score every state per step, and the question is different
(the best possible is never to lose to perfect play): the draw-or-win rate of the base and of the
final adapter against the minimax `bot`, --eval-games games each, seats alternating, with Wilson's
95% interval, and whether the two intervals are apart; beside them (--exact, the default) the same
rate computed with no sampling over every observation the policy can meet against the bot
(evaluation.tictactoe_vs_bot), which tells a 0.05 change apart where 400 games cannot.

Every run ends with one JSON line of the headline figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.llm.prompt_variants import PromptVariant
from arena.policy import make_policy
from bench.head_to_head import GAME_OPTIONS, choice_policy, play_games
from evaluation.exploitability import build_tree, chips_against, evaluate, infoset_labels, policy_strategy, uniform_strategy
from evaluation.tictactoe_vs_bot import exact_vs_bot
from games.registry import make_game
from trainer.config import parse_config
from trainer.run import Trainer

ROOT = Path(__file__).resolve().parent.parent
POKER = ("kuhn_poker", "leduc_holdem")
SHORT_NAME = {"kuhn_poker": "kuhn", "leduc_holdem": "leduc", "tictactoe": "ttt"}

# Self-play's choice temperature per game. The base model checks and calls in Kuhn 99.5% of the time
# at 1, so a GRPO group of one deal nearly always plays the same hand and has nothing to learn
# from; at 5 it deviates about a quarter of the time. In Tic-Tac-Toe its draws are spread at 1.
TRAIN_TEMPERATURE = {"kuhn_poker": 5.0, "leduc_holdem": 5.0, "tictactoe": 1.0}
# Steps that fit in 45 minutes on 2 quiet cores with the defaults below (docs/benchmarks.md).
# Leduc: a step is ~1,050 decisions, 66-250 distinct after merging; it took 380-500 s beside another
# bench (2026-11-26), so 20 steps were 2 hours: 8 was the estimate for 45 quiet minutes. Quiet, with
# its recipe below, 8 steps take 21-23 minutes; 16 (the cosine stretched over them) were no better
# at step 10 (average of iterates 1.733 against 1.671 after 8), so the budget stays 8 steps.
STEPS = {"kuhn_poker": 60, "leduc_holdem": 8, "tictactoe": 20}
# Exact exploitability of the live adapter every N steps: Kuhn's 12 information sets cost seconds,
# Leduc's 288 about a minute.
CURVE_EVERY = {"kuhn_poker": 1, "leduc_holdem": 5, "tictactoe": 0}
# Tic-Tac-Toe: the gains and losses self-play makes here are 0.04-0.05 of draw-or-win rate, which
# 400 games a side cannot tell apart (Wilson +-0.035) and 1,600 can; 1,600 games take under 2
# minutes on 2 cores (a game's choice scores are remembered across games).
EVAL_GAMES = {"kuhn_poker": 400, "leduc_holdem": 400, "tictactoe": 1600}
# Deals (GRPO groups of 4) per step. Rollouts cost little (choice scores are remembered per step);
# the learner's work grows with the distinct decision states a step visits, not with the hands:
# Kuhn has 12, so 1,024 hands cost what 64 did; Leduc's 288 and Tic-Tac-Toe's positions do not.
# Tic-Tac-Toe: 64 games per step took 634 s on a shared machine (2026-11-26), far past 45 minutes for
# 20 steps; 16 took 170 s there (bench/experiments/step_times.py).
# Leduc at 1,024 deals (4,096 hands) a step is what takes the tabular reference under 0.8 in 8 steps
# (median 0.590), but a LoRA step then takes 13-18 minutes on 2 cores (0.955 after 5 steps): the
# run for a GPU (--groups 1024), not this machine's default (docs/experiments/leduc-selfplay.md).
GROUPS = {"kuhn_poker": 256, "leduc_holdem": 64, "tictactoe": 4}
# Centre each decision's advantage on the other visits to its state (trainer.advantages.state_baseline).
# Tic-Tac-Toe: a cell merely present in won games was raised in every position, and one LoRA shared
# by all positions learned "cell 0 everywhere" (docs/experiments/tictactoe-choice-selfplay.md);
# the baseline leaves each visited position only how much better this cell did than the others
# played there. Kuhn: a step visits each of its 12 information sets hundreds of times; with the
# baseline three seeds ended at ratios 0.471 / 0.372 / 0.385 (without: 0.299 / 0.349 / 0.509,
# docs/experiments/kuhn-selfplay.md). Leduc: a step visits its 288 information sets ~1,100 times;
# without the baseline a run stood at 1.97 after 5 of 10 steps, with it the 8-step run ended at
# 2.24, both worse than the base's 1.85: in this budget neither learns to read the cards
# (docs/experiments/leduc-selfplay.md); the two runs differ in their schedules, so they do not
# rank the settings.
STATE_BASELINE = {"kuhn_poker": True, "leduc_holdem": True, "tictactoe": True}
# Bonus on each draw's entropy. Tic-Tac-Toe: none, since its best play is pure; at 0.02 the final
# policy drew flatter than the base (entropy 1.15 -> 1.35). Steps of linear learning-rate warm-up
# (algorithm.lr_warmup_steps): Tic-Tac-Toe's draw collapsed after two full-size steps at 1e-3.
# Measured together (2026-11-26, docs/experiments/tictactoe-choice-selfplay.md): the collapse came
# at step 6 instead of 3 and was undone without the bonus; draw-or-win 0.115 against 0.100 before,
# within the noise. Neither is the missing piece; both stay, as the run that is quoted.
ENTROPY_COEF = {"kuhn_poker": 0.02, "leduc_holdem": 0.0, "tictactoe": 0.0}
LR_WARMUP_STEPS = {"kuhn_poker": 0, "leduc_holdem": 0, "tictactoe": 4}
# Leduc's recipe (docs/experiments/leduc-selfplay.md): the card restated as the turn's last line
# (--prompt private-last: a better base, 1.697 against 1.847, and gradients that tell the cards apart),
# each move's advantage centred across the private cards of its public state (--private-contrast 1),
# and every information set met in a step weighed alike (--state-weighting per_state: one LoRA shared
# by all sets otherwise follows the common first-round ones). Without an entropy bonus: the contrast
# holds the draw's entropy. 8 steps of 256 hands ended at a ratio of 0.985 with it at lr 1e-3 and
# at 3e-3 (512 hands a step: 0.977), at 1.212 by visits with the default prompt and the bonus
# (2026-11-26..29). Kuhn keeps what its three seeds were measured with.
PROMPT = {"kuhn_poker": "default", "leduc_holdem": "private-last", "tictactoe": "default"}
PRIVATE_CONTRAST = {"kuhn_poker": 0.0, "leduc_holdem": 1.0, "tictactoe": 0.0}
STATE_WEIGHTING = {"kuhn_poker": "visits", "leduc_holdem": "per_state", "tictactoe": "visits"}
# Decisions per learner forward. A choice row is the prompt and every legal move, and its attention
# is materialised (the 4D mask): 64 Tic-Tac-Toe rows of ~300 tokens kept 18 GB for the backward and
# were killed for memory on a 24 GB machine; Kuhn's 64 rows are a dozen distinct questions.
MICRO_BATCH = {"kuhn_poker": 64, "leduc_holdem": 32, "tictactoe": 16}
# The learner's memory cap on a micro-batch (algorithm.micro_batch_memory_gb; 6 GB is the config's
# default). Its estimate counts a row's whole width squared, which overstates Leduc's choice rows
# (the seat's rules run once per micro-batch, the legal moves on the prompt's cache): at 6 GB its
# ~660-token rows went 9 to a micro-batch and the update took 147.5 s where 12 GB took 114.0 s
# (18 rows, peak 8.0 GB for the whole process) and no cap 103.7 s (32 rows, 9.8 GB), on one step's
# 64 hands (bench.experiments.micro_batch_cap, 2026-11-28). Kuhn merges a 1,024-hand step into at
# most 48 distinct rows: uncapped (as when its three seeds' figures were measured) they peak at
# 4.1 GB for the whole process and the update takes 0.689x the time of the 6 GB cut (36.0 s against
# 52.2 s, medians of 3). Tic-Tac-Toe's 16 rows of ~300 tokens are under the default anyway.
MICRO_BATCH_MEMORY_GB = {"kuhn_poker": None, "leduc_holdem": 12.0, "tictactoe": 6.0}
# Share of the groups against an earlier checkpoint of the run (PFSP), and the drift from the base
# the KL coefficient is adapted to (trainer/kl_control.py; None: fixed at --kl-coef).
# Tic-Tac-Toe (docs/experiments/tictactoe-choice-selfplay.md, 2026-11-27, 1,600 games a side and
# exactly): pure self-play ended worse than the base (exactly 0.100 against 0.138); with half the
# groups against checkpoints, seeds 0 and 2 ended above the base (0.190 and 0.202 exactly) and
# seed 1 at 0.130 (collapsed at steps 5-7); with the KL adapted to 0.25 as well, the drift stays
# bounded, seed 1 ends at 0.139 (the base's rate, not below it) and seed 2 at 0.190: a smaller
# worst case for a smaller best one.
LAGGED = {"kuhn_poker": 0.0, "leduc_holdem": 0.0, "tictactoe": 0.5}
KL_TARGET = {"kuhn_poker": None, "leduc_holdem": None, "tictactoe": 0.25}
LAGGED_CHECKPOINT_EVERY = 2  # with --lagged: a checkpoint every 2 steps joins the opponents
WHOLE_STEP = 4096  # samples per optimizer step: more than any step here merges to (Kuhn <= 48 rows, Leduc <= 412)
STEP_GROWTH = 1.5  # with --minutes: a step starts only if 1.5x the longest of the last three still fits


def opponents(lagged: float) -> list[dict]:
    """Self-play, or with `lagged` > 0 that share of the groups against an earlier checkpoint of
    the run, picked by PFSP (the ones the learner scores worst against first): a collapsed iterate
    then meets one that may punish it, and a group's two seats are not the same player."""
    if not lagged:
        return [{"kind": "self"}]
    return [{"kind": "self", "weight": 1 - lagged}, {"kind": "lagged", "weight": lagged, "sampling": "pfsp"}]


def build_config(args: argparse.Namespace) -> dict:
    """Self-play only (both seats trained), GRPO groups of one deal (same seed), the score as reward."""
    return {
        "name": args.name,
        "output_dir": str(args.runs),
        "base": "local",
        "seed": args.seed,
        "steps": args.steps,
        "games": [{"id": args.game, "options": GAME_OPTIONS[args.game]}],
        "opponents": opponents(args.lagged),
        "rollout": {
            "mode": "choice",
            "engine": "hf",  # choice scoring runs on the hf engine (docs/architecture.md)
            "obs": "state",
            "prompt": args.prompt,  # with --prompt private-last: the seat's card restated as the turn's last line
            "temperature": args.train_temperature,  # exploration: the base all but never deviates at 1 in poker
            "groups_per_step": args.groups,
            "group_size": args.group_size,
            "in_flight": args.groups * args.group_size,
            "max_new_tokens": 4,
            # with --branch: that share of the groups starts mid-game from a position of the last
            # step's games (trainer/branching.py), so its mean is that position's value
            "branch": args.branch,
        },
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {
            "advantage": "grpo",
            "loss_norm": "sequence",  # a move is one decision, however many tokens it has
            "epochs": 1,  # on 2 cores fresh hands beat a second pass over old ones
            # one optimizer step per step by default, as every figure here was measured: the
            # advantages are centred over the whole step (a smaller --minibatch still keeps a
            # public state's rows in one optimizer step; a 512-hand Leduc step merges to 183-412 rows)
            "minibatch_size": args.minibatch,
            # decisions per forward: a seat's rules (its system prompt) run once per micro-batch
            # (trainer.learner.micro_batches), so fewer, fuller micro-batches cost less
            "micro_batch_size": min(args.micro_batch, args.minibatch),  # a forward never spans two optimizer steps
            "micro_batch_memory_gb": MICRO_BATCH_MEMORY_GB[args.game],
            "learning_rate": args.learning_rate,
            "lr_schedule": args.lr_schedule,
            "lr_final_fraction": args.lr_final_fraction,
            "lr_warmup_steps": args.lr_warmup_steps,
            # KL to the base model (the "magnet" of magnetic mirror descent): without it one step at
            # 3e-3 collapsed the policy to always check / always call, and nothing was drawn after
            "kl_coef": args.kl_coef,
            "kl_reference": "base",
            # with --kl-target: the coefficient doubles in a step whose policy drifted past 1.5x the
            # target from the base, and halves back toward --kl-coef below target / 1.5 (trainer/kl_control.py)
            "kl_target": args.kl_target,
            # with --max-update-kl: an optimizer step whose policy moved further than this from the
            # one that played the step's games is halved until it does not (trainer/update_bound.py)
            "max_update_kl": args.max_update_kl,
            # exact entropy of each draw among the legal moves: resists collapsing onto one move
            # for every state before the advantages tell the states apart
            "entropy_coef": args.entropy_coef,
            # a Kuhn step's turns are a few dozen distinct (information set, move) pairs: trained
            # as weighted samples, 256 hands cost the learner about what 16 did (exact; see the learner)
            "merge_duplicates": True,
            "state_baseline": args.state_baseline,
            # with --private-contrast: a move's advantage is centred across the private cards of its
            # public state, so the one LoRA learns how the cards differ (trainer.advantages)
            "private_contrast": args.private_contrast,
            # with --state-weighting per_state: the turns met at one information set in a step share
            # one unit of weight, so a rare set pulls the shared LoRA as hard as a common one
            "state_weighting": args.state_weighting,
            # the policy this bench reports: the average of the second half's iterates (the last
            # iterate circles the equilibrium, 0.06-0.19 exploitability in one Kuhn run at 1024 hands)
            "average_from": args.average_from,
        },
        # checkpoints only to draw lagged opponents from (never rated here)
        "checkpoint": {"every": LAGGED_CHECKPOINT_EVERY if args.lagged else 100_000, "register_in_league": False},
        "logging": {"wandb": False},
    }


def defaults(game: str, **overrides: object) -> argparse.Namespace:
    """This bench's settings for `game` as a namespace (bench/learner.py trains one step with them)."""
    values = {
        "game": game, "name": f"bench-strategy-{game}", "runs": ROOT / "runs", "seed": 0, "steps": STEPS[game],
        "train_temperature": TRAIN_TEMPERATURE[game], "groups": GROUPS[game], "group_size": 4, "micro_batch": MICRO_BATCH[game], "minibatch": WHOLE_STEP,
        "learning_rate": 1e-3, "lr_schedule": "cosine", "lr_final_fraction": 0.1, "lr_warmup_steps": LR_WARMUP_STEPS[game],
        "kl_coef": 0.1, "kl_target": KL_TARGET[game], "max_update_kl": None, "entropy_coef": ENTROPY_COEF[game], "average_from": 0.5, "state_baseline": STATE_BASELINE[game],
        "private_contrast": PRIVATE_CONTRAST[game], "state_weighting": STATE_WEIGHTING[game], "prompt": PROMPT[game],
        "lagged": LAGGED[game], "branch": 0.0,
    }
    values.update(overrides)
    return argparse.Namespace(**values)


async def train(args: argparse.Namespace, tree: object | None) -> tuple[Trainer, Path, list[tuple[int, float, float | None]], float]:
    """Self-play for --steps (or until --minutes). Returns the trainer, the final policy's adapter
    (the average of iterates when averaging, else the last iterate) and, with a game tree, the
    exact exploitability every --curve-every steps and after the last: (step, live, average)."""
    config = parse_config(build_config(args), "bench")
    trainer = Trainer(config)
    trainer.setup()
    live = choice_policy(str(trainer.live_dir), args.temperature, "live", prompt=args.prompt)  # the learner's own weights
    average_dir = trainer.run_dir / ".average-live"  # the average so far, re-read by the engine after each step
    average = None

    async def exploitability(policy: object) -> float:
        return evaluate(tree, await policy_strategy(tree, policy)).exploitability

    async def point(step: int) -> tuple[int, float, float | None]:
        nonlocal average
        averaged = None
        if trainer.learner.average is not None:
            trainer.learner.save_adapter(average_dir, trainer.learner.average)
            if average is None:
                average = choice_policy(str(average_dir), args.temperature, "average", prompt=args.prompt)
            else:
                average.engine.reload_adapter(str(average_dir))
            averaged = await exploitability(average)
        return step, await exploitability(live), averaged

    curve: list[tuple[int, float, float | None]] = []
    if tree is not None and args.curve_every:
        curve.append(await point(0))
        print(f"step 0: exploitability {curve[0][1]:.4f}", flush=True)
    started = time.perf_counter()
    deadline = started + args.minutes * 60 if args.minutes else math.inf
    durations: list[float] = []
    while trainer.step < args.steps and time.perf_counter() + STEP_GROWTH * max(durations[-3:], default=0.0) < deadline:
        step_started = time.perf_counter()
        report = await trainer.train_step()
        durations.append(time.perf_counter() - step_started)
        shown = ""
        if tree is not None and args.curve_every and report.step % args.curve_every == 0:
            curve.append(await point(report.step))
            shown = f"exploitability {curve[-1][1]:.4f}" + (f" (average {curve[-1][2]:.4f})" if curve[-1][2] is not None else "") + "  "
        m = report.metrics
        drift = f"kl {m['train/kl']:.3f} (coef {m['train/kl_coef']:.2f})  " if "train/kl" in m else ""
        if "train/update_kl" in m:
            drift += f"update kl {m['train/update_kl']:.3f} (halved {m['train/update_halvings']:.0f}x)  "
        print(f"step {report.step}: {shown}reward {m.get('reward/mean', float('nan')):+.3f}  lr {m.get('train/learning_rate', 0):.2e}  {drift}"
              f"entropy {m.get('train/entropy', float('nan')):.2f}  "
              f"rollout {m.get('rollout/seconds', 0):.0f} s  learner {m.get('train/seconds', 0):.0f} s  {durations[-1]:.0f} s", flush=True)
    final = trainer.run_dir / "final"
    trainer.learner.save_adapter(final)
    if trainer.learner.average is not None:
        final = trainer.run_dir / "final-average"
        trainer.learner.save_adapter(final, trainer.learner.average)
    shutil.rmtree(average_dir, ignore_errors=True)
    trainer.logger.close()
    return trainer, final, curve, time.perf_counter() - started


def finite(value: float) -> float | None:
    """JSON has no NaN: an undefined figure is null."""
    return None if math.isnan(value) else round(value, 4)


def plot(curves: list[list[tuple[int, float, float | None]]], base: float, uniform: float, out: Path, title: str) -> None:
    """Each run's live adapter (solid) and, where it is kept, its average of iterates (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for index, curve in enumerate(curves):
        label = "" if len(curves) == 1 else f" (seed run {index + 1})"
        line, = ax.plot([c[0] for c in curve], [c[1] for c in curve], marker=".", linewidth=1, label=f"live adapter{label}")
        averaged = [(c[0], c[2]) for c in curve if len(c) > 2 and c[2] is not None]
        if averaged:
            ax.plot(*zip(*averaged), linestyle="--", linewidth=2, color=line.get_color(), label=f"average of iterates{label}")
    ax.axhline(base, color="grey", linestyle="--", label=f"base model {base:.3f}")
    ax.axhline(uniform, color="tab:red", linestyle=":", label=f"uniform random {uniform:.3f}")
    ax.axhline(0.0, color="black", linewidth=0.8, label="Nash equilibrium 0")
    ax.set_xlabel("self-play step")
    ax.set_ylabel("exploitability (chips per hand)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def print_strategies(tree: object, base: dict, trained: dict, limit: int = 24) -> None:
    """What changed, information set by information set: each move's probability, base -> trained
    (the first `limit` sets; Leduc has 288)."""
    labels = infoset_labels(tree)
    print("\nmove probabilities, base -> trained:")
    for key in sorted(base, key=lambda k: (k[0], labels[k]))[:limit]:
        moves = "  ".join(f"{move} {base[key][move]:.3f} -> {trained[key][move]:.3f}" for move in base[key])
        print(f"  player {key[0]}  {labels[key]}:  {moves}")


async def run_poker(args: argparse.Namespace) -> dict:
    game = args.game
    tree = build_tree(lambda: make_game(game, 2, **GAME_OPTIONS[game]))
    base = choice_policy(None, args.temperature, "base", prompt=args.prompt)
    bot = make_policy("bot")
    base_strategy, bot_strategy = await policy_strategy(tree, base), await policy_strategy(tree, bot)
    base_eval = evaluate(tree, base_strategy)
    uniform = evaluate(tree, uniform_strategy(tree)).exploitability
    print(f"base model: exploitability {base_eval.exploitability:.4f} (uniform {uniform:.4f})", flush=True)
    trainer, final, curve, train_s = await train(args, tree)
    trained = choice_policy(str(final), args.temperature, "trained", prompt=args.prompt)
    trained_strategy = await policy_strategy(tree, trained)
    trained_eval = evaluate(tree, trained_strategy)
    last = evaluate(tree, await policy_strategy(tree, choice_policy(str(trainer.run_dir / "final"), args.temperature, "last", prompt=args.prompt))).exploitability
    averaged = final.name == "final-average"
    if not curve or curve[-1][0] != trainer.step:
        curve.append((trainer.step, last, trained_eval.exploitability if averaged else None))
    eval_started = time.perf_counter()
    vs_base = await play_games(game, trained, base, args.eval_games, args.seed + 10_000, args.in_flight)
    vs_bot = await play_games(game, trained, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    eval_s = time.perf_counter() - eval_started
    if args.plot is not None:
        plot([curve], base_eval.exploitability, uniform, args.plot,
             f"{game} self-play in choice mode, SmolLM2-135M + LoRA ({trainer.step} steps, {train_s / 60:.1f} min)")
    trainer.close()
    ratio = trained_eval.exploitability / base_eval.exploitability if base_eval.exploitability > 0 else float("nan")
    print(f"\ntrained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final}")
    print(f"exploitability: base {base_eval.exploitability:.4f}  trained ({'average of iterates' if averaged else 'last iterate'}) "
          f"{trained_eval.exploitability:.4f}  ratio {ratio:.3f}  (last iterate {last:.4f})")
    for label, result, exact in (("base", vs_base, chips_against(tree, trained_strategy, base_strategy)),
                                 ("bot", vs_bot, chips_against(tree, trained_strategy, bot_strategy))):
        print(f"vs {label}: {result['mean_score']:+.3f} chips/hand  95% CI {result['ci95']}  over {result['games']} hands "
              f"(exact expectation {exact:+.4f}); hands won {result['good_rate']:.3f} {result['good_rate_ci95']}")
    print(f"evaluation took {eval_s:.0f} s")
    print_strategies(tree, base_strategy, trained_strategy)
    return {
        "exploitability_base": round(base_eval.exploitability, 4),
        "exploitability_trained": round(trained_eval.exploitability, 4),
        "exploitability_ratio": finite(ratio),
        "final_policy": "average of iterates" if averaged else "last iterate",
        "exploitability_last_iterate": round(last, 4),
        "chips_per_hand_vs_base": vs_base["mean_score"],
        "chips_per_hand_vs_base_ci95": vs_base["ci95"],
        "hands_won_vs_base": vs_base["good_rate"],
        "hands_won_vs_base_ci95": vs_base["good_rate_ci95"],
        "chips_per_hand_vs_bot": vs_bot["mean_score"],
        "chips_per_hand_vs_bot_ci95": vs_bot["ci95"],
        "exact_chips_vs_base": round(chips_against(tree, trained_strategy, base_strategy), 4),
        "exact_chips_vs_bot": round(chips_against(tree, trained_strategy, bot_strategy), 4),
        "uniform_exploitability": round(uniform, 4),
        "eval_hands": args.eval_games,
        "unfinished_hands": vs_base["unfinished"] + vs_bot["unfinished"],
        "train_steps": trainer.step,
        "train_minutes": round(train_s / 60, 2),
        "curve": [[step, round(value, 4), None if average is None else round(average, 4)] for step, value, average in curve],
    }


def exact_text(rates: dict[str, float]) -> str:
    return f"draw-or-win {rates['alternating']:.4f} (as X {rates['as_x']:.4f}, as O {rates['as_o']:.4f}; no sampling)"


def intervals_apart(low: list[float], high: list[float]) -> bool:
    """Two 95% intervals that do not overlap, the second above the first."""
    return high[0] > low[1]


async def run_tictactoe(args: argparse.Namespace) -> dict:
    base = choice_policy(None, args.temperature, "base", prompt=args.prompt)
    bot = make_policy("bot")
    before = await play_games("tictactoe", base, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    print(f"base model vs bot: draw-or-win {before['good_rate']:.3f} {before['good_rate_ci95']} over {before['games']} games", flush=True)
    if args.exact:
        exact_before = await exact_vs_bot(base)
        print(f"base model vs bot, exactly: {exact_text(exact_before)}", flush=True)
    trainer, final, _curve, train_s = await train(args, None)
    trainer.close()
    trained = choice_policy(str(final), args.temperature, "trained", prompt=args.prompt)
    after = await play_games("tictactoe", trained, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    print(f"\ntrained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final}")
    print(f"trained vs bot: draw-or-win {after['good_rate']:.3f} {after['good_rate_ci95']} over {after['games']} games "
          f"(before {before['good_rate']:.3f}; the best possible is 1.0)")
    exact = {}
    if args.exact:
        exact_after = await exact_vs_bot(trained)
        print(f"trained vs bot, exactly: {exact_text(exact_after)}")
        exact = {
            "ttt_exact_draw_or_win_before": exact_before["alternating"], "ttt_exact_draw_or_win_after": exact_after["alternating"],
            "ttt_exact_before_as_x_as_o": [exact_before["as_x"], exact_before["as_o"]],
            "ttt_exact_after_as_x_as_o": [exact_after["as_x"], exact_after["as_o"]],
        }
    return {
        "ttt_draw_or_win_before": before["good_rate"],
        "ttt_draw_or_win_before_ci95": before["good_rate_ci95"],
        "ttt_draw_or_win_after": after["good_rate"],
        "ttt_draw_or_win_after_ci95": after["good_rate_ci95"],
        "ttt_ci_separated": intervals_apart(before["good_rate_ci95"], after["good_rate_ci95"]),
        **exact,
        "eval_games": args.eval_games,
        "unfinished_games": before["unfinished"] + after["unfinished"],
        "train_steps": trainer.step,
        "train_minutes": round(train_s / 60, 2),
    }


def run_seeds(args: argparse.Namespace, argv: list[str]) -> dict:
    """--seeds N: N independent runs, one process each (a fresh engine and adapter, nothing shared
    but the machine), one after the other; their figures side by side."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-strategy-") as tmp:
        for seed in range(args.seed, args.seed + args.seeds):
            out = Path(tmp) / f"seed-{seed}.json"
            command = [sys.executable, "-m", "bench.strategy", *strip_options(argv, {"--seeds", "--seed", "--name", "--plot", "--json-out"}),
                       "--seed", str(seed), "--name", f"{args.name}-seed{seed}", "--plot", "none", "--json-out", str(out)]
            print(f"\n=== seed {seed}: {' '.join(command[1:])}", flush=True)
            subprocess.run(command, check=True)
            runs.append({"seed": seed, **json.loads(out.read_text())})
    figures: dict = {"game": args.game, "seeds": [r["seed"] for r in runs]}
    if args.game in POKER:
        ratios = [r["exploitability_ratio"] for r in runs]
        short = SHORT_NAME[args.game]
        prefix = "" if args.game == "kuhn_poker" else f"{short}_"
        figures.update({
            f"{prefix}exploitability_ratio_max": max(ratios),
            f"{prefix}exploitability_ratio_median": statistics.median(ratios),
            f"{prefix}exploitability_ratios": ratios,
            "exploitability_base": runs[0]["exploitability_base"],
            "exploitability_trained": [r["exploitability_trained"] for r in runs],
        })
        if args.plot is not None:
            plot([[tuple(point) for point in r["curve"]] for r in runs], runs[0]["exploitability_base"], runs[0]["uniform_exploitability"],
                 args.plot, f"{args.game} self-play, SmolLM2-135M + LoRA: {len(runs)} seeds, {runs[0]['train_steps']} steps each")
    else:
        keys = ("ttt_draw_or_win_before", "ttt_draw_or_win_after", "ttt_ci_separated", "ttt_exact_draw_or_win_before", "ttt_exact_draw_or_win_after")
        figures.update({key: [r[key] for r in runs] for key in keys if key in runs[0]})
    figures["train_minutes"] = [r["train_minutes"] for r in runs]
    figures["runs"] = [{k: v for k, v in r.items() if k != "curve"} for r in runs]  # the curves are in the plot
    return figures


def strip_options(argv: list[str], names: set[str]) -> list[str]:
    """argv without the given options and their values (`--name value` or `--name=value`)."""
    kept: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        name = token.split("=", 1)[0]
        if name in names:
            skip = "=" not in token
            continue
        kept.append(token)
    return kept


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """The command line, with every game-dependent default filled in."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(STEPS), default="kuhn_poker")
    parser.add_argument("--steps", type=int, default=None, help="training steps, the budget (default: what fits in 45 minutes on 2 cores)")
    parser.add_argument("--minutes", type=float, default=None, help="also stop training after this many minutes (default: no cap)")
    parser.add_argument("--seeds", type=int, default=1, help="independent runs, seeds --seed.. (poker: the largest and the median ratio)")
    parser.add_argument("--eval-games", type=int, default=None, help="evaluation games (poker: hands) against each opponent; default 400, Tic-Tac-Toe 1600")
    parser.add_argument("--temperature", type=float, default=None,
                        help="choice temperature of the policies evaluated (exploitability, games); default: the training one, "
                             "the policy self-play optimises and its checkpoints play at")
    parser.add_argument("--train-temperature", type=float, default=None,
                        help="choice temperature of self-play's draws (default: 5 in poker, where the base all but never deviates at 1; 1 in Tic-Tac-Toe)")
    parser.add_argument("--groups", type=int, default=None, help="deals per step (GRPO groups of --group-size); default: Kuhn 256, Leduc 64, Tic-Tac-Toe 4")
    parser.add_argument("--group-size", type=int, default=4, help="hands per deal; both seats are trained")
    parser.add_argument("--micro-batch", type=int, default=None, help="decisions per learner forward (default: Kuhn 64, Leduc 32, Tic-Tac-Toe 16)")
    parser.add_argument("--minibatch", type=int, default=WHOLE_STEP,
                        help="samples per optimizer step (default: the whole step); a public state's rows under the private contrast are never split")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="at 3e-3 the card-blind part swings (bench/experiments/card_separation.py)")
    parser.add_argument("--lr-schedule", choices=["constant", "cosine"], default="cosine")
    parser.add_argument("--lr-final-fraction", type=float, default=0.1, help="the cosine's last rate over the first")
    parser.add_argument("--kl-coef", type=float, default=0.1, help="KL penalty to the base model per decision (0: none)")
    parser.add_argument("--kl-target", type=float, default=None,
                        help="adapt the KL coefficient to this drift from the base per decision, never under --kl-coef "
                             "(0: fixed; default 0.25 in Tic-Tac-Toe, else fixed)")
    parser.add_argument("--max-update-kl", type=float, default=None,
                        help="bound each optimizer step's KL from the policy that played the step (halved until within; default: none)")
    parser.add_argument("--lr-warmup-steps", type=int, default=None, help="steps of linear learning-rate warm-up (default: 4 in Tic-Tac-Toe, else 0)")
    parser.add_argument("--entropy-coef", type=float, default=None,
                        help="bonus on the entropy of each draw among the legal moves (0: none; default 0.02 in Kuhn, else 0)")
    parser.add_argument("--average-from", type=float, default=0.5,
                        help="the policy reported is the average of the iterates from this fraction of the run on (0: the last iterate)")
    parser.add_argument("--state-baseline", action=argparse.BooleanOptionalAction, default=None,
                        help="centre each decision's advantage on the other visits to its state (default: on)")
    parser.add_argument("--private-contrast", type=float, default=None,
                        help="poker: centre each move's advantage on the same move from the other private cards of its public "
                             "state by this share, 0-1 (algorithm.private_contrast; default 1 in Leduc, else 0: off)")
    parser.add_argument("--state-weighting", choices=["visits", "per_state"], default=None,
                        help="how much each information set weighs in a step: as often as it was met (visits, the policy gradient) "
                             "or alike (per_state: its turns share one unit; algorithm.state_weighting; default per_state in Leduc, "
                             "else visits)")
    parser.add_argument("--prompt", default=None,
                        help="the prompt variant the learner is trained, evaluated and compared with (rollout.prompt, the harness's prompt=); "
                             "private-last restates the seat's card as the turn's last line (default: private-last in Leduc, else default)")
    parser.add_argument("--curve-every", type=int, default=None, help="poker: exact exploitability every N steps (0: only at the end)")
    parser.add_argument("--lagged", type=float, default=None,
                        help="share of groups played against an earlier checkpoint of the run (PFSP), the rest self-play; default 0.5 in Tic-Tac-Toe, else 0")
    parser.add_argument("--branch", type=float, default=0.0,
                        help="share of groups that start from a position of the last step's games (rollout.branch); default 0")
    parser.add_argument("--in-flight", type=int, default=32, help="evaluation games at once")
    parser.add_argument("--exact", action=argparse.BooleanOptionalAction, default=True,
                        help="Tic-Tac-Toe: also the base's and the final policy's exact draw-or-win rate against the bot "
                             "(evaluation.tictactoe_vs_bot: every observation it can meet, ~2,000 a policy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs")
    parser.add_argument("--name", default=None, help="run folder under --runs (default bench-strategy-GAME)")
    parser.add_argument("--plot", default=None,
                        help="poker: the exploitability curve's PNG (default: exploitability.png in the run folder, so that no run "
                             "overwrites a picture the docs show; 'none': no plot)")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the headline figures here")
    args = parser.parse_args(argv)
    game = args.game
    args.steps = STEPS[game] if args.steps is None else args.steps
    args.groups = GROUPS[game] if args.groups is None else args.groups
    args.micro_batch = MICRO_BATCH[game] if args.micro_batch is None else args.micro_batch
    args.eval_games = EVAL_GAMES[game] if args.eval_games is None else args.eval_games
    args.name = args.name or f"bench-strategy-{game}"
    args.train_temperature = TRAIN_TEMPERATURE[game] if args.train_temperature is None else args.train_temperature
    args.temperature = args.temperature if args.temperature is not None else args.train_temperature
    args.curve_every = CURVE_EVERY[game] if args.curve_every is None else args.curve_every
    args.average_from = args.average_from or None
    args.state_baseline = STATE_BASELINE[game] if args.state_baseline is None else args.state_baseline
    args.entropy_coef = ENTROPY_COEF[game] if args.entropy_coef is None else args.entropy_coef
    args.private_contrast = PRIVATE_CONTRAST[game] if args.private_contrast is None else args.private_contrast
    args.state_weighting = STATE_WEIGHTING[game] if args.state_weighting is None else args.state_weighting
    args.prompt = PROMPT[game] if args.prompt is None else args.prompt
    args.lr_warmup_steps = LR_WARMUP_STEPS[game] if args.lr_warmup_steps is None else args.lr_warmup_steps
    args.lagged = LAGGED[game] if args.lagged is None else args.lagged
    args.kl_target = KL_TARGET[game] if args.kl_target is None else (args.kl_target or None)
    args.plot = None if args.plot == "none" or game not in POKER else Path(args.plot or args.runs / args.name / "exploitability.png")
    problems = [message for wrong, message in (
        (args.steps < 1, f"--steps must be at least 1, got {args.steps}"),
        (args.seeds < 1, f"--seeds must be at least 1, got {args.seeds}"),
        (args.groups < 1, f"--groups must be at least 1, got {args.groups}"),
        (args.group_size < 1, f"--group-size must be at least 1, got {args.group_size}"),
        (args.micro_batch < 1, f"--micro-batch must be at least 1, got {args.micro_batch}"),
        (args.minibatch < 1, f"--minibatch must be at least 1, got {args.minibatch}"),
        (args.eval_games < 2, f"--eval-games must be at least 2, got {args.eval_games}"),
        (args.train_temperature <= 0, f"--train-temperature must be positive, got {args.train_temperature}"),
        (args.temperature < 0, f"--temperature must not be negative (0: the likeliest move), got {args.temperature}"),
        (args.minutes is not None and args.minutes <= 0, f"--minutes must be positive, got {args.minutes}"),
        (args.lr_warmup_steps < 0, f"--lr-warmup-steps must not be negative, got {args.lr_warmup_steps}"),
        (not 0 <= args.lagged < 1, f"--lagged must be in [0, 1), got {args.lagged}"),
        (not 0 <= args.branch <= 1, f"--branch must be in [0, 1], got {args.branch}"),
        (args.kl_target is not None and args.kl_target < 0, f"--kl-target must not be negative, got {args.kl_target}"),
        (args.max_update_kl is not None and args.max_update_kl <= 0, f"--max-update-kl must be positive, got {args.max_update_kl}"),
        (not 0 <= args.private_contrast <= 1, f"--private-contrast must be in [0, 1], got {args.private_contrast}"),
    ) if wrong]
    try:
        variant = PromptVariant.parse(args.prompt)
        args.prompt = variant.name
        if not variant.list_moves:
            problems.append(f"--prompt {args.prompt}: this bench plays in choice mode, which scores the listed moves")
    except ValueError as exc:
        problems.append(f"--prompt: {exc}")
    if problems:
        parser.error("; ".join(problems))
    return args


def main() -> None:
    argv = sys.argv[1:]
    args = parse_arguments(argv)
    game = args.game
    if args.seeds > 1:
        figures = run_seeds(args, argv)
    else:
        shutil.rmtree(args.runs / args.name, ignore_errors=True)  # each run starts from the base model
        runner = run_poker if game in POKER else run_tictactoe
        figures = asyncio.run(runner(args))
        if game == "leduc_holdem":
            figures["leduc_exploitability_ratio"] = figures["exploitability_ratio"]
    figures.update(train_temperature=args.train_temperature, eval_temperature=args.temperature, learning_rate=args.learning_rate,
                   lr_schedule=args.lr_schedule, lr_warmup_steps=args.lr_warmup_steps, average_from=args.average_from, state_baseline=args.state_baseline, private_contrast=args.private_contrast, state_weighting=args.state_weighting, prompt=args.prompt, kl_coef=args.kl_coef, kl_target=args.kl_target, max_update_kl=args.max_update_kl, entropy_coef=args.entropy_coef,
                   lagged=args.lagged, branch=args.branch, episodes_per_step=args.groups * args.group_size, minibatch_size=args.minibatch, steps_budget=args.steps)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(figures), encoding="utf-8")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
