"""The learner: a LoRA adapter trained in place on the shared inference engine's model.

One copy of the weights serves both jobs. The adapter is loaded onto the process's hf engine
(`arena.llm.engines.open_engine(base, "hf")`) like any other adapter, so rollouts generate with the live weights
through the same engine and prompts the league uses; the learner then switches that adapter to
trainable and optimises it between rollout phases. The KL reference is the base model (peft's
`disable_adapter()`, no second copy) or a second small adapter refreshed from the live one.

The update is PPO-style: sampling log-probs are computed once per batch (before any step, so they
are the behaviour policy's), then `epochs` passes over shuffled minibatches, each minibatch
accumulated over micro-batches (cut from rows grouped by shared prompt prefix, `micro_batches`,
so each prefix runs once per micro-batch), gradient-norm clipped, one AdamW step.

A choice-mode turn (the move drawn among the legal ones, arena.llm.engines.hf.HFEngine.choose) is one action
with one log-probability: log softmax(L / T)[drawn], where L_i is legal move i's log-prob as the
whole reply and T the draw's temperature. The learner recomputes every L_i with the live weights,
so the update is the policy gradient of the distribution the move was drawn from: raising every
legal reply together changes nothing and earns nothing, and the exact entropy of that distribution
is at hand for the entropy bonus (`entropy_coef`).

When the replies were sampled by another engine (vLLM), the samples carry that engine's log-prob
of each sampled token. `prepare` measures the sampler/learner mismatch against the learner's own
pre-update log-probs (logged as mismatch/*) and, with `sampler_correction: tis`, turns it into
truncated importance weights min(exp(logp_learner_old - logp_sampler), tis_cap) for the loss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, Sequence

import torch

from arena.llm.bounded_memo import BoundedMemo, ids_digest
from arena.llm.engines.scoring import (
    option_token_logprobs, prefix_groups, prompt_and_option_token_logprobs, sharable_prefix, shares_prefix_on,
)
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.kl_control import adapted_kl_coef, behaviour_kl, measured_kl
from trainer.loss import LossStats, normaliser, policy_loss
from trainer.micro_batch_memory import RowMemory
from trainer.update_bound import NO_STEP, bound_step

ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
# Reused sampler log-probs recomputed every step as a check (mismatch/*), per kind (choice, text):
# enough tokens to catch a sampler that is not the learner, at most one micro-batch's rows.
CHECK_ROWS = 8
# A forward without gradients keeps no layer's activations for a backward: a row costs at most this
# share of what an update keeps for it (trainer/micro_batch_memory.py), plus its reply's logits
# (LOGIT_BYTES per position and vocabulary entry: the logits and their tempered copy). Measured on
# the shipped model (peak resident memory of one scoring forward, float32 on CPU, 16 and 32 rows of
# ~660 tokens): a choice row 50-69 MB, 7.5-10.4% of its update estimate, in either layout; a text
# row with an 8-token reply 20 MB, 3%.
NO_GRAD_ROW_SHARE = 0.25
LOGIT_BYTES = 10
SCORING_MICRO_BATCHES = 4  # micro-batches' rows in one scoring forward (`Learner.scoring_batches`), within the cap


@dataclass
class Sample:
    """One turn of a trained seat: the exact prompt and reply token ids and its advantage.

    A text reply's action is its tokens, one log-prob each. A choice-mode turn also carries
    `option_ids` (every legal move's reply ids, completion_ids being option_ids[chosen]) and the
    draw's temperature; its action is the choice, one log-prob (see the module doc)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    advantage: float
    old_logps: torch.Tensor | None = None  # [action_length], filled before the update
    ref_logps: torch.Tensor | None = None
    sampler_logps: list[float] | None = None  # the sampling engine's own, one per action position
    is_weights: torch.Tensor | None = None  # truncated IS weights, filled before the update
    option_ids: list[list[int]] | None = None
    chosen: int = 0
    choice_temperature: float = 1.0
    # how many turns this sample stands for (`merge_duplicates`), or its share of its state's unit
    # weight (`state_weighting: per_state`, merged shares summing)
    weight: float = 1.0
    # sampler_logps are the learner's own log-probs of this action before the update (sampled on
    # the learner's engine, same weights): `prepare` may take them as old_logps (reuse_sampler_logps)
    sampled_by_learner: bool = False
    # rows with one key share an optimizer step (`minibatch_indices`): the private contrast's public
    # state, whose centring holds only over rows that one Adam step sees together; None: any step
    minibatch_group: Hashable | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.option_ids is not None:
            if not 0 <= self.chosen < len(self.option_ids) or self.option_ids[self.chosen] != self.completion_ids:
                raise ValueError("a choice sample's completion_ids must be option_ids[chosen]")
            if not self.choice_temperature > 0:
                raise ValueError(f"choice_temperature must be > 0, got {self.choice_temperature}")

    @property
    def is_choice(self) -> bool:
        return self.option_ids is not None

    @property
    def action_length(self) -> int:
        """Log-probs per action: one per reply token, or one for a choice."""
        return 1 if self.is_choice else len(self.completion_ids)


def write_initial_adapter(base: str, lora: LoraSettings, folder: Path, seed: int, device: str | None = None) -> None:
    """A fresh LoRA (A random, B zero: the adapted model starts equal to the base) as a peft folder.

    Built on a throw-away CPU copy of the base: peft needs the real module shapes, and injecting
    into the engine's model directly would make the adapter active for every other row it serves.
    """
    from peft import LoraConfig, get_peft_model

    from arena.llm.model import load_model

    torch.manual_seed(seed)
    loaded = load_model(base, device="cpu")
    config = LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        task_type="CAUSAL_LM",
    )
    try:
        peft_model = get_peft_model(loaded.model, config)
    except ValueError as exc:  # e.g. target modules the model does not have
        raise ValueError(f"lora.target_modules: {str(exc).splitlines()[0][:300]}") from None
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    peft_model.save_pretrained(partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    del peft_model, loaded


class Learner:
    """Owns the trainable adapter on `engine.model`, its optimizer and the KL reference."""

    def __init__(self, engine: Any, adapter_dir: Path, settings: AlgorithmSettings, *, temperature: float, max_new_tokens: int):
        self.engine = engine
        self.settings = settings
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        before = set(getattr(engine.model, "peft_config", {}) or {})
        self.adapter_key = engine.load_adapter(str(adapter_dir))
        after = set(engine.model.peft_config)
        new = sorted(after - before)
        if len(new) != 1:
            raise RuntimeError(f"expected one new adapter on the engine for {adapter_dir}, found {new or 'none'}")
        self.name = new[0]
        self.model = engine.model  # a PeftModel now
        self.device = torch.device(engine.device)
        self.use_bf16 = self.device.type == "cuda"
        self.model.set_adapter(self.name)  # active + requires_grad for this adapter only
        self.params = self._adapter_params(self.name)
        for p in self.params.values():
            p.data = p.data.float()  # train LoRA in float32 even when the base is bf16
            p.requires_grad_(True)
        self.optimizer = torch.optim.AdamW(
            list(self.params.values()), lr=settings.learning_rate, weight_decay=settings.weight_decay
        )
        self.ref_name: str | None = None
        # the KL coefficient of the next update: kl_coef, or adapted to kl_target (trainer/kl_control.py)
        self.kl_coef = settings.kl_coef
        # The uniform average of the adapter's iterates since averaging started (`accumulate_average`)
        self.average: dict[str, torch.Tensor] | None = None
        self.averaged_iterates = 0
        self.base_logps = BoundedMemo()  # the base model's log-probs of an action (`_reference_logps`)
        self.row_memory = RowMemory.of(self.model.config)  # what one row of a given width keeps for the backward
        self.vocab_size = int(getattr(self.model.config, "vocab_size", 0) or 0)  # a reply position's logits
        self.dropout = any(getattr(cfg, "lora_dropout", 0) for cfg in [self.model.peft_config[self.name]])

    def set_learning_rate(self, learning_rate: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate

    # ---- adapter state -------------------------------------------------------------------------

    def _adapter_params(self, name: str) -> dict[str, torch.nn.Parameter]:
        """Parameters of one adapter keyed by their name with the adapter name removed."""
        marker = f".{name}."
        return {n.replace(marker, "."): p for n, p in self.model.named_parameters() if marker in n + "." and "lora_" in n}

    def adapter_state(self) -> dict[str, torch.Tensor]:
        from peft import get_peft_model_state_dict

        return get_peft_model_state_dict(self.model, adapter_name=self.name)

    def load_adapter_state(self, folder: Path) -> None:
        """Copy a saved adapter's weights into the live adapter (resume)."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        state = load_file(str(folder / ADAPTER_WEIGHTS), device=str(self.device))
        result = set_peft_model_state_dict(self.model, state, adapter_name=self.name)
        unexpected = getattr(result, "unexpected_keys", []) or []
        if unexpected:
            raise RuntimeError(f"{folder}: adapter does not match the configured LoRA ({unexpected[0]})")

    def save_adapter(self, folder: Path, weights: dict[str, torch.Tensor] | None = None) -> None:
        """A peft folder `hf:BASE+folder` can load: adapter_config.json + adapter_model.safetensors.
        `weights` (keyed as `self.params`, e.g. `self.average`) replace the live adapter's."""
        from safetensors.torch import save_file

        folder.mkdir(parents=True, exist_ok=True)
        state = self.adapter_state()
        if weights is not None:
            if set(state) != set(weights):
                raise ValueError(f"weights do not match the adapter: {sorted(set(state) ^ set(weights))[:3]}")
            state = weights
        state = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in state.items()}
        save_file(state, str(folder / ADAPTER_WEIGHTS))
        config = self.model.peft_config[self.name]
        data = config.to_dict()
        data["inference_mode"] = True
        for key, value in list(data.items()):  # sets (target_modules) are not JSON
            if isinstance(value, set):
                data[key] = sorted(value)
        (folder / ADAPTER_CONFIG).write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")

    # ---- the average of iterates ------------------------------------------------------------------

    @torch.no_grad()
    def accumulate_average(self) -> None:
        """Fold the current weights into the uniform average of iterates: avg += (w - avg) / n.
        Self-play in a zero-sum game circles its equilibrium; the average of the iterates sits
        near the centre of the circle, which is why fictitious play and CFR report it. It is an
        average of the LoRA's weights (A and B apart), measured for what it plays, not assumed to
        be the average policy."""
        self.averaged_iterates += 1
        if self.average is None:
            self.average = {k: p.detach().clone() for k, p in self.params.items()}
            return
        for key, p in self.params.items():
            self.average[key].add_(p.detach() - self.average[key], alpha=1.0 / self.averaged_iterates)

    def load_average(self, folder: Path, iterates: int) -> None:
        """Restore the average saved by `save_adapter(folder, self.average)` (resume)."""
        from safetensors.torch import load_file

        state = load_file(str(folder / ADAPTER_WEIGHTS), device=str(self.device))
        if set(state) != set(self.params):
            raise RuntimeError(f"{folder}: the average does not match the configured LoRA")
        self.average = {k: v.to(self.params[k].dtype) for k, v in state.items()}
        self.averaged_iterates = iterates

    # ---- reference adapter (KL to a lagged copy) -------------------------------------------------

    def ensure_reference(self, folder: Path) -> None:
        """Load a copy of the live adapter as the KL reference (once)."""
        if self.ref_name is not None:
            return
        self.save_adapter(folder)
        before = set(self.model.peft_config)
        self.engine.load_adapter(str(folder))
        self.ref_name = sorted(set(self.engine.model.peft_config) - before)[0]
        self.model.set_adapter(self.name)

    @torch.no_grad()
    def refresh_reference(self, ema: float | None) -> None:
        """reference <- current (copy), or reference <- ema*reference + (1-ema)*current."""
        assert self.ref_name is not None
        ref = self._adapter_params(self.ref_name)
        for key, live in self.params.items():
            target = ref[key]
            if ema is None:
                target.copy_(live.to(target.dtype))
            else:
                target.mul_(ema).add_(live.to(target.dtype), alpha=1.0 - ema)

    # ---- log-probs ---------------------------------------------------------------------------

    def autocast(self) -> contextlib.AbstractContextManager:
        """bfloat16 autocast on CUDA (the LoRA weights stay float32), nothing on CPU."""
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.use_bf16 else contextlib.nullcontext()

    def _batch(self, samples: Sequence[Sample], shared: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
        """Rows laid out as  shared prefix | pads | rest of the prompt | reply | pads,  so every reply
        starts at the same column P. Positions come from the mask, so pads are invisible."""
        pad = self.engine.tokenizer.pad_token_id
        width_p = max(len(s.prompt_ids) for s in samples)
        width_c = max(len(s.completion_ids) for s in samples)
        ids = torch.full((len(samples), width_p + width_c), pad, dtype=torch.long)
        attention = torch.zeros_like(ids)
        reply_mask = torch.zeros((len(samples), width_c), dtype=torch.float32)
        for row, s in enumerate(samples):
            p, c = len(s.prompt_ids), len(s.completion_ids)
            ids[row, :shared] = torch.tensor(s.prompt_ids[:shared])
            attention[row, :shared] = 1
            ids[row, width_p - (p - shared) : width_p] = torch.tensor(s.prompt_ids[shared:])
            ids[row, width_p : width_p + c] = torch.tensor(s.completion_ids)
            attention[row, width_p - (p - shared) : width_p + c] = 1
            reply_mask[row, :c] = 1
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), attention.to(self.device), positions.to(self.device), reply_mask.to(self.device), width_c

    def _action_logps(self, samples: Sequence[Sample], adapter_names: list[str] | None = None, with_entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Each sample's action log-probs [B, A] (A = the longest action_length), their mask, and
        the entropy at each (with gradient when the loss has an entropy bonus). One kind per call:
        `micro_batches` never mixes choice and text samples."""
        if samples[0].is_choice:
            return self._choice_logps(samples, adapter_names, with_entropy)
        return self._forward_logps(samples, adapter_names=adapter_names, with_entropy=with_entropy)

    def _choice_logps(self, samples: Sequence[Sample], adapter_names: list[str] | None, with_entropy: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """log softmax(L / T)[chosen] per sample, L_i = legal move i's log-prob as the whole reply.

        As the engine scores them (arena.llm.engines.hf.HFEngine.choose): each prompt runs once (after the
        shared prefix), its KV cache is repeated for each of its legal moves, and only the moves'
        own tokens run again, with gradients through all of it. Samples that ask the same question
        (same prompt, same legal moves, same adapter: another move drawn there, or the other sign of
        advantage) share one row, and autograd sums their gradients through it: in Kuhn poker a
        step's samples are a few rows per information set, so this halves the learner's work or
        better. The entropy is the exact one of the choice distribution, over the legal moves."""
        rows: dict[tuple, int] = {}  # question -> its row
        row_of: list[int] = []
        for index, sample in enumerate(samples):
            adapter = adapter_names[index] if adapter_names is not None else None
            row_of.append(rows.setdefault((decision_state(sample), adapter), len(rows)))
        firsts = sorted({row: index for index, row in reversed(list(enumerate(row_of)))}.items())
        questions = [samples[index] for _, index in firsts]
        names = [adapter_names[index] for _, index in firsts] if adapter_names is not None else None
        options = [q.option_ids or [] for q in questions]
        pad = self.engine.tokenizer.pad_token_id
        row_kwargs = lambda owner: {"adapter_names": [names[i] for i in owner]} if names is not None else {}  # noqa: E731
        shared = self._shared_prefix(questions, names)
        with self.autocast():
            if shared:  # the prefix once, the prompts' rest on its cache, the moves on theirs: three forwards
                ids, attention, positions, _, _ = self._batch([Sample(q.prompt_ids, [], 0.0) for q in questions], shared)
                prompt_logits, cache = self._run(ids, attention, positions, shared, names, keep=1, keep_cache=True)
                token_logps = option_token_logprobs(
                    self.model, prompt_logits[:, -1, :].float().log_softmax(-1), attention, cache, options, pad, row_kwargs,
                )
            else:  # prompts and moves in one forward
                token_logps = prompt_and_option_token_logprobs(self.model, [q.prompt_ids for q in questions], options, pad, self.device, row_kwargs)
        totals = token_logps.sum(1)  # each legal move's log-prob as the whole reply, at temperature 1 as scored
        starts = [0]
        for question in questions:
            starts.append(starts[-1] + len(question.option_ids or []))
        chosen, entropies = [], []
        for sample, row in zip(samples, row_of):
            logps = torch.log_softmax(totals[starts[row] : starts[row + 1]] / sample.choice_temperature, dim=0)
            chosen.append(logps[sample.chosen])
            entropies.append(-(logps.exp() * logps).sum())
        logps = torch.stack(chosen).unsqueeze(1)
        entropy = None
        if with_entropy:
            entropy = torch.stack(entropies).unsqueeze(1)
            if not self.settings.entropy_coef:
                entropy = entropy.detach()
        return logps, torch.ones_like(logps), entropy

    @property
    def rows_fitting(self) -> Callable[[int], int] | None:
        """Rows per micro-batch by their width, within algorithm.micro_batch_memory_gb (None: the
        micro-batch size alone bounds them); read from the settings, so a changed cap applies."""
        budget = self.settings.micro_batch_memory_gb
        if budget is None:
            return None
        memory = self.row_memory
        return lambda width: memory.rows_fitting(width, budget)

    @property
    def share_prefix(self) -> bool:
        """Whether rows that share a prompt prefix run it once, in a forward of its own, with its KV
        cache repeated for every row (`algorithm.share_prefix`; "auto": the device's rule,
        `shares_prefix_on`, which the engine's `choose` follows too)."""
        setting = self.settings.share_prefix
        return shares_prefix_on(self.device) if setting == "auto" else setting

    def _shared_prefix(self, samples: Sequence[Sample], adapter_names: list[str] | None) -> int:
        """Prompt tokens every sample starts with, when worth running once (0 otherwise)."""
        if not self.share_prefix:
            return 0
        same_adapter = adapter_names is None or len(set(adapter_names)) == 1
        return sharable_prefix([s.prompt_ids for s in samples]) if same_adapter else 0

    def _run(self, ids: torch.Tensor, attention: torch.Tensor, positions: torch.Tensor, shared: int,
             adapter_names: list[str] | None, keep: int, keep_cache: bool = False) -> tuple[torch.Tensor, Any]:
        """The model on `_batch`'s rows: the shared prefix once, with gradients, its KV cache
        repeated for every row; then each row's own tokens. The last `keep` positions' logits,
        and (keep_cache) the KV cache of the whole rows."""
        extra = {"adapter_names": adapter_names} if adapter_names is not None else {}
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": attention, "position_ids": positions}
        if shared:
            prefix_extra = {"adapter_names": adapter_names[:1]} if adapter_names is not None else {}
            cache = self.model(input_ids=ids[:1, :shared], use_cache=True, logits_to_keep=1, **prefix_extra).past_key_values
            cache.batch_repeat_interleave(len(ids))
            inputs = {"input_ids": ids[:, shared:], "attention_mask": attention, "position_ids": positions[:, shared:], "past_key_values": cache}
        out = self.model(**inputs, use_cache=bool(shared) or keep_cache, logits_to_keep=keep, **extra)
        return out.logits, out.past_key_values

    def _forward_logps(self, samples: Sequence[Sample], adapter_names: list[str] | None = None, with_entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """log pi(reply token | prefix) at the sampling temperature: [B, C], mask [B, C], entropy.

        The samples of a batch usually share a long system prompt (the game's rules). That prefix is
        run once, with gradients, and its KV cache repeated for every row: the same function of the
        same weights, so the log-probs and their gradients are unchanged (up to float rounding),
        while each row pays only for its own tokens."""
        from trl.trainer.utils import entropy_from_logits, selective_log_softmax

        shared = self._shared_prefix(samples, adapter_names)
        ids, attention, positions, mask, width_c = self._batch(samples, shared)
        with self.autocast():
            # only the last C+1 positions' logits are needed: position P-1+j predicts reply token j
            logits, _ = self._run(ids, attention, positions, shared, adapter_names, keep=width_c + 1)
        logits = logits[:, :-1, :].float() / self.temperature
        targets = ids[:, -width_c:]
        logps = selective_log_softmax(logits, targets)
        entropy = None
        if with_entropy:  # over the vocabulary at each reply position
            with torch.set_grad_enabled(torch.is_grad_enabled() and bool(self.settings.entropy_coef)):
                entropy = entropy_from_logits(logits)
        return logps, mask, entropy

    def scoring_batches(self, samples: Sequence[Sample]) -> list[list[Sample]]:
        """Chunks for forwards without gradients (behaviour and reference log-probs, the update's KL
        bound): such a forward keeps no activations for a backward, so a row costs a fraction of an
        update's (`scoring_row_bytes`) and a chunk holds up to `SCORING_MICRO_BATCHES` micro-batches'
        rows within the same memory cap. Fewer, fuller forwards: on a GPU each forward's cost is its
        kernel launches, whatever its rows."""
        size = self.settings.micro_batch_size * SCORING_MICRO_BATCHES
        budget = self.settings.micro_batch_memory_gb
        fitting = None if budget is None else (lambda width: max(1, int(budget * 1e9 // self.scoring_row_bytes(width))))
        return micro_batches(samples, size, fitting, by_prefix=self.share_prefix)

    def scoring_row_bytes(self, width: int) -> float:
        """What a forward without gradients keeps for one row of `width` tokens: a share of the
        update's estimate, and the logits of its reply (at most max_new_tokens, or the row)."""
        reply = min(width, self.max_new_tokens) + 1
        return NO_GRAD_ROW_SHARE * self.row_memory.bytes(width) + LOGIT_BYTES * reply * self.vocab_size

    @torch.no_grad()
    def prepare(self, samples: Sequence[Sample], need_ref: bool) -> dict[str, float]:
        """Store each sample's behaviour log-probs (and the reference's, when the KL term needs
        them) before the first step; returns the sampler/learner mismatch over the samples whose
        own log-probs were recomputed and carry the sampler's.

        Where the sampler was the learner itself (`Sample.sampled_by_learner`), its log-probs are
        the behaviour policy's up to float rounding and are taken as they are, except for a few such
        samples of each kind (choice or text), recomputed every step as a check (mismatch/*): up to
        `CHECK_ROWS`, at most a micro-batch's, from one prompt prefix (one forward). Every
        recompute runs in `scoring_batches`."""
        self.model.eval()
        reusable = [x for x in samples if self.settings.reuse_sampler_logps and x.sampled_by_learner and x.sampler_logps is not None]
        check_rows = min(CHECK_ROWS, self.settings.micro_batch_size)
        checked: set[int] = set()
        for kind in (True, False):
            first = next(iter(self.scoring_batches([x for x in reusable if x.is_choice is kind])), [])
            checked.update(id(x) for x in first[:check_rows])
        reused = {id(x) for x in reusable} - checked
        recomputed = [x for x in samples if id(x) not in reused]
        for sample in samples:
            if id(sample) in reused:
                sample.old_logps = torch.tensor(sample.sampler_logps, dtype=torch.float32)
                sample.is_weights = None  # the behaviour policy is the learner's: no correction
        for sample, logps in self._scored(recomputed):
            sample.old_logps = logps
        if need_ref:
            self._reference_logps(samples)
        else:
            for sample in samples:
                sample.ref_logps = None
        return sampler_mismatch(recomputed, self.settings)

    def _scored(self, samples: Sequence[Sample], adapter: str | None = None) -> Iterator[tuple[Sample, torch.Tensor]]:
        """Each sample with its action log-probs (on the CPU), from forwards without gradients in
        `scoring_batches`; under `adapter` where given, else the model as it is."""
        for chunk in self.scoring_batches(samples):
            names = [adapter] * len(chunk) if adapter is not None else None
            logps, _, _ = self._action_logps(chunk, adapter_names=names)
            for row, sample in enumerate(chunk):
                yield sample, logps[row, : sample.action_length].detach().cpu()

    def _reference_logps(self, samples: Sequence[Sample]) -> None:
        """Each sample's log-probs under the KL reference, in `scoring_batches`. The base model
        never changes, so its log-probs of an action are computed once per run and remembered
        (`base_logps`): in a game whose decisions repeat (Kuhn poker) the reference pass then
        costs nothing after the first steps. A reference adapter changes when it is refreshed, so
        it is run every time."""
        if self.settings.kl_reference != "base":
            for sample, logps in self._scored(samples, adapter=self.ref_name):
                sample.ref_logps = logps
            return
        keys = [_action_key(sample) for sample in samples]
        known = {key: self.base_logps.get(key) for key in keys}
        missing = {key: sample for key, sample in zip(keys, samples) if known[key] is None}
        if missing:
            with self.model.disable_adapter():  # the base model: same weights, adapter off
                key_of = {id(sample): key for key, sample in missing.items()}
                for sample, logps in self._scored(list(missing.values())):
                    known[key_of[id(sample)]] = logps
                    self.base_logps.put(key_of[id(sample)], logps)
        for key, sample in zip(keys, samples):
            sample.ref_logps = known[key]  # not read back from the memo: a long step may age its first entries out

    # ---- the update --------------------------------------------------------------------------

    def rows_of(self, samples: list[Sample]) -> list[Sample]:
        """The rows the update runs for `samples`: identical turns merged where algorithm.merge_duplicates says."""
        return merge_duplicates(samples) if self.settings.merge_duplicates else samples

    def update(self, samples: list[Sample], rng: random.Random) -> dict[str, float]:
        """`epochs` passes of clipped policy-gradient steps over `samples`; returns the mean stats."""
        s = self.settings
        # The reference pass only when the loss has a KL term: at kl_coef 0 it would cost a forward
        # of every turn for a logged number (train/kl is then absent).
        need_ref = s.kl_coef > 0 and (s.kl_reference == "base" or self.ref_name is not None)
        started = time.perf_counter()
        turns = len(samples)
        samples = self.rows_of(samples)
        mismatch = self.prepare(samples, need_ref)
        if need_ref and s.kl_target is not None:  # the drift is read only where a target uses it
            self.kl_coef = adapted_kl_coef(self.kl_coef, measured_kl(samples), s)  # this step's own update feels it
        self.model.set_adapter(self.name)
        if self.dropout:
            self.model.train()
        totals: dict[str, float] = {"loss": 0.0, "clip_fraction": 0.0, "approx_kl": 0.0, "kl": 0.0, "entropy": 0.0, "grad_norm": 0.0}
        if s.max_update_kl is not None:
            totals.update(NO_STEP.stats())  # zeros, summed over the steps
        steps = 0
        tokens_seen = 0
        units = minibatch_units(samples)
        try:
            for _epoch in range(s.epochs):
                for indices in minibatch_indices(units, s.minibatch_size, rng):
                    stats = self._step([samples[i] for i in indices], need_ref)
                    for key in totals:
                        totals[key] += stats[key]
                    tokens_seen += int(stats["tokens"])
                    steps += 1
        finally:
            self.model.eval()
        elapsed = time.perf_counter() - started
        out = {f"train/{k}": v / max(1, steps) for k, v in totals.items()}
        out["train/optimizer_steps"] = steps
        out["train/samples"] = len(samples)  # after merging duplicates; train/turns before
        out["train/turns"] = turns
        out["train/longest_row_tokens"] = max((row_tokens(x) for x in samples), default=0)  # what micro_batch_memory_gb weighs
        out["train/tokens_per_s"] = tokens_seen / elapsed if elapsed > 0 else 0.0
        out["train/seconds"] = elapsed
        if not need_ref:
            del out["train/kl"]  # no reference pass ran: no KL to report
        else:
            out["train/kl_coef"] = self.kl_coef
        out.update(mismatch)
        return out

    def _step(self, minibatch: list[Sample], need_ref: bool) -> dict[str, float]:
        s = self.settings
        mask_all = torch.zeros((len(minibatch), max(x.action_length for x in minibatch)))
        for row, x in enumerate(minibatch):
            mask_all[row, : x.action_length] = 1
        denominator = normaliser(mask_all, s.loss_norm, self.max_new_tokens, torch.tensor([x.weight for x in minibatch]))
        self.optimizer.zero_grad(set_to_none=True)
        agg = {"loss": 0.0, "clip_fraction": 0.0, "approx_kl": 0.0, "kl": 0.0, "entropy": 0.0, "tokens": 0.0, "weight": 0.0}
        for micro in micro_batches(minibatch, s.micro_batch_size, self.rows_fitting, by_prefix=self.share_prefix):
            new_logps, mask, entropy = self._action_logps(micro, with_entropy=True)
            old = _stack([x.old_logps for x in micro], mask)
            ref = _stack([x.ref_logps for x in micro], mask) if need_ref else None
            weights = None
            if any(x.is_weights is not None for x in micro):  # 1 where a sample has none
                weights = _stack([x.is_weights if x.is_weights is not None else torch.ones(x.action_length) for x in micro], mask)
            advantages = torch.tensor([x.advantage for x in micro], dtype=torch.float32, device=self.device)
            sample_weights = torch.tensor([x.weight for x in micro], dtype=torch.float32, device=self.device)
            loss, stats = policy_loss(
                new_logps, old, advantages, mask,
                epsilon=s.epsilon, epsilon_high=s.epsilon_high, norm=s.loss_norm, denominator=denominator,
                ref_logps=ref, kl_coef=self.kl_coef, is_weights=weights, entropy=entropy, entropy_coef=s.entropy_coef,
                sample_weights=sample_weights,
            )
            loss.backward()
            weight = stats.weight  # turns' tokens: a merged sample counts as the turns it stands for
            agg["loss"] += stats.loss
            agg["clip_fraction"] += stats.clip_fraction * weight
            agg["approx_kl"] += stats.approx_kl_old * weight
            agg["kl"] += stats.kl_ref * weight
            agg["entropy"] += stats.entropy * weight
            agg["tokens"] += stats.tokens
            agg["weight"] += weight
        grad_norm = torch.nn.utils.clip_grad_norm_(list(self.params.values()), s.max_grad_norm)
        bounded: dict[str, float] = {} if s.max_update_kl is None else NO_STEP.stats()
        if not math.isfinite(float(grad_norm)):
            self.optimizer.zero_grad(set_to_none=True)  # skip a step that would poison the adapter
        elif s.max_update_kl is None:
            self.optimizer.step()
        else:
            before = {name: p.detach().clone() for name, p in self.params.items()}
            self.optimizer.step()
            bounded = bound_step(self.params, before, lambda: self._kl_from_behaviour(minibatch), s.max_update_kl, s.max_update_halvings).stats()
        counted = agg["weight"] or 1.0  # the statistics are means over the turns' tokens
        return bounded | {
            "loss": agg["loss"],
            "clip_fraction": agg["clip_fraction"] / counted,
            "approx_kl": agg["approx_kl"] / counted,
            "kl": agg["kl"] / counted,
            "entropy": agg["entropy"] / counted,
            "grad_norm": float(grad_norm),
            "tokens": agg["tokens"],
        }

    def _kl_from_behaviour(self, samples: list[Sample]) -> float:
        """The current policy's KL from the behaviour one over `samples` (`behaviour_kl`): one
        forward of them, without gradients or dropout."""
        self.model.eval()
        ordered: list[Sample] = []
        current: list[torch.Tensor] = []
        try:
            with torch.no_grad():
                for micro in self.scoring_batches(samples):
                    logps, _, _ = self._action_logps(micro)
                    ordered.extend(micro)
                    current.extend(logps[row, : sample.action_length].float().cpu() for row, sample in enumerate(micro))
        finally:
            if self.dropout:
                self.model.train()
        return behaviour_kl(ordered, current) or 0.0


def decision_state(sample: Sample) -> bytes:
    """What the policy's choice depends on, the weights aside: the prompt (and, in choice mode, the
    legal moves). Samples with the same state are the same question (`_choice_logps` runs it
    once; `algorithm.state_baseline` centres their advantages)."""
    return ids_digest(sample.prompt_ids, sample.option_ids or [])


def _action_key(sample: Sample) -> bytes:
    """What an action's log-probs depend on, the weights aside."""
    return ids_digest(sample.prompt_ids, sample.completion_ids, sample.option_ids or [], sample.chosen, sample.choice_temperature)


def micro_batches(samples: Sequence[Sample], size: int, rows_fitting: Callable[[int], int] | None = None,
                  *, by_prefix: bool = True) -> list[list[Sample]]:
    """Chunks of at most `size` samples for one forward each: choice and text samples apart (their
    log-probs are computed differently), and, `by_prefix` (the learner shares prompt prefixes),
    never across a prompt prefix they do not share (the seats' system prompts differ in their first
    line): a chunk that mixed two seats would run both seats' rules in full in every row instead of
    once. Without prefix sharing every row runs its whole prompt anyway, and fewer chunks are fewer
    forwards. Only how the minibatch's loss is cut changes, not its value (up to float rounding).

    `rows_fitting(width)` bounds the rows of a chunk whose longest row (`row_tokens`) is `width`
    (trainer/micro_batch_memory.py: the update's memory grows with rows x width squared, and 16
    rows of one game's long prompts must not take the learner past the machine's memory). A row
    too wide for any company runs alone."""
    chunks: list[list[Sample]] = []
    for kind in (True, False):
        subset = [x for x in samples if x.is_choice is kind]
        for group in prefix_groups([x.prompt_ids for x in subset]) if by_prefix else [list(range(len(subset)))]:
            chunk: list[Sample] = []
            longest = 0  # the chunk's widest row so far
            for x in (subset[i] for i in group):
                width = row_tokens(x)
                limit = size if rows_fitting is None else min(size, rows_fitting(max(longest, width)))
                if chunk and len(chunk) >= limit:
                    chunks.append(chunk)
                    chunk, longest = [], 0
                chunk.append(x)
                longest = max(longest, width)
            if chunk:
                chunks.append(chunk)
    return chunks


def minibatch_units(samples: Sequence[Sample]) -> list[list[int]]:
    """The indices that must share an optimizer step: each `minibatch_group`'s rows together, in
    the order of their first row, and every row without a group alone."""
    units: dict[Hashable, list[int]] = {}
    for i, x in enumerate(samples):
        key = ("row", i) if x.minibatch_group is None else ("group", x.minibatch_group)
        units.setdefault(key, []).append(i)
    return list(units.values())


def minibatch_indices(units: list[list[int]], size: int, rng: random.Random) -> list[list[int]]:
    """One epoch's optimizer steps: `units` shuffled in place (each epoch reshuffles the last
    order), then packed into steps of at most `size` rows without splitting a unit; a unit larger
    than `size` takes a step alone. With every row its own unit this is the plain shuffled slicing
    into `size` rows (the same draws from `rng`, the same steps)."""
    rng.shuffle(units)
    steps: list[list[int]] = []
    current: list[int] = []
    for unit in units:
        if current and len(current) + len(unit) > size:
            steps.append(current)
            current = []
        current.extend(unit)
    if current:
        steps.append(current)
    return steps


def row_tokens(sample: Sample) -> int:
    """Positions one sample puts through the model: its prompt and reply, or, in choice mode, its
    prompt and every legal move (each scored on the prompt's cache)."""
    if sample.option_ids is not None:
        return len(sample.prompt_ids) + sum(len(option) + 1 for option in sample.option_ids)
    return len(sample.prompt_ids) + len(sample.completion_ids)


def merge_duplicates(samples: Sequence[Sample]) -> list[Sample]:
    """One sample per (prompt, action, sign of the advantage): weight = how many turns it stands
    for, advantage = their weighted mean.

    Exact: identical prompt and action ids have identical log-probs, ratios, KL and entropy, and
    the clipped surrogate is linear in A among advantages of one sign (min(r, clip(r)) * A for
    A > 0, max(r, clip(r)) * A for A < 0), so the weighted loss equals the loss of the turns it
    replaces at every ratio, in every epoch. Only the split into minibatches changes. In a small
    game (Kuhn poker: 12 information sets x 2 moves) a step's turns collapse to a few dozen
    samples, so more hands per step cost rollouts but little learner time. Keeps the first turn's
    sampler log-probs and meta."""
    merged: dict[tuple, Sample] = {}
    for x in samples:
        sign = (x.advantage > 0) - (x.advantage < 0)
        key = (_action_key(x), sign)
        first = merged.get(key)
        if first is None:
            merged[key] = dataclasses.replace(x, old_logps=None, ref_logps=None, is_weights=None)
            continue
        total = first.weight + x.weight
        first.advantage = (first.advantage * first.weight + x.advantage * x.weight) / total
        first.weight = total
    return list(merged.values())


def sampler_mismatch(samples: Sequence[Sample], s: AlgorithmSettings) -> dict[str, float]:
    """|logp_sampler - logp_learner_old| per token (mean, max) over the samples that carry the
    sampler's log-probs; sets their truncated IS weights when `s.sampler_correction` is "tis"."""
    diffs: list[torch.Tensor] = []
    weights: list[torch.Tensor] = []
    for sample in samples:
        sample.is_weights = None
        sampled = sample.sampler_logps
        if sampled is None or sample.old_logps is None or len(sampled) != sample.action_length:
            continue
        log_ratio = sample.old_logps - torch.tensor(sampled, dtype=torch.float32)
        diffs.append(log_ratio.abs())
        weight = torch.exp(log_ratio).clamp(max=s.tis_cap)
        weights.append(weight)
        if s.sampler_correction == "tis":
            sample.is_weights = weight
    if not diffs:
        return {}
    diff, weight = torch.cat(diffs), torch.cat(weights)
    return {
        "mismatch/logp_abs_mean": float(diff.mean()),
        "mismatch/logp_abs_max": float(diff.max()),
        "mismatch/tokens": int(diff.numel()),
        "mismatch/tis_weight_mean": float(weight.mean()),
        "mismatch/tis_truncated_fraction": float((weight >= s.tis_cap).float().mean()),
    }


def _stack(rows: Sequence[torch.Tensor | None], mask: torch.Tensor) -> torch.Tensor:
    """Per-sample 1-D tensors right-padded with zeros to the mask's shape."""
    out = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    for i, row in enumerate(rows):
        assert row is not None, "prepare() must run before the update"
        out[i, : row.shape[0]] = row.to(mask.device)
    return out


