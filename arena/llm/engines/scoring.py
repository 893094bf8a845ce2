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
) -> "torch.Tensor":
    """Each option's per-token log-probs as the continuation of its prompt, one row per (prompt,
    option) in order, 0 past an option's end: [rows, longest option].

    `first_logprobs` [prompts, vocab] are the next-token log-probs after each prompt, whose
    attention mask and KV cache are given. A prompt's options run as ONE row after its cache, one
    after another, under a 4D attention mask: each option's tokens see the prompt and the earlier
    tokens of their own option only, at the positions they would have as the reply. So the prompt's
    KV cache is used as it is, never copied once per option (which cost 1.6-1.9x the time and the
    memory of a copy of the cache per legal move: docs/benchmarks.md). Differentiable: the learner
    computes the same scores with gradients (trainer.learner). `forward_kwargs(owner)` adds
    per-row model arguments (the adapter of each row's prompt)."""
    import torch

    device = attention_mask.device
    prompts, prompt_width = attention_mask.shape
    spans: list[list[tuple[int, int]]] = []  # per prompt: (start in its row, length) of each option
    rows: list[list[int]] = []
    for options in option_ids:
        row: list[int] = []
        spans.append([])
        for ids in options:
            spans[-1].append((len(row), len(ids)))
            row.extend(ids)
        rows.append(row)
    width = max(len(row) for row in rows)
    ids = torch.full((prompts, width), pad_id, dtype=torch.long)
    positions = torch.zeros((prompts, width), dtype=torch.long)
    allowed = torch.zeros((prompts, width, prompt_width + width), dtype=torch.bool)
    prompt_lengths = attention_mask.sum(-1).tolist()
    prompt_keys = attention_mask.bool().cpu()
    for b, (row, row_spans) in enumerate(zip(rows, spans)):
        ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
        for start, n in row_spans:
            positions[b, start : start + n] = int(prompt_lengths[b]) + torch.arange(n)
            allowed[b, start : start + n, :prompt_width] = prompt_keys[b]
            allowed[b, start : start + n, prompt_width + start : prompt_width + start + n] = torch.tril(torch.ones(n, n, dtype=torch.bool))
        for j in range(len(row), width):  # padding sees itself only (a finite softmax); nothing reads it
            allowed[b, j, prompt_width + j] = True
    dtype = model.get_input_embeddings().weight.dtype
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min).unsqueeze(1)
    out = model(
        input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
        past_key_values=cache, use_cache=True, **forward_kwargs(list(range(prompts))),
    )
    # An option's first token comes from the prompt's last position; its token j+1 from its position j.
    pairs = [(b, start, option) for b, (row_spans, options) in enumerate(zip(spans, option_ids)) for (start, _), option in zip(row_spans, options)]
    longest = max(len(option) for _, _, option in pairs)
    owner = torch.tensor([b for b, _, _ in pairs], device=device)
    first = torch.tensor([option[0] for _, _, option in pairs], device=device)
    token_logprobs = first_logprobs[owner].gather(1, first.unsqueeze(1))
    if longest > 1:
        at = torch.zeros((len(pairs), longest - 1), dtype=torch.long)
        target = torch.zeros((len(pairs), longest - 1), dtype=torch.long)
        valid = torch.zeros((len(pairs), longest - 1))
        for r, (_, start, option) in enumerate(pairs):
            n = len(option) - 1
            at[r, :n] = start + torch.arange(n)
            target[r, :n] = torch.tensor(option[1:])
            valid[r, :n] = 1
        at, target, valid = at.to(device), target.to(device), valid.to(device)
        logits = out.logits[owner.unsqueeze(1), at]  # [pairs, longest-1, vocab]: only the positions that score a token
        rest = logits.float().log_softmax(-1).gather(2, target.unsqueeze(2)).squeeze(2)
        token_logprobs = torch.cat([token_logprobs, rest * valid], dim=1)
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
