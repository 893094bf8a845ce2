"""The harness around a model, as three spec parameters of every LLM kind (openai, litellm, local,
hf): how many times a move asks the model (`sampler=`, samplers.py), how the move is read from its
answer (`parser=`, parsers.py) and what the prompt shows (`prompt=`, prompt_variants.py).

Why spec parameters: what a score means depends on the harness as much as on the model, so the
harness is part of the policy's identity. The spec string holds it, and a league keys policies by
their spec (or `name=`), so two harnesses of one model are two rows; the defaults add nothing to
a spec, so `local` stays `local` and stored leagues keep their rows. Every LLM turn records the
harness it was played with (turn meta `harness`: sampler, parser, prompt, and the reasoning budget
where the spec sets one), and the web's policy page shows it, read from the spec (`describe_spec`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from arena.llm.parsers import LEGACY_PARSE, LLM_KINDS, ParserChoice
from arena.llm.prompt_variants import PromptVariant
from arena.llm.samplers import Sampler
from arena.policy import PolicySpec

HARNESS_PARAMS = {"sampler", "parser", "prompt", "parse"}  # parse=: the older name of parser=strict|fuzzy
REASONING_PARAMS = ("reasoning_effort", "thinking_budget")


@dataclass(frozen=True)
class Harness:
    sampler: Sampler = field(default_factory=Sampler)
    parser: ParserChoice = field(default_factory=ParserChoice)
    prompt: PromptVariant = field(default_factory=PromptVariant)

    def describe(self) -> dict[str, str]:
        """The turn record's `harness` (before any reasoning budget is added)."""
        return {"sampler": self.sampler.name, "parser": self.parser.name, "prompt": self.prompt.name}


def harness_from_params(params: dict[str, str], bad: Callable[[str], Exception]) -> Harness:
    """The harness a spec's parameters name; `bad(message)` is the spec's one-line error."""
    if "parse" in params and "parser" in params:
        raise bad("give parser= or its older name parse=, not both")
    try:
        sampler = Sampler.parse(params.get("sampler", "single"))
        if "parse" in params:
            legacy = params["parse"].strip().lower()
            if legacy not in LEGACY_PARSE:
                raise ValueError(f"parse must be one of {', '.join(LEGACY_PARSE)} (or use parser=), not {params['parse']!r}")
            parser = ParserChoice(LEGACY_PARSE[legacy])
        else:
            parser = ParserChoice.parse(params.get("parser", "strict"))
        prompt = PromptVariant.parse(params.get("prompt", "default"))
    except ValueError as exc:
        raise bad(str(exc)) from None
    return Harness(sampler, parser, prompt)


def describe_spec(text: str) -> dict[str, Any] | None:
    """The harness a stored spec names, defaults filled in, for pages that show it; None for a
    policy that is not an LLM (or a spec that no longer parses). Values are shown as written where
    they do not parse, never raised: a page must render any stored spec."""
    try:
        spec = PolicySpec.parse(text)
    except ValueError:
        return None
    if spec.kind not in LLM_KINDS:
        return None
    params = spec.params
    described: dict[str, Any] = {}
    try:
        described.update(harness_from_params(params, ValueError).describe())
    except ValueError:
        described.update({key: params.get(key, "") for key in ("sampler", "parser", "prompt")})
    described.update({key: params[key] for key in REASONING_PARAMS if key in params})
    return described
