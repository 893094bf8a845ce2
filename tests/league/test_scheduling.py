"""Schedulers: complete, fair, deterministic (resume hands out the same keys), and bounded."""

import random
from collections import Counter

import numpy as np
import pytest
from scipy.stats import norm

from league.ratings import OnlineRatings, bt_solve
from league.results import GameResult
from league.scheduling import GameSlot, _as_if_played, doubt_weighted_variance_drop, laplace_posterior, make_scheduler

POLICIES = ["a", "b", "c", "d"]


def by_seat_order(p):
    """The first seat wins, then the second, ... (any game size)."""
    return tuple(range(1, len(p.seats) + 1))


def drain(scheduler, play=by_seat_order, batch=3):
    finished, issued, out = [], 0, []
    while True:
        pairings = scheduler.next_pairings(finished, issued, batch)
        if not pairings:
            return out
        issued += len(pairings)
        out += pairings
        finished += [GameResult(p.key, p.game_id, p.seats, play(p)) for p in pairings]


def test_round_robin_is_complete_balanced_and_deterministic():
    games = [GameSlot("tictactoe"), GameSlot("liars_dice", num_players=3)]
    plan = drain(make_scheduler("round_robin", games, POLICIES, matches_per_pair=2, seed=1))
    assert len(plan) == 6 * 2 + 4 * 2 and len({p.key for p in plan}) == len(plan)
    assert set(Counter(frozenset(p.seats) for p in plan if p.game_id == "tictactoe").values()) == {2}
    assert all(len(set(p.seats)) == 3 for p in plan if p.game_id == "liars_dice")
    # every policy sits in every seat of the 3-player game equally often over the repeats
    seats = Counter((i, name) for p in plan if p.game_id == "liars_dice" for i, name in enumerate(p.seats))
    assert max(seats.values()) - min(seats.values()) <= 1
    again = drain(make_scheduler("round_robin", games, POLICIES, matches_per_pair=2, seed=1))
    assert again == plan  # a resumed league sees the same keys and seeds
    assert make_scheduler("round_robin", games, POLICIES, matches_per_pair=2, seed=1).total() == len(plan)
    assert drain(make_scheduler("round_robin", games, POLICIES, matches_per_pair=2, seed=2)) != plan


def test_round_robin_colours_are_fair_in_a_single_cycle_and_swap_on_repeats():
    names = [f"p{i}" for i in range(7)]
    once = drain(make_scheduler("round_robin", [GameSlot("chess")], names, matches_per_pair=1))
    first = Counter(p.seats[0] for p in once)
    assert max(first.values()) - min(first.values()) <= 1  # 3 whites each (6 games per player)
    twice = drain(make_scheduler("round_robin", [GameSlot("chess")], ["a", "b"], matches_per_pair=4))
    assert Counter(p.seats for p in twice) == {("a", "b"): 2, ("b", "a"): 2}
    # all pairs meet once before anyone meets twice
    plan = drain(make_scheduler("round_robin", [GameSlot("chess")], names, matches_per_pair=2))
    assert len({frozenset(p.seats) for p in plan[:21]}) == 21


def test_round_robin_weights_and_budget():
    games = [GameSlot("g1", weight=1), GameSlot("g2", weight=2)]
    plan = drain(make_scheduler("round_robin", games, POLICIES, matches_per_pair=1))
    assert Counter(p.game_id for p in plan) == {"g1": 6, "g2": 12}
    capped = make_scheduler("round_robin", [GameSlot("g")], POLICIES, budget=10)
    assert capped.total() == 10 and len(drain(capped)) == 10


def test_swiss_waits_for_each_round_and_avoids_rematches():
    scheduler = make_scheduler("swiss", [GameSlot("tictactoe")], POLICIES, rounds=3, seed=0)
    first = scheduler.next_pairings([], 0, 10)
    assert len(first) == 2 and scheduler.next_pairings([], 2, 10) == []  # round 1 still in flight
    finished = [GameResult(p.key, p.game_id, p.seats, (1, 2)) for p in first]
    second = scheduler.next_pairings(finished, 2, 10)
    assert not {frozenset(p.seats) for p in second} & {frozenset(p.seats) for p in first}
    winners = {p.seats[0] for p in first}
    assert any(set(p.seats) == winners for p in second)  # leaders meet leaders
    plan = drain(make_scheduler("swiss", [GameSlot("tictactoe")], POLICIES, rounds=3, seed=0), batch=10)
    assert len(plan) == 6 and len({frozenset(p.seats) for p in plan}) == 6  # 3 rounds, no rematch


