"""Can the LoRA learn poker from self-play's signal without its sampling noise?

    python -m bench.experiments.expected_gradient --game kuhn_poker --updates 8 --private-contrast 1
    python -m bench.experiments.expected_gradient --game leduc_holdem --updates 6 --private-contrast 1 --entropy-coef 0
    python -m bench.experiments.expected_gradient --game leduc_holdem --updates 5 --private-contrast 1 --entropy-coef 0 --prompt private-last

Every LoRA self-play run in Leduc Hold'em ended card-blind and worse than the base
(docs/experiments/leduc-selfplay.md), where one free logit per information set, trained on the same
hands, gets better. Two readings: 256 sampled hands a step are too noisy a signal for one LoRA
shared by 288 information sets, or the LoRA cannot follow even a clean one. This separates them.
Each update gives the trainer's own learner (trainer.learner, choice samples, bench.strategy's
algorithm settings) the exact expected self-play signal, the limit of infinitely many hands: at
every information set I, every legal move a as a sample with advantage Q(I, a) - V(I) and weight
reach(I) x pi(a|I) (evaluation.exploitability.action_values, exact over the game tree), so the
weighted loss is the expectation of the sampled one with the per-state baseline. Advantages are in
units of the base's standard deviation of a hand's chips (GRPO's division by the group's std puts
the sampled ones near unit scale, which sets their balance with the KL and entropy terms). One
optimizer step per update, the whole tree in one minibatch.

The same signal drives one free logit per (information set, move) (the reference learner's loss,
trainer.tabular_selfplay.decision_loss_gradient, Adam) at a few rates, for the same number of
updates. After each update: the live policy's exact exploitability, and how card-blind it is:
`card_spread` (total variation between the move distributions of the information sets that share
a public state, i.e. differ only in the private card, averaged over pairs and public states) and
`shared_drift` (total variation between the card-averaged distribution and the base's, averaged
over public states), and the policy's KL to the base and its entropy over the moves, both averaged
over information sets by how often the live policy meets them (exact, after the update; the
learner's own train/kl is measured before its step). Ends with one JSON line; the headline `expected_gradient_ratio` is the LoRA's
final exploitability over the base's.

Free logits are also run under plain gradient descent (`descent_exploitability_by_update`), which
follows the raw gradient as the LoRA's shared parameters must. `--per-infoset` divides each
information set's weights by its reach (pi(a|I) alone, before the
contrast, so the contrast centres what the loss weighs): every set pulls alike, as each free logit
does under Adam, instead of by how often it is met (algorithm.state_weighting: per_state in the
sampled trainer). `--lora-rank`, `--lora-alpha` and `--target-modules` set the fresh LoRA's capacity.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch

from arena.llm import prompt_variants
from arena.llm.engines import open_engine
from arena.llm.prompting import Mode
from arena.policy import make_policy
from bench.head_to_head import GAME_OPTIONS
from bench.strategy import build_config, defaults
from evaluation.exploitability import GameTree, InfoKey, Strategy, action_values, build_tree, evaluate
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter
from trainer.tabular_selfplay import PROBABILITY_FLOOR, Adam, decision_loss_gradient, public_states, softmax

TABULAR_RATES = (0.03, 0.1, 0.3)  # around the reference learner's best rates (tabular_reference)
DESCENT_RATES = (100.0, 300.0, 1000.0)  # plain gradient descent's: the loss's gradient per logit is ~1/infosets


def hand_std(tree: GameTree, strategy: Strategy) -> float:
    """The standard deviation of seat 0's chips in one hand when `strategy` plays both seats."""
    def moments(node, weight: float) -> tuple[float, float]:
        if node.key is None:
            u = node.utilities[0]
            return weight * u, weight * u * u
        first = second = 0.0
        for move, p in strategy[node.key].items():
            if p > 0:
                a, b = moments(node.children[move], weight * p)
                first, second = first + a, second + b
        return first, second

    mean = square = 0.0
    for chance, root in tree.deals:
        a, b = moments(root, chance)
        mean, square = mean + a, square + b
    return math.sqrt(max(square - mean * mean, 0.0))


