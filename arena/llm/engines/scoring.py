"""The maths of scoring legal moves as whole replies, shared by the hf engine's `choose` and the
learner (trainer.learner recomputes the same scores with gradients), and the grouping of prompts
by a shared prefix that both batch on.

A move is scored as its tokens plus end-of-turn after the prompt: log p(move as the reply). A
choice at temperature T draws move i with probability softmax(logp / T)[i].
"""

from __future__ import annotations

import math
from typing import Any, Callable

MIN_SHARED_PREFIX = 32  # shorter common prefixes are not worth a separate prefill


def option_token_logprobs(
    model: Any, first_logprobs: "torch.Tensor", attention_mask: "torch.Tensor", cache: Any, option_ids: list[list[list[int]]],
    pad_id: int, forward_kwargs: Callable[[list[int]], dict[str, Any]],
) -> torch.Tensor:
    """Each option's per-token log-probs as the continuation of its prompt, one row per (prompt,
    option) in order, 0 past an option's end: [rows, longest option].

    `first_logprobs` [prompts, vocab] are the next-token log-probs after each prompt, whose
    attention mask and KV cache are given; the cache is repeated for each option (changed in
    place) and only the options' own tokens run. Differentiable: the learner computes the same
    scores with gradients (trainer.learner). `forward_kwargs(owner)` adds per-row model arguments
    (the adapter of each row's prompt)."""
    import torch

    owner = [i for i, options in enumerate(option_ids) for _ in options]
    rows = [ids for options in option_ids for ids in options]
    device = attention_mask.device
    index = torch.tensor(owner, device=device)
    cache.batch_select_indices(index)
    width = max(len(ids) for ids in rows)
    opt = torch.full((len(rows), width), pad_id, dtype=torch.long)
    opt_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, ids in enumerate(rows):  # right padded: option tokens follow the prompt
        opt[row, : len(ids)] = torch.tensor(ids)
        opt_mask[row, : len(ids)] = 1
    opt, opt_mask = opt.to(device), opt_mask.to(device)
    out = model(
        input_ids=opt,
        attention_mask=torch.cat([attention_mask[index], opt_mask], dim=1),
        position_ids=attention_mask.sum(-1)[index].unsqueeze(1) + torch.arange(width, device=device).unsqueeze(0),
        past_key_values=cache,
        use_cache=True,
        **forward_kwargs(owner),
    )
    # first token from the prompt's last position; position j of the options predicts token j+1
    token_logprobs = first_logprobs[index].gather(1, opt[:, :1])
    if width > 1:
        rest = out.logits[:, :-1, :].float().log_softmax(-1).gather(2, opt[:, 1:].unsqueeze(2)).squeeze(2)
        token_logprobs = torch.cat([token_logprobs, rest * opt_mask[:, 1:]], dim=1)
    return token_logprobs


def choice_probabilities(option_logprobs: list[float], temperature: float) -> list[float]:
    """The chance of each option under choose(): softmax(logp / T), or all on the best at T = 0
    (the first best on a tie). Plain floats: policies call it without loading torch."""
    if temperature <= 0:
        best = max(range(len(option_logprobs)), key=lambda i: option_logprobs[i])
        return [1.0 if i == best else 0.0 for i in range(len(option_logprobs))]
    scaled = [x / temperature for x in option_logprobs]
    top = max(scaled)
    weights = [math.exp(x - top) for x in scaled]
    total = math.fsum(weights)
    return [w / total for w in weights]


def pick_option(scores: torch.Tensor, temperature: float, generator: torch.Generator | None) -> int:
    """argmax at temperature 0; else an inverse-CDF draw from softmax(scores / T)."""
    import torch

    if temperature <= 0 or generator is None:
        return int(scores.argmax())
    probs = torch.tensor(choice_probabilities(scores.tolist(), temperature), dtype=torch.float64)
    cdf = probs.cumsum(0)
    drawn = torch.searchsorted(cdf, torch.rand((), generator=generator, dtype=torch.float64) * cdf[-1], right=True)
    return int(drawn.clamp(max=len(probs) - 1))


def prefix_groups(sequences: list[list[int]]) -> list[list[int]]:
    """Indices of `sequences` in groups whose members share at least MIN_SHARED_PREFIX leading
    tokens (sorted order puts them next to each other); a sequence that shares less with its
    neighbours is a group of its own."""
    order = sorted(range(len(sequences)), key=lambda i: sequences[i])
    groups: list[list[int]] = []
    common = 0  # the prefix the current group shares
    for previous, i in zip([None, *order], order):
        if previous is not None:
            shared = min(common, shared_prefix_length([sequences[previous], sequences[i]]))
            if shared >= MIN_SHARED_PREFIX:
                groups[-1].append(i)
                common = shared
                continue
        groups.append([i])
        common = len(sequences[i])
    return groups


def shared_prefix_length(sequences: list[list[int]]) -> int:
    """Tokens all sequences start with, leaving every row at least one token of its own."""
    shortest = min(len(s) for s in sequences)
    first = sequences[0]
    length = 0
    while length < shortest - 1 and all(s[length] == first[length] for s in sequences):
        length += 1
    return length