def test_swiss_budget_byes_and_multiplayer_groups():
    names = [f"p{i}" for i in range(7)]
    plan = drain(make_scheduler("swiss", [GameSlot("g")], names, budget=12, seed=4), batch=100)
    assert len(plan) == 12  # 3 per round; one bye per round
    sat_out = Counter(n for r in range(4) for n in set(names) - {x for p in plan[3 * r : 3 * r + 3] for x in p.seats})
    assert sum(sat_out.values()) == 4 and max(sat_out.values()) == 1
    groups = drain(make_scheduler("swiss", [GameSlot("dice", num_players=3)], names, rounds=2), batch=100)
    assert len(groups) == 4 and all(len(set(p.seats)) == 3 for p in groups)


def test_adaptive_is_deterministic_budgeted_and_focuses_on_close_pairs():
    strength = {"a": 4, "b": 3, "c": 2, "d": 1}

    def play(p):
        x, y = p.seats
        return (1, 2) if strength[x] > strength[y] else (2, 1)

    plan = drain(make_scheduler("adaptive", [GameSlot("tictactoe")], POLICIES, budget=40, seed=3), play)
    assert len(plan) == 40 and len({p.key for p in plan}) == 40
    assert plan == drain(make_scheduler("adaptive", [GameSlot("tictactoe")], POLICIES, budget=40, seed=3), play)
    late = Counter(frozenset(p.seats) for p in plan[16:])
    assert late[frozenset(("a", "d"))] <= 2 < late[frozenset(("a", "b"))]  # neighbours, not a vs d


def simulate(kind, strength, games, seed, batch, slot=GameSlot("g")):
    """A league of simulated Bradley-Terry players (log-strengths `strength`), `batch` matches in
    flight between calls; ranks drawn from the model (Plackett-Luce order for N-player games)."""
    rng = np.random.default_rng(seed)
    scheduler = make_scheduler(kind, [slot], list(strength), budget=games, seed=seed)
    finished = []
    while len(finished) < games:
        for p in scheduler.next_pairings(finished, len(finished), batch):
            order = []
            left = list(p.seats)
            while left:  # Plackett-Luce: the next place goes to i with chance proportional to e^theta_i
                weights = np.exp([strength[name] for name in left])
                order.append(left.pop(rng.choice(len(left), p=weights / weights.sum())))
            finished.append(GameResult(p.key, p.game_id, p.seats, tuple(order.index(name) + 1 for name in p.seats)))
    return finished


def misordered_pairs(finished, strength):
    ratings = OnlineRatings(systems=("bt",))
    for result in finished:
        ratings.fold(result)
    names = list(strength)
    estimate = bt_solve(*ratings.overall.bt_matrices(names))[0]
    return sum((estimate[i] - estimate[j]) * (strength[a] - strength[b]) < 0 for i, a in enumerate(names) for j, b in enumerate(names) if i < j)


def test_adaptive_recovers_a_known_order_with_fewer_mistakes_than_round_robin():
    """12 players 0.4 apart in log-strength, 132 games (two round-robin cycles), 20 seeds: the
    leaderboard misorders about 30% fewer pairs with adaptive pairings (bench/ranking.py measures
    the same thing at full size)."""
    strength = {f"p{i:02d}": 0.4 * i for i in range(12)}
    mistakes = {
        kind: np.mean([misordered_pairs(simulate(kind, strength, 132, seed, batch=6), strength) for seed in range(20)])
        for kind in ("round_robin", "adaptive")
    }
    assert mistakes["adaptive"] < 0.85 * mistakes["round_robin"], mistakes


def test_adaptive_first_seats_follow_each_policys_own_games():
    """Adaptive gives close policies many more games than clear ones; first seats must still be
    an even share of each policy's own games (not equal raw counts), in 2- and 3-player games."""
    strength = {f"p{i:02d}": 0.6 * i for i in range(10)}
    for slot, batch in ((GameSlot("chess"), 5), (GameSlot("dice", num_players=3), 3)):
        finished = simulate("adaptive", strength, 150, seed=1, batch=batch, slot=slot)
        games = Counter(name for r in finished for name in r.players)
        first = Counter(r.players[0] for r in finished)
        assert max(games.values()) >= 1.5 * min(games.values())  # uneven on purpose
        assert all(abs(first[name] - games[name] / slot.num_players) <= 1 for name in strength), (first, games)
        assert all(len(set(r.players)) == slot.num_players for r in finished)


def test_adaptive_batch_counts_its_own_picks_as_played():
    """Two equally doubtful pairs, a-b and c-d (never met; a and b beat c and d every time): a
    batch of two takes both, because the first pick already shrinks its own pair's uncertainty.
    Without that update the two would tie and half the seeds would repeat one pair."""
    log = [GameResult(f"{w}{l}{k}", "g", (w, l), (1, 2)) for k in range(4) for w in "ab" for l in "cd"]
    for seed in range(10):
        batch = make_scheduler("adaptive", [GameSlot("g")], POLICIES, budget=100, seed=seed).next_pairings(log, len(log), 2)
        assert {frozenset(p.seats) for p in batch} == {frozenset("ab"), frozenset("cd")}


