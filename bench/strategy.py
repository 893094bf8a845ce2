"""Does self-play teach strategy? Self-play in choice mode, measured exactly where the game allows.

    python -m bench.strategy                            # Kuhn poker: 45 min of self-play on 2 cores, 400 eval hands
    python -m bench.strategy --game tictactoe           # Tic-Tac-Toe against the minimax bot, 200 games before and after
    python -m bench.strategy --minutes 5 --eval-games 40  # a short run (say so when you quote it)

The shipped SmolLM2 + a fresh LoRA plays the game against itself in choice mode (each move drawn
among the legal ones by the model's own probability of it, so every reply is legal and only
strategy is left to learn), rewarded by its outcome score. The update is the policy gradient of
that draw (trainer.learner, choice samples), with a KL penalty to the base and a bonus on the
draw's entropy. The policies evaluated draw at the training temperature unless --temperature
says otherwise: that is the policy self-play optimises, and its checkpoints' spec.

Kuhn poker (one hand per episode): after every step the live adapter's exact exploitability is
computed (evaluation.exploitability: all 12 information sets scored in one engine batch). At the end:
the base's and the final adapter's exploitability, and --eval-games sampled hands of the final
adapter against the base and against `bot` (the equilibrium), seats alternating; chips per hand
with a 95% normal interval, hands won with Wilson's interval, and the exact expected chips beside
them. Plots the curve.

Tic-Tac-Toe: the tree is too large to score every state per step, and the question is different
(the best possible is never to lose to perfect play): the draw-or-win rate of the base and of the
final adapter against the minimax `bot`, --eval-games games each, seats alternating, with Wilson's
95% interval.

Both end with one JSON line of the headline figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from pathlib import Path

from arena.policy import make_policy
from bench.head_to_head import GAME_OPTIONS, choice_policy, play_games
from evaluation.exploitability import build_tree, chips_against, evaluate, infoset_labels, policy_strategy, uniform_strategy
from games.registry import make_game
from trainer.config import parse_config
from trainer.run import Trainer

ROOT = Path(__file__).resolve().parent.parent

# Self-play's choice temperature per game. The base model checks and calls in Kuhn 99.5% of the time
# at 1, so a GRPO group of one deal nearly always plays the same hand and has nothing to learn
# from; at 5 it deviates about a quarter of the time. In Tic-Tac-Toe its draws are spread at 1.
TRAIN_TEMPERATURE = {"kuhn_poker": 5.0, "tictactoe": 1.0}
STEP_GROWTH = 1.5  # a step starts only if 1.5x the longest of the last three still fits the budget


def build_config(args: argparse.Namespace) -> dict:
    """Self-play only (both seats trained), GRPO groups of one deal (same seed), chips as reward."""
    return {
        "name": args.name,
        "output_dir": str(args.runs),
        "base": "local",
        "seed": args.seed,
        "steps": 100_000,  # the time budget stops training
        "games": [{"id": args.game, "options": GAME_OPTIONS[args.game]}],
        "opponents": [{"kind": "self"}],
        "rollout": {
            "mode": "choice",
            "engine": "hf",  # choice scoring runs on the hf engine (docs/architecture.md)
            "obs": "state",
            "temperature": args.train_temperature,  # exploration: the base all but never deviates at 1
            "groups_per_step": args.groups,
            "group_size": args.group_size,
            "in_flight": args.groups * args.group_size,
            "max_new_tokens": 4,
        },
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {
            "advantage": "grpo",
            "loss_norm": "sequence",  # a move is one decision, however many tokens it has
            "epochs": 1,  # on 2 cores fresh hands beat a second pass over old ones
            "minibatch_size": 64,
            "micro_batch_size": 16,  # decisions per forward; each seat's rules run once per micro-batch (trainer.learner.micro_batches)
            "learning_rate": args.learning_rate,
            # KL to the base model (the "magnet" of magnetic mirror descent): without it one step at
            # 3e-3 collapsed the policy to always check / always call, and nothing was drawn after
            "kl_coef": args.kl_coef,
            "kl_reference": "base",
            # exact entropy of each draw among the legal moves: resists collapsing onto one move
            # for every state before the advantages tell the states apart
            "entropy_coef": args.entropy_coef,
            # a Kuhn step's turns are a few dozen distinct (information set, move) pairs: trained
            # as weighted samples, 64 hands cost the learner about what 16 did (exact; see the learner)
            "merge_duplicates": True,
        },
        "checkpoint": {"every": 100_000, "register_in_league": False},
        "logging": {"wandb": False},
    }


async def train(args: argparse.Namespace, tree: object | None) -> tuple[Trainer, Path, list[tuple[int, float]], float]:
    """Self-play for --minutes; with a game tree, the live adapter's exact exploitability after every step."""
    config = parse_config(build_config(args), "bench")
    trainer = Trainer(config)
    trainer.setup()
    live = choice_policy(str(trainer.live_dir), args.temperature, "live")  # the learner's own weights

    async def exploitability() -> float:
        return evaluate(tree, await policy_strategy(tree, live)).exploitability if tree is not None else float("nan")

    curve = [(0, await exploitability())]
    if tree is not None:
        print(f"step 0: exploitability {curve[0][1]:.4f}", flush=True)
    started = time.perf_counter()
    deadline = started + args.minutes * 60
    durations: list[float] = []
    while time.perf_counter() + STEP_GROWTH * max(durations[-3:], default=0.0) < deadline:
        step_started = time.perf_counter()
        report = await trainer.train_step()
        curve.append((report.step, await exploitability()))
        durations.append(time.perf_counter() - step_started)
        m = report.metrics
        shown = f"exploitability {curve[-1][1]:.4f}  " if tree is not None else ""
        print(f"step {report.step}: {shown}reward {m.get('reward/mean', float('nan')):+.3f}  {durations[-1]:.0f} s", flush=True)
    final = trainer.run_dir / "final"
    trainer.learner.save_adapter(final)
    trainer.logger.close()
    return trainer, final, curve, time.perf_counter() - started


