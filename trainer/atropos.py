"""Matches as Atropos scored groups, for any trainer that reads Atropos's trajectory hub
(`atroposlib`'s `run-api`, POST /scored_data_list, trainers GET /batch).

A group is what GRPO compares: every sample of one (game, seed, seat), i.e. the same start and
the same role played several times. A sample is one turn of that seat: its exact prompt token ids
followed by its exact generated token ids, as the engine produced them (TurnRecord.meta
`prompt_ids` / `completion_ids`; nothing is re-tokenized). `masks` is Atropos's convention: -100
over the prompt (not trained), the token id itself over the completion. Each sample's score is its
episode's reward from our reward functions (trainer.rewards, the same terms `arena train` uses;
default: outcome + 0.5 x invalid), so every turn of an episode carries the episode's score, as
our own trainer credits them. Turns without token ids (API models, scripted bots) are left out:
their tokens were never seen, and re-encoding the text would not be what the model produced.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from arena.match import MatchRecord
from trainer.config import RewardSettings
from trainer.rewards import Episode, RewardModel

IGNORE = -100  # Atropos's mask value for tokens that are not trained
PUSH_CHUNK = 64  # groups per POST


def _token_ids(meta: Any) -> tuple[list[int], list[int]] | None:
    if not isinstance(meta, dict):
        return None
    prompt, completion = meta.get("prompt_ids"), meta.get("completion_ids")
    if not isinstance(prompt, list) or not isinstance(completion, list) or not prompt or not completion:
        return None
    if not all(isinstance(t, int) for t in prompt + completion):
        return None
    return prompt, completion


def scored_groups(records: Iterable[MatchRecord], rewards: RewardSettings | None = None) -> Iterator[dict[str, Any]]:
    """One Atropos ScoredData dict per (game, seed, seat) with at least one turn carrying token
    ids, in order of first appearance, plus `game_id`, `seed` and `seat` (the hub ignores them)."""
    model = RewardModel(rewards or RewardSettings())
    episodes: list[Episode] = []
    for record in records:
        if record.status != "finished" or record.outcome is None:
            continue
        for seat in range(record.num_players):
            if any(t.player == seat and _token_ids(t.meta) for t in record.turns):
                episodes.append(Episode(record, seat, group=f"{record.game_id}:{record.seed}:{seat}"))
    model.score(episodes)
    groups: dict[str, dict[str, Any]] = {}
    for episode in episodes:
        group = groups.get(episode.group)
        if group is None:
            group = groups[episode.group] = {
                "tokens": [], "masks": [], "scores": [],
                "game_id": episode.game_id, "seed": episode.record.seed, "seat": episode.seat,
            }
        for turn in episode.turns():
            ids = _token_ids(turn.meta)
            if ids is None:
                continue
            prompt, completion = ids
            group["tokens"].append(prompt + completion)
            group["masks"].append([IGNORE] * len(prompt) + completion)
            group["scores"].append(float(episode.reward))
    yield from groups.values()


class PushError(RuntimeError):
    """The trajectory hub refused or could not be reached."""


def shown_url(url: str) -> str:
    """The hub's URL without any user:password part, for messages."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))) if parts.hostname else url


def push_groups(url: str, groups: Sequence[dict[str, Any]], timeout: float = 30.0) -> int:
    """POST the groups to an Atropos hub (`run-api`) at `url`, in chunks; returns how many."""
    import httpx

    endpoint = url.rstrip("/") + "/scored_data_list"
    shown = shown_url(endpoint)
    try:
        with httpx.Client(timeout=timeout) as client:
            for start in range(0, len(groups), PUSH_CHUNK):
                response = client.post(endpoint, json=list(groups[start : start + PUSH_CHUNK]))
                if response.status_code != 200:
                    raise PushError(f"{shown} answered {response.status_code}: {response.text[:200]!r}")
    except httpx.HTTPError as exc:
        raise PushError(f"{shown}: {type(exc).__name__}") from None  # the exception text may repeat the URL
    return len(groups)

