"""Our Bradley-Terry against LMArena's own rating code, `arena-rank` (PyPI), fitted to our
`arena export --kind battles` rows. arena-rank pins numpy==2.3.3 and jax==0.8.1, which the
project venv cannot take (it holds a newer numpy), so the test builds a separate venv once under
.cache/venvs/ (git-ignored; about 1 minute and 300 MB from PyPI) and runs arena-rank there.

Same scale: both print 1000 + 400 log10(p). Anchors differ by design: arena-rank fixes the mean
log-strength at 0, ours has a weak prior towards 0; so ratings are compared after centring each
fit on its mean. Tolerances, with the largest gaps measured on these logs: ratings within 1 Elo
point (0.41); our sandwich 95% half-widths within 5% of arena-rank's sandwich (2.3%: our prior's
curvature and anchor) and our bootstrap's within 12% (7.5%: a resampling estimate of the same
spread).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from league.battles import battle_rows
from league.ratings import leaderboard
from tests.league.test_ratings import simulate

ROOT = Path(__file__).resolve().parents[2]
ARENA_RANK = "arena-rank==0.1.1"
VENV = ROOT / ".cache" / "venvs" / "arena-rank-0.1.1"


def _arena_rank_python() -> Path:
    python = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, timeout=120)
        subprocess.run([str(python), "-m", "pip", "install", "-q", ARENA_RANK], check=True, timeout=900)
        (VENV / ".installed").write_text(ARENA_RANK + "\n")
    return python


def _write(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _centred(values: dict[str, float]) -> dict[str, float]:
    mean = float(np.mean(list(values.values())))
    return {k: v - mean for k, v in values.items()}


@pytest.mark.slow
def test_ratings_and_intervals_match_lmarena_arena_rank(tmp_path):
    # plain: two-player matches of one game, every battle counts once on both sides
    plain = simulate({"a": 3.0, "b": 2.0, "c": 1.5, "d": 1.0, "e": 0.5}, 2000, seed=8)
    # weighted: three-player matches in two games of unequal size, pooled with equal game weight;
    # each battle row carries its 1/(n-1) weight and the test multiplies in the game's weight
    big = simulate({"a": 3.0, "b": 2.0, "c": 1.5, "d": 1.0}, 900, seed=9, players=3)
    small = simulate({"a": 1.0, "b": 2.0, "c": 1.0, "d": 3.0}, 300, seed=10, game="other", players=3)
    game_weight = {"g": 1200 / (2 * 900), "other": 1200 / (2 * 300)}
    _write(tmp_path / "plain.jsonl", battle_rows(plain))
    _write(tmp_path / "weighted.jsonl", ({**row, "weight": row["weight"] * game_weight[row["game_id"]]} for row in battle_rows(big + small)))
    run = subprocess.run([str(_arena_rank_python()), str(ROOT / "tests" / "league" / "arena_rank_fit.py"),
                          str(tmp_path / "plain.jsonl"), str(tmp_path / "weighted.jsonl")], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    theirs = json.loads(run.stdout)

    fits = {"plain": plain, "weighted": big + small}
    for case, log in fits.items():
        reference = theirs[case]
        names = reference["competitors"]
        sandwich = {r.policy: r for r in leaderboard(log, "bt", ci="sandwich")}
        assert sorted(sandwich) == sorted(names)
        ours_c = _centred({n: sandwich[n].rating for n in names})
        theirs_c = _centred(dict(zip(names, reference["ratings"])))
        for name in names:
            assert abs(ours_c[name] - theirs_c[name]) < 1.0, (case, name, ours_c[name], theirs_c[name])

    # intervals: two-player matches, where each battle is its own match (no clustering to differ)
    reference = theirs["plain"]
    names = reference["competitors"]
    their_half = {n: (hi - lo) / 2 for n, lo, hi in zip(names, reference["rating_lower"], reference["rating_upper"])}
    sandwich = {r.policy: r for r in leaderboard(plain, "bt", ci="sandwich")}
    bootstrap = {r.policy: r for r in leaderboard(plain, "bt", ci="bootstrap", bootstrap=400, seed=0)}
    for name in names:
        ours = (sandwich[name].hi - sandwich[name].lo) / 2
        assert abs(ours / their_half[name] - 1) < 0.05, (name, ours, their_half[name])
        resampled = (bootstrap[name].hi - bootstrap[name].lo) / 2
        assert abs(resampled / their_half[name] - 1) < 0.12, (name, resampled, their_half[name])
