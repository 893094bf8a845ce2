"""How many times one move asks the model, and which answer it plays (spec parameter `sampler=`).

- `single`     one answer (the default).
- `vote:N`     N answers drawn independently (the move's seed, then seeds derived from it,
               arena.seeding.sample_seed); the move named most often among the answers that name a
               legal move is played, a tie going to the move named first. Where no answer names a
               legal move, the most frequent other proposal (text the game may still accept, such
               as SAN in chess) wins the same way; where none proposes anything, the first answer
               is played and the game judges it. Game Arena's MajorityVoteSampler, with ties broken
               by first occurrence instead of at random, so a replay repeats the move.
- `rethink:N`  up to N more rounds after an answer the move would be refused for (no move in the
               asked-for format, or a move the game refuses, asked without playing it:
               MoveRequest.check_move); each round shows the model its own reply and the feedback,
               as Game Arena's rethink sampler does with the environment's feedback. The rounds are
               inside one attempt: the game sees only the last answer, so they are not invalid
               attempts, and the game's own retries still follow an answer it refuses.

Every answer of a vote or rethink is recorded in the turn's meta (`samples`, and `votes` or
`rethinks`); the move's tokens and cost add up every call (llm_policy.py). A sample that fails (a
provider outage after its retries) is left out of the vote (`failed_samples`), and the move fails
only when all do; a failed rethink round ends the rethinking (`rethink_error`) and the answer in
hand goes to the game.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from arena.llm.parsing import ParsedMove
from arena.llm.prompting import Message
from arena.llm.retry import RetryStats
from arena.seeding import sample_seed

if TYPE_CHECKING:
    from arena.llm.llm_policy import Completion

SAMPLERS = ("single", "vote:N", "rethink:N")
MAX_VOTES = 16
MAX_RETHINKS = 8
SAMPLE_CHARS = 2000  # each recorded answer of a vote or rethink (the played one is also `raw`, capped at 8000)


@dataclass
class Draw:
    """One answer of the model to this move, and the move read from it."""

    completion: "Completion"  # its reasoning already set apart
    parsed: ParsedMove
    calls: list[RetryStats]  # one per call to the provider (two where the length retry asked again)
    length_retry: dict[str, Any] | None = None  # the length retry's record, when this answer needed one
    parser_meta: dict[str, Any] = field(default_factory=dict)  # e.g. the extractor's answer
    feedback: str | None = None  # rethink: why this answer was sent back


DrawFn = Callable[[int, list[Message]], Awaitable[Draw]]  # (seed, follow-up messages) -> Draw
Verdict = Callable[[Draw], "str | None"]  # why the move would refuse the answer; None: it would not
FollowUp = Callable[[Draw, str], list[Message]]  # the messages that send an answer back with feedback


@dataclass
class Sampled:
    chosen: Draw  # the answer played
    draws: list[Draw]  # every answer, in the order asked
    meta: dict[str, Any]  # votes / rethinks


@dataclass(frozen=True)
class Sampler:
    kind: str = "single"  # single | vote | rethink
    n: int = 1  # vote: answers; rethink: most extra rounds

    @property
    def name(self) -> str:
        return "single" if self.kind == "single" else f"{self.kind}:{self.n}"

    @classmethod
    def parse(cls, text: str) -> "Sampler":
        """`single`, `vote:N` (2..MAX_VOTES) or `rethink:N` (1..MAX_RETHINKS); ValueError names the accepted forms."""
        kind, _, count = text.strip().lower().partition(":")
        limits = {"vote": (2, MAX_VOTES), "rethink": (1, MAX_RETHINKS)}
        if kind == "single" and not count:
            return cls()
        if kind in limits and count.isdigit() and limits[kind][0] <= int(count) <= limits[kind][1]:
            return cls(kind, int(count))
        raise ValueError(
            f"sampler must be single, vote:N (N {limits['vote'][0]}-{limits['vote'][1]}) "
            f"or rethink:N (N {limits['rethink'][0]}-{limits['rethink'][1]}), not {text!r}"
        )

    async def run(self, draw: DrawFn, seed: int, *, verdict: Verdict, follow_up: FollowUp) -> Sampled:
        if self.kind == "vote":
            return await self._vote(draw, seed)
        if self.kind == "rethink":
            return await self._rethink(draw, seed, verdict, follow_up)
        only = await draw(seed, [])
        return Sampled(only, [only], {})

    async def _vote(self, draw: DrawFn, seed: int) -> Sampled:
        results = await asyncio.gather(*(draw(sample_seed(seed, i), []) for i in range(self.n)), return_exceptions=True)
        draws = [r for r in results if isinstance(r, Draw)]
        failed = [r for r in results if not isinstance(r, Draw)]
        if not draws or any(not isinstance(f, Exception) for f in failed):
            raise failed[0]  # every sample failed (a provider outage): the move fails as a single draw would
        meta: dict[str, Any] = {"failed_samples": len(failed)} if failed else {}
        legal = [d.parsed.action for d in draws if d.parsed.matched]
        pool = legal or [d.parsed.action for d in draws if d.parsed.rejection is None and d.parsed.action.strip()]
        if not pool:
            return Sampled(draws[0], draws, {"votes": {}, **meta})
        votes = Counter(pool)  # a dict: keys in order of first occurrence
        top = max(votes.values())
        winner = next(move for move, n in votes.items() if n == top)
        chosen = next(d for d in draws if d.parsed.action == winner and (d.parsed.matched or not legal))
        return Sampled(chosen, draws, {"votes": dict(votes), **meta})

    async def _rethink(self, draw: DrawFn, seed: int, verdict: Verdict, follow_up: FollowUp) -> Sampled:
        follow: list[Message] = []
        current = await draw(seed, follow)
        draws, meta = [current], {}
        for round_ in range(1, self.n + 1):
            feedback = verdict(current)
            if feedback is None:
                break
            current.feedback = feedback
            follow = follow + follow_up(current, feedback)
            try:
                current = await draw(sample_seed(seed, round_), follow)
            except Exception as exc:  # a failed extra round: the answer in hand goes to the game
                meta["rethink_error"] = str(exc)[:300]
                break
            draws.append(current)
        return Sampled(current, draws, {"rethinks": len(draws) - 1, **meta})


def draw_record(draw: Draw, raw: str) -> dict[str, Any]:
    """One answer of a vote or rethink as the turn's meta keeps it (texts capped)."""
    completion = draw.completion
    record: dict[str, Any] = {"raw": raw[:SAMPLE_CHARS], "action": draw.parsed.action, "parse": draw.parsed.method}
    if completion.reasoning:
        record["reasoning"] = completion.reasoning[:SAMPLE_CHARS]
    for key in ("finish_reason", "completion_tokens", "reasoning_tokens"):
        value = getattr(completion, key)
        if value is not None:
            record[key] = value
    if draw.feedback:
        record["feedback"] = draw.feedback[:SAMPLE_CHARS]
    if draw.length_retry:
        record["length_retry"] = draw.length_retry
    if draw.parser_meta:
        record.update(draw.parser_meta)
    return record