def expected_signal(tree: GameTree, strategy: Strategy, scale: float, contrast: float = 0.0,
                    per_infoset: bool = False) -> dict[InfoKey, list[tuple[float, float]]]:
    """Per information set, per legal move: (advantage in units of `scale`, weight = visits per hand).

    With `contrast` L, each move's advantage loses L x its weighted mean over the information sets
    of its public state (the cards that share it): the expectation of algorithm.private_contrast.
    With `per_infoset`, each set's weights are divided by its reach (pi(a|I) alone), so every
    information set pulls as hard as any other however rarely it is met."""
    out = {}
    for key, node in action_values(tree, strategy).items():
        moves = tree.infosets[key].moves
        v = sum(strategy[key][m] * node.values[m] for m in moves)
        out[key] = [((node.values[m] - v) / scale, node.reach * strategy[key][m]) for m in moves]
    if per_infoset:  # before the contrast, so its centring holds for the weights the loss uses
        for key, signal in out.items():
            reach = sum(w for _, w in signal)
            out[key] = [(a, w / reach if reach > 0 else 0.0) for a, w in signal]
    if contrast:
        groups: dict[tuple, list[InfoKey]] = {}
        for key, public in public_states(tree).items():
            groups.setdefault(public, []).append(key)
        for keys in groups.values():
            for j in range(len(tree.infosets[keys[0]].moves)):
                total = sum(out[k][j][1] for k in keys)
                if len(keys) >= 2 and total > 0:
                    mean = sum(out[k][j][0] * out[k][j][1] for k in keys) / total
                    for k in keys:
                        out[k][j] = (out[k][j][0] - contrast * mean, out[k][j][1])
    return out


def card_blindness(tree: GameTree, strategy: Strategy, base: Strategy) -> tuple[float, float]:
    """(card_spread, shared_drift) of `strategy`, as the module doc defines them."""
    groups: dict[tuple, list[InfoKey]] = {}
    for key, public in public_states(tree).items():
        groups.setdefault(public, []).append(key)
    spreads, drifts = [], []
    for keys in groups.values():
        moves = tree.infosets[keys[0]].moves
        if len(keys) >= 2:
            spreads.append(statistics.mean(total_variation(strategy[a], strategy[b], moves) for a, b in itertools.combinations(keys, 2)))
        mean_now = {m: statistics.mean(strategy[k][m] for k in keys) for m in moves}
        mean_base = {m: statistics.mean(base[k][m] for k in keys) for m in moves}
        drifts.append(total_variation(mean_now, mean_base, moves))
    return statistics.mean(spreads), statistics.mean(drifts)


def kl_and_entropy(tree: GameTree, strategy: Strategy, base: Strategy) -> tuple[float, float]:
    """KL(strategy || base) and the entropy of `strategy`'s moves, per decision: the mean over
    information sets weighted by their reach under `strategy` (what the learner's reach x pi
    weighted k3 estimates)."""
    reach = {key: node.reach for key, node in action_values(tree, strategy).items()}
    total = sum(reach.values())
    kl = entropy = 0.0
    for key, info in tree.infosets.items():
        for m in info.moves:
            p = strategy[key][m]
            if p > 0:
                kl += reach[key] * p * math.log(p / max(base[key][m], 1e-300))
                entropy -= reach[key] * p * math.log(p)
    return kl / total, entropy / total


def total_variation(p, q, moves) -> float:
    return 0.5 * sum(abs(p[m] - q[m]) for m in moves)


