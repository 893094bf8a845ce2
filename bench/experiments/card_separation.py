"""Can the LoRA update tell the cards apart? Kuhn poker's information sets, one clean signal.

    python -m bench.card_separation                  # 6 updates at bench/strategy's settings
    python -m bench.card_separation --learning-rate 1e-3 --updates 8

bench/strategy.py's self-play ends card-blind: it bets, calls and folds alike with every card.
This bench asks whether that is the noise of sampled self-play or the update itself. It gives
the trainer's own learner (trainer.learner, choice samples, bench/strategy's algorithm settings)
the cleanest possible card-dependent signal, with no sampling at all: at all 12 information sets
both legal moves, the aggressive one (bet, call) with advantage +p for a King, -p for a Jack and
0 for a Queen and the other with the opposite sign, p being the move's current draw probability
(the expected policy gradient of "be aggressive with a King, passive with a Jack"). The signal is
balanced over the cards, so a learner that keeps information sets apart moves the King and the
Jack apart and leaves the card average alone.

Measured before and after each update, from the learner's own log-probs (choice temperature 5):
- card gap:   P(aggressive | K) - P(aggressive | J), averaged over the four betting situations;
- card-blind drift: how far P(aggressive), averaged over the cards, moved from the base;
- gradient cosine: before any update, the cosine between the LoRA gradients of the aggressive
  move's draw log-prob at two information sets that differ only in the card (the smaller the
  cosine, the more of an update can be card-specific).
The reference learner with one free logit per information set (trainer.tabular_selfplay, Adam at
lr 0.1, its tuned rate) widens the gap at every step and does not drift. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import torch

from arena.llm.engines import open_engine
from arena.llm.prompting import Mode
from arena.policy import make_policy
from bench.experiments.card_gradient_cosine import lora_gradient
from evaluation.exploitability import build_tree, infoset_labels
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter
from trainer.tabular_selfplay import Adam, decision_loss_gradient, softmax

AGGRESSIVE = ("bet", "call")
CARD_SIGN = {"K": 1.0, "Q": 0.0, "J": -1.0}
TABULAR_LEARNING_RATE = 0.1  # the reference's best rate at run E's budget (bench/tabular_reference.py)


def situation_and_card(label: str) -> tuple[str, str]:
    card = re.search(r"Your card: (\w)", label).group(1)
    return re.sub(r"Your card: \w \| ", "", label), card


def summary(aggressive: dict[tuple[str, str], float], base: dict[tuple[str, str], float]) -> tuple[float, float]:
    """(card gap, card-blind drift) of a table P(aggressive) by (situation, card)."""
    situations = sorted({s for s, _ in aggressive})
    gap = statistics.mean(aggressive[(s, "K")] - aggressive[(s, "J")] for s in situations)
    drift = statistics.mean(
        statistics.mean(aggressive[(s, c)] for c in "JQK") - statistics.mean(base[(s, c)] for c in "JQK") for s in situations
    )
    return gap, drift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--learning-rate", type=float, default=3e-3, help="bench/strategy's default")
    parser.add_argument("--kl-coef", type=float, default=0.1)
    parser.add_argument("--entropy-coef", type=float, default=0.02)
    parser.add_argument("--temperature", type=float, default=5.0, help="the draw's choice temperature")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    labels = infoset_labels(tree)
    policy = make_policy("local,engine=hf,mode=choice,obs=state")  # only to build the prompts a match sends
    engine = open_engine("local", "hf")
    decisions = []  # (situation, card, prompt ids, option ids, moves)
    for key, info in tree.infosets.items():
        prompt_ids = engine.encode(policy.build_prompt(info.request, Mode.CHOICE).messages)
        option_ids = engine.option_ids(list(info.moves))
        decisions.append((*situation_and_card(labels[key]), prompt_ids, option_ids, list(info.moves)))

    with tempfile.TemporaryDirectory() as folder:
        adapter = Path(folder) / "live"
        write_initial_adapter("local", LoraSettings(), adapter, args.seed)
        settings = AlgorithmSettings(
            loss_norm="sequence", epochs=1, minibatch_size=64, micro_batch_size=16, learning_rate=args.learning_rate,
            kl_coef=args.kl_coef, entropy_coef=args.entropy_coef,
        )
        learner = Learner(engine, adapter, settings, temperature=1.0, max_new_tokens=4)

        def samples(probs: list[list[float]] | None) -> list[Sample]:
            out = []
            for i, (_, card, prompt_ids, option_ids, moves) in enumerate(decisions):
                for j, move in enumerate(moves):
                    sign = CARD_SIGN[card] * (1.0 if move in AGGRESSIVE else -1.0)
                    p = probs[i][j] if probs else 0.0
                    out.append(Sample(prompt_ids, option_ids[j], sign * p, option_ids=option_ids, chosen=j, choice_temperature=args.temperature))
            return out

        def draw_probabilities() -> list[list[float]]:
            batch = samples(None)
            learner.prepare(batch, need_ref=False)
            flat = [float(torch.exp(s.old_logps[0])) for s in batch]
            out, k = [], 0
            for *_, moves in decisions:
                out.append(flat[k : k + len(moves)])
                k += len(moves)
            return out

        def aggressive_table(probs: list[list[float]]) -> dict[tuple[str, str], float]:
            return {(s, c): next(p for p, m in zip(probs[i], moves) if m in AGGRESSIVE) for i, (s, c, _, _, moves) in enumerate(decisions)}

        cosine = gradient_cosines(learner, decisions, samples(None))
        probs = draw_probabilities()
        base = aggressive_table(probs)
        rows = [(0, 0.0, 0.0, 0.0)]
        print(f"gradient cosine between cards (same situation): median {statistics.median(cosine):.4f}, "
              f"min {min(cosine):.4f}, max {max(cosine):.4f}", flush=True)
        rng = random.Random(args.seed)
        for update in range(1, args.updates + 1):
            started = time.perf_counter()
            learner.update(samples(probs), rng)
            probs = draw_probabilities()
            gap, drift = summary(aggressive_table(probs), base)
            rows.append((update, gap, drift, time.perf_counter() - started))
            print(f"update {update}: card gap {gap:+.4f}  card-blind drift {drift:+.4f}  ({rows[-1][3]:.0f} s)", flush=True)

    tabular = tabular_gaps(decisions, base, args)
    print("reference (one logit per information set): card gap " + ", ".join(f"{g:+.4f}" for g in tabular), flush=True)
    print(json.dumps({
        "card_gradient_cosine_median": round(statistics.median(cosine), 4),
        "card_gradient_cosine_min": round(min(cosine), 4),
        "card_gap_by_update": [round(g, 4) for _, g, _, _ in rows[1:]],
        "card_blind_drift_by_update": [round(d, 4) for _, _, d, _ in rows[1:]],
        "max_abs_card_blind_drift": round(max(abs(d) for _, _, d, _ in rows), 4),
        "tabular_card_gap_by_update": [round(g, 4) for g in tabular],
        "learning_rate": args.learning_rate, "kl_coef": args.kl_coef, "entropy_coef": args.entropy_coef,
        "choice_temperature": args.temperature,
    }))


def gradient_cosines(learner: Learner, decisions: list, batch: list[Sample]) -> list[float]:
    """Cosines between the aggressive move's draw log-prob gradients of the same situation's cards."""
    grads: dict[tuple[str, str], torch.Tensor] = {}
    k = 0
    for situation, card, _, _, moves in decisions:
        j = next(i for i, m in enumerate(moves) if m in AGGRESSIVE)
        grads[(situation, card)] = lora_gradient(learner, batch[k + j])
        k += len(moves)
    out = []
    for situation in sorted({s for s, _ in grads}):
        for a, b in itertools.combinations("JQK", 2):
            out.append(float(torch.nn.functional.cosine_similarity(grads[(situation, a)], grads[(situation, b)], dim=0)))
    return out


def tabular_gaps(decisions: list, base: dict[tuple[str, str], float], args: argparse.Namespace) -> list[float]:
    """The same expected-signal updates on a free (passive, aggressive) logit pair per information
    set, with the reference learner's loss gradient and Adam."""
    keys = [(s, c) for s, c, *_ in decisions]
    params = [z for key in keys for z in (0.0, math.log(base[key] / (1 - base[key])))]
    ref = [math.log(p) for key in keys for p in softmax(params[2 * keys.index(key) : 2 * keys.index(key) + 2])]
    adam = Adam(len(params), TABULAR_LEARNING_RATE)
    gaps = []
    for _ in range(args.updates):
        grads = [0.0] * len(params)
        for i, key in enumerate(keys):
            z = params[2 * i : 2 * i + 2]
            p = softmax(z)
            sign = CARD_SIGN[key[1]]
            for action, advantage in ((0, -sign * p[0]), (1, sign * p[1])):
                d = decision_loss_gradient(z, action, advantage, ref[2 * i + action], args.kl_coef, args.entropy_coef)
                for j in range(2):
                    grads[2 * i + j] += d[j] / (2 * len(keys))  # the loss is a mean over the samples
        adam.step(params, grads)
        table = {key: softmax(params[2 * i : 2 * i + 2])[1] for i, key in enumerate(keys)}
        gaps.append(summary(table, base)[0])
    return gaps


if __name__ == "__main__":
    main()