def finite(value: float) -> float | None:
    """JSON has no NaN: an undefined figure is null."""
    return None if math.isnan(value) else round(value, 4)


def plot(curve: list[tuple[int, float]], base: float, uniform: float, out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(*zip(*curve), marker=".", label="live adapter (exact)")
    ax.axhline(base, color="grey", linestyle="--", label=f"base model {base:.3f}")
    ax.axhline(uniform, color="tab:red", linestyle=":", label=f"uniform random {uniform:.3f}")
    ax.axhline(0.0, color="black", linewidth=0.8, label="Nash equilibrium 0")
    ax.set_xlabel("self-play step")
    ax.set_ylabel("exploitability (chips per hand)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def print_strategies(tree: object, base: dict, trained: dict) -> None:
    """What changed, information set by information set: each move's probability, base -> trained."""
    labels = infoset_labels(tree)
    print("\nmove probabilities, base -> trained:")
    for key in sorted(base, key=lambda k: (k[0], labels[k])):
        moves = "  ".join(f"{move} {base[key][move]:.3f} -> {trained[key][move]:.3f}" for move in base[key])
        print(f"  player {key[0]}  {labels[key]}:  {moves}")


async def run_kuhn(args: argparse.Namespace) -> dict:
    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    base = choice_policy(None, args.temperature, "base")
    bot = make_policy("bot")
    base_strategy, bot_strategy = await policy_strategy(tree, base), await policy_strategy(tree, bot)
    base_eval = evaluate(tree, base_strategy)
    uniform = evaluate(tree, uniform_strategy(tree)).exploitability
    print(f"base model: exploitability {base_eval.exploitability:.4f} (uniform {uniform:.4f})", flush=True)
    trainer, final, curve, train_s = await train(args, tree)
    trained = choice_policy(str(final), args.temperature, "trained")
    trained_strategy = await policy_strategy(tree, trained)
    trained_eval = evaluate(tree, trained_strategy)
    eval_started = time.perf_counter()
    vs_base = await play_games("kuhn_poker", trained, base, args.eval_games, args.seed + 10_000, args.in_flight)
    vs_bot = await play_games("kuhn_poker", trained, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    eval_s = time.perf_counter() - eval_started
    plot(curve, base_eval.exploitability, uniform, args.plot,
         f"Kuhn self-play in choice mode, SmolLM2-135M + LoRA ({trainer.step} steps, {train_s / 60:.1f} min)")
    trainer.close()
    ratio = trained_eval.exploitability / base_eval.exploitability if base_eval.exploitability > 0 else float("nan")
    print(f"\ntrained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final}")
    print(f"exploitability: base {base_eval.exploitability:.4f}  trained {trained_eval.exploitability:.4f}  ratio {ratio:.3f}")
    for label, result, exact in (("base", vs_base, chips_against(tree, trained_strategy, base_strategy)),
                                 ("bot", vs_bot, chips_against(tree, trained_strategy, bot_strategy))):
        print(f"vs {label}: {result['mean_score']:+.3f} chips/hand  95% CI {result['ci95']}  over {result['games']} hands "
              f"(exact expectation {exact:+.4f}); hands won {result['good_rate']:.3f} {result['good_rate_ci95']}")
    print(f"evaluation took {eval_s:.0f} s; curve: {args.plot}")
    print_strategies(tree, base_strategy, trained_strategy)
    return {
        "exploitability_base": round(base_eval.exploitability, 4),
        "exploitability_trained": round(trained_eval.exploitability, 4),
        "exploitability_ratio": finite(ratio),
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
    }


async def run_tictactoe(args: argparse.Namespace) -> dict:
    base = choice_policy(None, args.temperature, "base")
    bot = make_policy("bot")
    before = await play_games("tictactoe", base, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    print(f"base model vs bot: draw-or-win {before['good_rate']:.3f} {before['good_rate_ci95']} over {before['games']} games", flush=True)
    trainer, final, _curve, train_s = await train(args, None)
    trainer.close()
    trained = choice_policy(str(final), args.temperature, "trained")
    after = await play_games("tictactoe", trained, bot, args.eval_games, args.seed + 20_000, args.in_flight)
    print(f"\ntrained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final}")
    print(f"trained vs bot: draw-or-win {after['good_rate']:.3f} {after['good_rate_ci95']} over {after['games']} games "
          f"(before {before['good_rate']:.3f}; the best possible is 1.0)")
    return {
        "draw_or_win_vs_bot_base": before["good_rate"],
        "draw_or_win_vs_bot_base_ci95": before["good_rate_ci95"],
        "draw_or_win_vs_bot_trained": after["good_rate"],
        "draw_or_win_vs_bot_trained_ci95": after["good_rate_ci95"],
        "eval_games": args.eval_games,
        "unfinished_games": before["unfinished"] + after["unfinished"],
        "train_steps": trainer.step,
        "train_minutes": round(train_s / 60, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(GAME_OPTIONS), default="kuhn_poker")
    parser.add_argument("--minutes", type=float, default=45.0, help="training time budget (the issue allows at most 45 on 2 cores)")
    parser.add_argument("--eval-games", type=int, default=None,
                        help="evaluation games (Kuhn: hands) against each opponent; default 400 for Kuhn, 200 for Tic-Tac-Toe")
    parser.add_argument("--temperature", type=float, default=None,
                        help="choice temperature of the policies evaluated (exploitability, games); default: the training one, "
                             "the policy self-play optimises and its checkpoints play at")
    parser.add_argument("--train-temperature", type=float, default=None,
                        help="choice temperature of self-play's draws (default: 5 in Kuhn, where the base all but never deviates at 1; 1 in Tic-Tac-Toe)")
    parser.add_argument("--groups", type=int, default=16, help="deals per step (GRPO groups): 16 x 4 = 64 hands")
    parser.add_argument("--group-size", type=int, default=4, help="hands per deal; both seats are trained")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="at 3e-3 the card-blind part swings (bench/card_separation.py)")
    parser.add_argument("--kl-coef", type=float, default=0.1, help="KL penalty to the base model per decision (0: none)")
    parser.add_argument("--entropy-coef", type=float, default=0.02, help="bonus on the entropy of each draw among the legal moves (0: none)")
    parser.add_argument("--in-flight", type=int, default=32, help="evaluation hands at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs")
    parser.add_argument("--name", default=None, help="run folder under --runs (default bench-strategy-GAME)")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "strategy-kuhn.png", help="Kuhn's exploitability curve")
    args = parser.parse_args()
    args.eval_games = args.eval_games or (400 if args.game == "kuhn_poker" else 200)
    args.name = args.name or f"bench-strategy-{args.game}"
    args.train_temperature = args.train_temperature or TRAIN_TEMPERATURE[args.game]
    args.temperature = args.temperature if args.temperature is not None else args.train_temperature
    if args.eval_games < 2 or args.minutes <= 0:
        parser.error("--eval-games must be at least 2 and --minutes positive")
    import shutil

    shutil.rmtree(args.runs / args.name, ignore_errors=True)  # each run starts from the base model
    runner = run_kuhn if args.game == "kuhn_poker" else run_tictactoe
    figures = asyncio.run(runner(args))
    figures.update(train_temperature=args.train_temperature, eval_temperature=args.temperature, learning_rate=args.learning_rate,
                   kl_coef=args.kl_coef, entropy_coef=args.entropy_coef, episodes_per_step=args.groups * args.group_size)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