def tabular_curve(tree: GameTree, base: Strategy, scale: float, updates: int, rate: float, kl_coef: float, entropy_coef: float,
                  contrast: float, per_infoset: bool = False, descent: bool = False) -> tuple[list[float], Strategy]:
    """The same expected signal on one free logit per (information set, move), Adam at `rate`; with
    `descent`, plain gradient descent, which like a shared LoRA follows the raw gradient (Adam
    gives each logit, so each information set, the same step whatever its reach)."""
    keys = list(tree.infosets)
    moves = {k: tree.infosets[k].moves for k in keys}
    ref = {k: [math.log(max(base[k][m], PROBABILITY_FLOOR)) for m in moves[k]] for k in keys}
    logits = {k: list(ref[k]) for k in keys}
    flat = [z for k in keys for z in logits[k]]
    adam = None if descent else Adam(len(flat), rate)

    def strategy() -> dict[InfoKey, dict[str, float]]:
        return {k: dict(zip(moves[k], softmax(logits[k]))) for k in keys}

    curve = []
    for _ in range(updates):
        signal = expected_signal(tree, strategy(), scale, contrast, per_infoset)
        total = sum(w for k in keys for _, w in signal[k])
        grads = []
        for k in keys:
            g = [0.0] * len(moves[k])
            for action, (advantage, weight) in enumerate(signal[k]):
                d = decision_loss_gradient(logits[k], action, advantage, ref[k][action], kl_coef, entropy_coef)
                g = [gj + weight * dj / total for gj, dj in zip(g, d)]
            grads += g
        if descent:
            flat[:] = [z - rate * g for z, g in zip(flat, grads)]
        else:
            adam.step(flat, grads)
        i = 0
        for k in keys:
            logits[k] = flat[i : i + len(moves[k])]
            i += len(moves[k])
        curve.append(evaluate(tree, strategy()).exploitability)
    return curve, strategy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=["kuhn_poker", "leduc_holdem"], default="leduc_holdem")
    parser.add_argument("--updates", type=int, default=12)
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="the LoRA's Adam rate (bench.strategy's starting rate)")
    parser.add_argument("--temperature", type=float, default=5.0, help="the draw's choice temperature (bench.strategy's in poker)")
    parser.add_argument("--entropy-coef", type=float, default=None, help="the draw's entropy bonus (default: bench.strategy's for the game)")
    parser.add_argument("--prompt", default="default", help="the harness's prompt variant (bench.strategy --prompt), e.g. private-last")
    parser.add_argument("--private-contrast", type=float, default=0.0, help="centre each move's advantage across the cards of its public state (0-1)")
    parser.add_argument("--seed", type=int, default=0, help="the fresh LoRA's initialisation")
    parser.add_argument("--per-infoset", action="store_true",
                        help="weigh every information set alike (pi(a|I) alone, its reach divided out) instead of by how often it is met")
    parser.add_argument("--lora-rank", type=int, default=LoraSettings().r, help="the LoRA's rank (its capacity)")
    parser.add_argument("--lora-alpha", type=float, default=None, help="the LoRA's scale numerator (default: twice the rank, the trainer's ratio)")
    parser.add_argument("--target-modules", default=",".join(LoraSettings().target_modules),
                        help="comma-separated module names the LoRA adapts, e.g. q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    args = parser.parse_args()
    if args.updates < 1 or not args.learning_rate > 0 or not args.temperature > 0 or not 0 <= args.private_contrast <= 1 \
            or (args.entropy_coef is not None and args.entropy_coef < 0):
        parser.error("--updates must be at least 1, --learning-rate and --temperature above 0, --private-contrast in [0, 1], --entropy-coef at least 0")

    try:
        variant = prompt_variants.PromptVariant.parse(args.prompt)
    except ValueError as error:
        parser.error(f"--prompt: {error}")
    if not variant.list_moves:
        parser.error("--prompt: choice mode draws among the listed legal moves; no-legal-moves cannot be used here")
    try:
        lora = LoraSettings(r=args.lora_rank, alpha=args.lora_alpha if args.lora_alpha is not None else 2.0 * args.lora_rank,
                            target_modules=[m.strip() for m in args.target_modules.split(",") if m.strip()])
    except ValueError as error:
        parser.error(f"--lora-rank/--lora-alpha/--target-modules: {error}".splitlines()[0])
    overrides = {} if args.entropy_coef is None else {"entropy_coef": args.entropy_coef}
    bench = defaults(args.game, learning_rate=args.learning_rate, **overrides)
    algorithm = build_config(bench)["algorithm"]
    settings = AlgorithmSettings(**{**algorithm, "lr_schedule": "constant", "minibatch_size": 1_000_000})  # one step per update
    tree = build_tree(lambda: make_game(args.game, 2, **GAME_OPTIONS[args.game]))
    policy = make_policy("local,engine=hf,mode=choice,obs=state")  # only to build the prompts a match sends
    engine = open_engine("local", "hf")
    keys = list(tree.infosets)
    views = {k: prompt_variants.view(variant, tree.infosets[k].request) for k in keys}
    prompts = {k: engine.encode(policy.build_prompt(views[k].request, Mode.CHOICE, views[k].variant).messages) for k in keys}
    options = {k: engine.option_ids(list(tree.infosets[k].moves)) for k in keys}

    def samples(signal: dict | None, logps: dict | None) -> list[Sample]:
        out = []
        for k in keys:
            for j in range(len(options[k])):
                advantage, weight = signal[k][j] if signal else (0.0, 1.0)
                extra = {"sampler_logps": [logps[k][j]], "sampled_by_learner": True} if logps else {}
                out.append(Sample(prompts[k], options[k][j], advantage, option_ids=options[k], chosen=j,
                                  choice_temperature=args.temperature, weight=weight, **extra))
        return out

    with tempfile.TemporaryDirectory() as folder:
        adapter = Path(folder) / "live"
        write_initial_adapter("local", lora, adapter, args.seed)
        learner = Learner(engine, adapter, settings, temperature=1.0, max_new_tokens=4)

        def draw_logps() -> dict[InfoKey, list[float]]:
            batch = samples(None, None)
            learner.prepare(batch, need_ref=False)
            out: dict[InfoKey, list[float]] = {k: [] for k in keys}
            for sample, k in zip(batch, (k for k in keys for _ in options[k])):
                out[k].append(float(sample.old_logps[0]))
            return out

        def as_strategy(logps: dict[InfoKey, list[float]]) -> dict[InfoKey, dict[str, float]]:
            out = {}
            for k in keys:
                p = [math.exp(x) for x in logps[k]]
                out[k] = {m: q / sum(p) for m, q in zip(tree.infosets[k].moves, p)}
            return out

        started = time.perf_counter()
        logps = draw_logps()
        base = as_strategy(logps)
        base_exploitability = evaluate(tree, base).exploitability
        scale = hand_std(tree, base)
        spread, drift = card_blindness(tree, base, base)
        base_entropy = kl_and_entropy(tree, base, base)[1]
        print(f"base: exploitability {base_exploitability:.4f}, card spread {spread:.4f}, entropy {base_entropy:.3f}, hand std {scale:.3f} "
              f"({len(keys)} information sets; {time.perf_counter() - started:.0f} s)", flush=True)
        base_spread = spread
        curve, spreads, drifts, kls, entropies, seconds = [], [], [], [], [], []
        rng = random.Random(args.seed)
        strategy = base
        for update in range(1, args.updates + 1):
            started = time.perf_counter()
            learner.update(samples(expected_signal(tree, strategy, scale, args.private_contrast, args.per_infoset), logps), rng)
            logps = draw_logps()
            strategy = as_strategy(logps)
            curve.append(evaluate(tree, strategy).exploitability)
            spread, drift = card_blindness(tree, strategy, base)
            spreads.append(spread)
            drifts.append(drift)
            kl, entropy = kl_and_entropy(tree, strategy, base)
            kls.append(kl)
            entropies.append(entropy)
            seconds.append(time.perf_counter() - started)
            print(f"update {update}: exploitability {curve[-1]:.4f} (ratio {curve[-1] / base_exploitability:.3f})  card spread {spread:.4f}  "
                  f"shared drift {drift:.4f}  KL {kls[-1]:.3f}  entropy {entropies[-1]:.3f}  ({seconds[-1]:.0f} s)", flush=True)

    tabular = {}
    for rate in TABULAR_RATES:
        values, final = tabular_curve(tree, base, scale, args.updates, rate, settings.kl_coef, settings.entropy_coef, args.private_contrast,
                                      args.per_infoset)
        tabular[rate] = (values, *card_blindness(tree, final, base))
        print(f"free logits at {rate}: exploitability " + ", ".join(f"{x:.4f}" for x in values)
              + f"; card spread {tabular[rate][1]:.4f}, shared drift {tabular[rate][2]:.4f}", flush=True)
    descent = {rate: tabular_curve(tree, base, scale, args.updates, rate, settings.kl_coef, settings.entropy_coef, args.private_contrast,
                                   args.per_infoset, descent=True)[0] for rate in DESCENT_RATES}
    for rate, values in descent.items():
        print(f"free logits, gradient descent at {rate:g}: exploitability " + ", ".join(f"{x:.4f}" for x in values), flush=True)
    best_rate = min(TABULAR_RATES, key=lambda r: tabular[r][0][-1])
    print(json.dumps({
        "game": args.game, "updates": args.updates, "learning_rate": args.learning_rate, "private_contrast": args.private_contrast, "per_infoset": args.per_infoset, "prompt": args.prompt, "choice_temperature": args.temperature,
        "lora_rank": lora.r, "lora_alpha": lora.alpha, "target_modules": lora.target_modules,
        "kl_coef": settings.kl_coef, "entropy_coef": settings.entropy_coef, "advantage_scale": round(scale, 4),
        "exploitability_base": round(base_exploitability, 4),
        "exploitability_by_update": [round(x, 4) for x in curve],
        "expected_gradient_ratio": round(curve[-1] / base_exploitability, 4),
        "card_spread_base": round(base_spread, 4), "card_spread_by_update": [round(x, 4) for x in spreads],
        "shared_drift_by_update": [round(x, 4) for x in drifts],
        "kl_by_update": [round(x, 4) for x in kls], "entropy_base": round(base_entropy, 4), "entropy_by_update": [round(x, 4) for x in entropies],
        "seconds_per_update_median": round(statistics.median(seconds), 1),
        "tabular_exploitability_by_update": {str(r): [round(x, 4) for x in tabular[r][0]] for r in TABULAR_RATES},
        "tabular_best_rate": best_rate,
        "tabular_ratio": round(tabular[best_rate][0][-1] / base_exploitability, 4),
        "tabular_card_spread": round(tabular[best_rate][1], 4), "tabular_shared_drift": round(tabular[best_rate][2], 4),
        "descent_exploitability_by_update": {f"{r:g}": [round(x, 4) for x in values] for r, values in descent.items()},
    }))


if __name__ == "__main__":
    main()
