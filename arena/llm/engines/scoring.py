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


def shares_prefix_on(device: Any) -> bool:
    """Whether prompts that share a prefix should run it once, in a forward of its own, with its
    KV cache repeated for every row: on the CPU, not on CUDA. On 2 CPU cores a forward costs its
    arithmetic, and a shared system prompt run once saves most of it; on a GPU, at the shipped
    model's size, a forward costs its kernel launches (an H100 was busy 0.2 s of a 2.6 s learner
    update: docs/benchmarks.md), so one forward per batch, each row with its whole prompt, is the
    cheaper layout. The engine's `choose` and the learner follow the same rule, so the scores the
    learner reuses from the sampler come from the same layout as its own. `device`: a
    torch.device or its name ("cuda:1" included)."""
    import torch

    return torch.device(device).type != "cuda"


def sharable_prefix(sequences: list[list[int]]) -> int:
    """Tokens all sequences start with when that is worth a forward of its own (at least
    MIN_SHARED_PREFIX, over more than one sequence); 0 otherwise."""
    shared = shared_prefix_length(sequences) if len(sequences) > 1 else 0
    return shared if shared >= MIN_SHARED_PREFIX else 0


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
    rows, spans = _option_rows(option_ids)
    width = max(len(row) for row in rows)
    ids = torch.full((prompts, width), pad_id, dtype=torch.long)
    positions = torch.zeros((prompts, width), dtype=torch.long)
    allowed = torch.zeros((prompts, width, prompt_width + width), dtype=torch.bool)
    prompt_lengths = attention_mask.sum(-1).tolist()
    prompt_keys = attention_mask.bool().cpu()
    for b, row in enumerate(rows):
        ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
        _lay_options(allowed[b], positions[b], spans[b], prompt_keys[b], int(prompt_lengths[b]), prompt_width, len(row))
    out = model(
        input_ids=ids.to(device), attention_mask=_additive(allowed, model).to(device), position_ids=positions.to(device),
        past_key_values=cache, use_cache=True, **forward_kwargs(list(range(prompts))),
    )
    return _gather_option_logprobs(first_logprobs, out.logits, spans, option_ids)


def prompt_and_option_token_logprobs(
    model: Any, prompt_ids: list[list[int]], option_ids: list[list[list[int]]], pad_id: int, device: Any,
    forward_kwargs: Callable[[list[int]], dict[str, Any]],
) -> "torch.Tensor":
    """`option_token_logprobs` with each prompt in the same forward as its options: one row per
    prompt, the prompt left padded to a common column, then its options one after another under
    a 4D mask (the prompt's tokens see the prompt causally; each option's tokens see the prompt
    and their own earlier tokens, at the positions they would have as the reply). One forward
    instead of two (prompt, then options on its cache), for the same scores up to float rounding:
    on a GPU at these sizes a forward costs its kernel launches, not its arithmetic (the learner
    was launch bound on an H100: docs/benchmarks.md). Only the prompt's last position and the
    options' positions are turned into logits."""
    import torch

    prompts = len(prompt_ids)
    prompt_width = max(len(prompt) for prompt in prompt_ids)
    rows, spans = _option_rows(option_ids)
    option_width = max(len(row) for row in rows)
    width = prompt_width + option_width
    ids = torch.full((prompts, width), pad_id, dtype=torch.long)
    positions = torch.zeros((prompts, width), dtype=torch.long)
    allowed = torch.zeros((prompts, width, width), dtype=torch.bool)
    for b, (prompt, row) in enumerate(zip(prompt_ids, rows)):
        start = prompt_width - len(prompt)
        ids[b, start:prompt_width] = torch.tensor(prompt, dtype=torch.long)
        ids[b, prompt_width : prompt_width + len(row)] = torch.tensor(row, dtype=torch.long)
        positions[b, start:prompt_width] = torch.arange(len(prompt))
        allowed[b, start:prompt_width, start:prompt_width] = torch.tril(torch.ones(len(prompt), len(prompt), dtype=torch.bool))
        pads = torch.arange(start)  # left padding sees itself only (a finite softmax); nothing reads it
        allowed[b, pads, pads] = True
        prompt_keys = torch.zeros(prompt_width, dtype=torch.bool)
        prompt_keys[start:] = True
        _lay_options(allowed[b, prompt_width:], positions[b, prompt_width:], spans[b], prompt_keys, len(prompt), prompt_width, len(row))
    out = model(
        input_ids=ids.to(device), attention_mask=_additive(allowed, model).to(device), position_ids=positions.to(device),
        logits_to_keep=option_width + 1, **forward_kwargs(list(range(prompts))),
    )
    first_logprobs = out.logits[:, 0, :].float().log_softmax(-1)  # the prompt's last position
    return _gather_option_logprobs(first_logprobs, out.logits[:, 1:], spans, option_ids)


def _option_rows(option_ids: list[list[list[int]]]) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    """Each prompt's options one after another as one row, and (start in the row, length) of each."""
    rows: list[list[int]] = []
    spans: list[list[tuple[int, int]]] = []
    for options in option_ids:
        row: list[int] = []
        spans.append([])
        for ids in options:
            spans[-1].append((len(row), len(ids)))
            row.extend(ids)
        rows.append(row)
    return rows, spans


def _lay_options(allowed: "torch.Tensor", positions: "torch.Tensor", spans: list[tuple[int, int]], prompt_keys: "torch.Tensor",
                 prompt_length: int, prompt_width: int, row_length: int) -> None:
    """One prompt's option columns: positions after the prompt, and what each may attend to
    (`allowed` [option columns, prompt_width + option columns]): the prompt's real tokens and the
    earlier tokens of its own option."""
    import torch

    for start, n in spans:
        positions[start : start + n] = prompt_length + torch.arange(n)
        allowed[start : start + n, :prompt_width] = prompt_keys
        allowed[start : start + n, prompt_width + start : prompt_width + start + n] = torch.tril(torch.ones(n, n, dtype=torch.bool))
    pads = torch.arange(row_length, allowed.shape[0])  # padding sees itself only (a finite softmax); nothing reads it
    allowed[pads, prompt_width + pads] = True


def _additive(allowed: "torch.Tensor", model: Any) -> "torch.Tensor":
    """A boolean [rows, queries, keys] mask as the model's additive 4D mask."""
    import torch

    dtype = model.get_input_embeddings().weight.dtype
    return torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min).unsqueeze(1)


def _gather_option_logprobs(first_logprobs: "torch.Tensor", option_logits: "torch.Tensor", spans: list[list[tuple[int, int]]],
                            option_ids: list[list[list[int]]]) -> "torch.Tensor":
    """[rows, longest option] token log-probs: an option's first token from its prompt's
    next-token log-probs, its token j+1 from the logits at its own column j."""
    import torch

    device = first_logprobs.device
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
        logits = option_logits[owner.unsqueeze(1), at]  # [pairs, longest-1, vocab]: only the positions that score a token
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