def test_pair_scores_match_a_direct_computation():
    """The vectorised Sherman-Morrison score (small chunks, to cross chunk edges) against an
    explicit posterior inverse per candidate game."""
    rng = np.random.default_rng(5)
    n = 6
    n_games, wins = np.zeros((1, n, n)), np.zeros((1, n, n))
    for _ in range(25):
        a, b = rng.choice(n, 2, replace=False)
        winner, loser = (a, b) if rng.random() < 1 / (1 + np.exp(0.5 * (b - a))) else (b, a)
        wins[0, winner, loser] += 1
        n_games[0, a, b] += 1
        n_games[0, b, a] += 1
    theta, p, cov = laplace_posterior(n_games, wins)
    i, j = np.triu_indices(n, 1)

    def pair_variances(c):
        return c[i, i] + c[j, j] - 2 * c[i, j]

    var = pair_variances(cov)
    weight = norm.cdf(-np.abs(theta[i] - theta[j]) / np.sqrt(var)) / var
    expected = []
    for a, b in zip(i, j):
        e = np.zeros(n)
        e[a], e[b] = 1, -1
        after = np.linalg.inv(np.linalg.inv(cov) + p[a, b] * (1 - p[a, b]) * np.outer(e, e))
        expected.append(weight @ (var - pair_variances(after)))
        played = cov.copy()
        _as_if_played(played, p, a, b, 1.0)
        np.testing.assert_allclose(played, after, atol=1e-10)
    np.testing.assert_allclose(doubt_weighted_variance_drop(theta, p, cov, chunk=4), expected, rtol=1e-8, atol=1e-6)


def test_adaptive_same_answer_whatever_the_call_pattern():
    """The scheduler caches its folds; asking with a different history must not reuse them."""
    games = [GameSlot("g1"), GameSlot("g2", weight=3), GameSlot("dice", num_players=3)]
    rng = random.Random(0)
    log = [GameResult(str(k), "g1", tuple(rng.sample(POLICIES, 2)), (1, 2)) for k in range(30)]
    warm = make_scheduler("adaptive", games, POLICIES, budget=100)
    warm.next_pairings(log[:10], 10, 4)
    warm.next_pairings(log[:5] + log[20:], 25, 4)
    cold = make_scheduler("adaptive", games, POLICIES, budget=100)
    assert warm.next_pairings(log, 30, 8) == cold.next_pairings(log, 30, 8)
    plan = cold.next_pairings(log, 30, 40)
    assert Counter(p.game_id for p in plan) == {"g1": 8, "g2": 24, "dice": 8}
    assert all(len(set(p.seats)) == 3 for p in plan if p.game_id == "dice")


def test_bad_requests_fail_clearly():
    with pytest.raises(ValueError, match="unknown scheduler"):
        make_scheduler("random", [GameSlot("g")], POLICIES)
    with pytest.raises(ValueError, match="needs a budget"):
        make_scheduler("adaptive", [GameSlot("g")], POLICIES)
    with pytest.raises(ValueError, match="two different policies"):
        make_scheduler("round_robin", [GameSlot("g")], ["a"])
    with pytest.raises(ValueError, match="must be unique"):
        make_scheduler("round_robin", [GameSlot("g")], ["a", "a"])
    with pytest.raises(ValueError, match="needs 5 players but the league has 4"):
        make_scheduler("swiss", [GameSlot("poker", num_players=5)], POLICIES)
    with pytest.raises(ValueError, match="budget must be at least 1"):
        make_scheduler("adaptive", [GameSlot("g")], POLICIES, budget=0)


def test_swiss_hands_out_whole_rounds_even_with_a_small_limit():
    """With fewer slots than matches per round the league must still reach its next rounds."""
    from league.results import GameResult
    from league.scheduling import GameSlot, make_scheduler

    names = [f"p{i}" for i in range(8)]
    scheduler = make_scheduler("swiss", [GameSlot("tictactoe")], names, rounds=3, seed=0)
    finished, issued = [], 0
    for _ in range(3):
        round_pairings = scheduler.next_pairings(finished, issued, 2)
        assert len(round_pairings) == 4
        issued += len(round_pairings)
        finished += [GameResult(p.key, p.game_id, p.seats, (1, 2)) for p in round_pairings]
    assert scheduler.next_pairings(finished, issued, 2) == [] and issued == scheduler.total()
