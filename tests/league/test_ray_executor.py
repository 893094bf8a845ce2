"""The Ray executor against the in-process one, on one local Ray instance (2 CPUs) shared by the
module: the same league gives the same matches, results and ratings on SQLite and PostgreSQL; a
worker killed mid-match costs nothing (the match is played again, stored once); Ctrl-C and
resume work as in one process; bad flags are one line with exit code 2."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import ray

from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.ratings import leaderboard
from league.ray_executor import RayExecutor
from league.runner import InProcessExecutor, run_league
from league.store import MatchRow, Store, TurnRow
from tests.league.conftest import scheduled_keys

TASK_TITLE = b"ray::_play_task"  # Ray sets a worker's process title to the task it runs


def _config(name: str, **overrides) -> LeagueConfig:
    base = dict(
        name=name, seed=5, matches_per_pair=2, concurrency=4,
        games=[GameEntry(id="tictactoe"), GameEntry(id="nim"), GameEntry(id="kuhn_poker")],
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random", spec="random"), PolicyEntry(name="random-b", spec="random,seed=b")],
    )
    base.update(overrides)
    return LeagueConfig(**base)


def _matches(store: Store, league_id: int) -> dict[str, tuple]:
    """key -> (status, seats, seed, outcome, every turn's player/action/validity/reply)."""
    from sqlalchemy import select

    out: dict[str, tuple] = {}
    with store.session() as s:
        for row in s.scalars(select(MatchRow).where(MatchRow.league_id == league_id)):
            turns = s.execute(select(TurnRow.index, TurnRow.player, TurnRow.action, TurnRow.valid, TurnRow.raw)
                              .where(TurnRow.match_id == row.id).order_by(TurnRow.index)).all()
            assert [t[0] for t in turns] == list(range(len(turns))), f"{row.key}: turns missing or twice"
            assert row.key not in out, f"{row.key} stored twice"
            out[row.key] = (row.status, tuple(row.seats), row.seed, row.outcome, [tuple(t[1:]) for t in turns])
    return out


def _ratings(store: Store, league_id: int) -> dict[str, list]:
    """Every system's standings from the log in a fixed order (TrueSkill and Elo fold matches in
    log order, which is finish order and so differs between executors), and Bradley-Terry's
    point estimates from the log as stored (BT does not depend on order)."""
    results = store.results(league_id)
    by_key = sorted(results, key=lambda r: _key_of(store, r.match_id))
    out = {by: [(r.policy, round(r.rating, 9), r.games, r.wins, r.draws, r.losses, r.rank) for r in leaderboard(by_key, by=by)]
           for by in ("trueskill", "elo", "bt")}
    out["bt-as-stored"] = [(r.policy, round(r.rating, 9)) for r in leaderboard(results, by="bt", bootstrap=0)]
    return out


def _unfinished_reasons(store: Store) -> dict[str, str]:
    """key -> why, for every match not finished: what a failed resume shows."""
    from sqlalchemy import select

    with store.session() as s:
        return {row.key: row.reason for row in s.scalars(select(MatchRow).where(MatchRow.status != "finished"))}


def _key_of(store: Store, match_id: str) -> str:
    with store.session() as s:
        return s.get(MatchRow, int(match_id)).key


def test_ray_league_equals_the_in_process_league(store_url, ray_local):
    """Same pairings, same seeds, same moves, same results, same ratings; the head wrote it all."""
    store = Store(store_url)
    try:
        local = asyncio.run(run_league(_config("in-process"), store, executor=InProcessExecutor(_config("in-process"))))
        remote = asyncio.run(run_league(_config("on-ray"), store, executor=RayExecutor(_config("on-ray"))))
        keys = scheduled_keys(_config("x"))
        assert local.finished == remote.finished == remote.played_now == remote.total == len(keys) == 18
        assert remote.abandoned == remote.aborted == 0
        in_process, on_ray = _matches(store, local.league_id), _matches(store, remote.league_id)
        assert set(on_ray) == keys and all(m[0] == "finished" for m in on_ray.values())
        assert on_ray == in_process  # every move of every match, not just the outcomes
        assert _ratings(store, remote.league_id) == _ratings(store, local.league_id)
        stored_bt = {s.policy: round(s.rating, 9) for s in store.snapshots(remote.league_id, "", "bt") if s.after_matches == 18}
        assert stored_bt == dict(_ratings(store, remote.league_id)["bt-as-stored"])  # the head re-rated at the end
        again = asyncio.run(run_league(_config("on-ray"), store, executor=RayExecutor(_config("on-ray"))))
        assert again.played_now == 0 and store.count(remote.league_id) == 18  # a finished league replays nothing
    finally:
        store.close()


def _descendants_running_matches() -> list[int]:
    """PIDs of this test's Ray workers (descendants of this process) now running a match task."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if not f.read().startswith(TASK_TITLE):
                    continue
        except OSError:
            continue
        pid = int(entry)
        while pid > 1:  # walk up: only kill workers of our own Ray instance
            try:
                with open(f"/proc/{pid}/stat") as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
            if pid == me:
                found.append(int(entry))
                break
    return found


@pytest.mark.slow
def test_a_worker_killed_mid_match_costs_nothing(tmp_path, ray_local):
    """SIGKILL the worker process running a match task, twice; the league still ends with exactly
    the scheduled matches, each once, with the results the in-process executor gets."""
    config = _config(
        "kill", matches_per_pair=2, concurrency=2,
        games=[GameEntry(id="connect_four"), GameEntry(id="chess")],  # ~0.2 s per bot match: a window to hit
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="bot-b", spec="bot,seed=b"), PolicyEntry(name="random", spec="random")],
    )
    store = Store(f"sqlite:///{tmp_path / 'kill.db'}")
    killed: list[int] = []
    started = threading.Event()
    done = threading.Event()

    def killer() -> None:
        started.wait(60)
        while len(killed) < 2 and not done.is_set():
            victims = [pid for pid in _descendants_running_matches() if pid not in killed]
            if victims:
                os.kill(victims[0], signal.SIGKILL)
                killed.append(victims[0])
                time.sleep(0.3)  # let the retry start before the next kill
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        summary = asyncio.run(run_league(config, store, executor=RayExecutor(config), on_finish=lambda d: started.set()))
    finally:
        done.set()
        thread.join(5)
    try:
        assert len(killed) >= 1, "no worker was caught running a match"
        keys = scheduled_keys(config)
        assert summary.finished == summary.total == len(keys) == 12 and summary.abandoned == 0
        on_ray = _matches(store, summary.league_id)
        assert set(on_ray) == keys and all(m[0] == "finished" for m in on_ray.values())
        reference = asyncio.run(run_league(config.model_copy(update={"name": "kill-ref"}), store))
        assert on_ray == _matches(store, reference.league_id)
    finally:
        store.close()


@pytest.mark.slow
def test_local_models_play_through_one_host_per_node(tmp_path, ray_local):
    """A `local` seat's moves go to the node's ModelHost actor (the model loads once there, not
    in each match task), concurrent matches share it, and every move is answered."""
    config = _config("hosted", matches_per_pair=2, concurrency=2, games=[GameEntry(id="nim")],
                     policies=[PolicyEntry(name="smol", spec="local,mode=tools"), PolicyEntry(name="bot", spec="bot")])
    executor = RayExecutor(config)
    with Store(f"sqlite:///{tmp_path / 'hosted.db'}") as store:
        summary = asyncio.run(run_league(config, store, executor=executor))
        assert summary.finished == summary.total == 2
        records = [store.match_record(int(r.match_id)) for r in store.results(summary.league_id)]
    smol_turns = [t for r in records for t in r.turns if t.policy == "smol"]
    assert smol_turns and all(t.error is None for t in smol_turns)
    assert executor.setup is not None and executor.setup.providers == {"smol": "local:local", "bot": "scripted"}
    [host] = executor.host_stats  # one node: one host
    assert host["local"]["requests"] == len(smol_turns)  # every move of both matches went through it


class _HoldsLaterMatches(RayExecutor):
    """Submits every match to Ray but holds all but the first one's result until cancelled, so a
    match is surely in flight when the stop comes (real matches can all finish in one wake-up)."""

    launched = 0

    async def play(self, pairing):
        self.launched += 1
        remote = asyncio.ensure_future(super().play(pairing))
        try:
            if self.launched > 1:
                await asyncio.Event().wait()
            return await remote
        finally:
            if not remote.done():
                remote.cancel()  # RayExecutor.play cancels the Ray task
                await asyncio.gather(remote, return_exceptions=True)


def test_stop_abandons_ray_matches_and_a_rerun_completes_exactly_once(tmp_path, ray_local):
    config = _config("stop", matches_per_pair=4, concurrency=2, grace_seconds=0, games=[GameEntry(id="connect_four")])
    store = Store(f"sqlite:///{tmp_path / 'stop.db'}")
    try:
        stop = asyncio.Event()
        first = asyncio.run(run_league(config, store, executor=_HoldsLaterMatches(config), stop=stop,
                                       on_finish=lambda d: stop.set()))
        assert first.interrupted and first.abandoned == 1 and first.finished == 1
        assert store.status_counts(first.league_id).get("abandoned") == first.abandoned
        second = asyncio.run(run_league(config, store, executor=RayExecutor(config)))
        assert second.replayed >= first.abandoned and second.finished == second.total == 12, _unfinished_reasons(store)
        assert set(_matches(store, second.league_id)) == scheduled_keys(config) and store.unfinished(second.league_id) == []
    finally:
        store.close()


def test_a_worker_whose_loop_a_cancel_spoiled_plays_its_next_match(ray_local):
    """ray.cancel raises KeyboardInterrupt wherever the worker is; inside asyncio's bookkeeping it
    leaves the thread marked as running a loop, and every later match on that worker failed at
    once (a resumed league abandoned 10 of 12). The next match task starts on a fresh loop."""
    from league import ray_executor

    config = _config("spoiled")
    setup = ray_executor.MatchSetup(config, {"bot": "scripted", "random": "scripted", "random-b": "scripted"})
    outcome: dict[str, object] = {}

    def worker() -> None:  # a thread of its own, as a Ray worker's task thread
        spoiled = asyncio.new_event_loop()
        asyncio._set_running_loop(spoiled)  # the state an interrupt leaves inside run_forever's finally
        spoiled._thread_id = threading.get_ident()
        ray_executor._WORKER_LOOP = spoiled
        ray_executor._WORKER_POLICIES[("stale", "bot")] = object()  # bound to the spoiled loop
        try:
            outcome["record"] = ray_executor._play_task(setup, "rr:tictactoe:bot|random:0", "tictactoe", ("bot", "random"), 7)
            outcome["running_after"] = asyncio._get_running_loop()
            outcome["stale_cached"] = ("stale", "bot") in ray_executor._WORKER_POLICIES
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = repr(exc)
        finally:
            ray_executor._drop_worker_loop()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(60)
    assert "error" not in outcome, outcome.get("error")
    record = outcome["record"]
    assert record["game_id"] == "tictactoe" and record["outcome"] and len(record["turns"]) >= 5
    assert outcome["running_after"] is None and outcome["stale_cached"] is False


def test_a_policy_the_workers_cannot_build_stops_the_league_in_one_line(tmp_path, ray_local):
    from league.runner import LeagueError

    config = _config("bad", policies=[PolicyEntry(spec="bot"), PolicyEntry(spec="random,bogus=1")])
    with Store(f"sqlite:///{tmp_path / 'bad.db'}") as store, pytest.raises(LeagueError, match=r"^policies\[1\]\.spec: cannot build"):
        asyncio.run(run_league(config, store, executor=RayExecutor(config)))
    human = _config("human", policies=[PolicyEntry(spec="bot"), PolicyEntry(spec="human")])
    with Store(f"sqlite:///{tmp_path / 'bad.db'}") as store, pytest.raises(LeagueError, match=r"policies\[1\]\.spec: 'human' needs this terminal"):
        asyncio.run(run_league(human, store, executor=RayExecutor(human)))
    assert ray.is_initialized()  # the executor leaves a Ray it did not start running


def _cli(*args: str, prelude: str = "") -> subprocess.CompletedProcess:
    code = f"{prelude}import sys; from llm_arena_cli.app import main; sys.argv = ['arena', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_bad_ray_flags_are_one_line_with_exit_2(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text("games: [{id: tictactoe}]\npolicies: [bot, random]\n")
    db = f"sqlite:///{tmp_path / 'x.db'}"
    cases = [
        ((), "--executor ray --ray-address 127.0.0.1:1", "--ray-address 127.0.0.1:1: no Ray head answers at 127.0.0.1:1"),
        ((), "--executor ray --ray-address nowhere", "--ray-address 'nowhere': expected auto, HOST:PORT or ray://HOST:PORT"),
        ("import sys; sys.modules['ray'] = None; ", "--executor ray", "--executor ray needs Ray, which is not installed here"),
    ]
    for prelude, flags, expected in cases:
        result = _cli("league", "run", str(league), "--db", db, *flags.split(), prelude=prelude or "")
        assert result.returncode == 2, (flags, result.stderr)
        assert result.stderr.strip().count("\n") == 0 and expected in result.stderr, (flags, result.stderr)
