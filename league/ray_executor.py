"""`arena league run --executor ray`: every match a Ray task, the head process the only writer.

The runner (league/runner.py) keeps scheduling, global and per-provider limits, the store and the
ratings in the head process; this executor only plays pairings somewhere on a Ray cluster:

- A match is one Ray task (`_play_task`). It returns the driver's MatchRecord as a plain dict
  (JSON types), and the head stores it with `store.finish` keyed by the pairing key, exactly as
  the in-process runner does; workers never touch the database.
- Scripted and API-backed policies are built in the worker process that plays the match, once
  per process (`_WORKER_POLICIES`), on one event loop kept for the process's life.
- Local models (`local`, `hf:...`) are served by `ModelHost` actors, one per node (one per GPU on
  GPU nodes). A match task sends each move of a hosted seat to a host on its own node; the host's
  engine batches the moves of every match task on that node, as one process's engine does.
- A worker that dies mid-match: Ray runs the task again (`SYSTEM_RETRIES`), then the head submits
  it again (`RESUBMITS`); only then is the match `MatchLost`, which the runner marks abandoned for
  the next run to replay. A retried match starts from scratch with the same seed, and the head
  stores whatever comes back once per key, so nothing is lost or counted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator

import ray
from ray.exceptions import RayActorError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from arena.match import MatchRecord
from arena.policy import MoveRequest, Policy, PolicyReply, PolicySpec
from league.config import LeagueConfig
from league.runner import Executor, LeagueError, MatchLost, build_policies, play_pairing
from league.scheduling import Pairing

HOSTED_KINDS = ("local", "hf")  # served by a ModelHost actor per node
TERMINAL_KINDS = ("human",)  # need the terminal of the head process
SCRIPTED_PROVIDER = "scripted"  # bots: CPU-bound for the whole match
WAITING_CPUS = 0.25  # a match that mostly waits on a model host or an API needs little CPU
SYSTEM_RETRIES = 3  # Ray's own re-runs of a task whose worker or node died
RESUBMITS = 2  # then the head submits it again, as a new task
PROBE_TIMEOUT_S = 5.0


class HostLost(Exception):
    """A model host died while a move was on it: the match must be played again, not scored."""


# ---- connecting ------------------------------------------------------------------------------------


def connect(address: str | None = None) -> bool:
    """Join the Ray cluster at `address` (`auto`, `HOST:PORT` or `ray://HOST:PORT`), or start a
    private local instance when `address` is None (and $RAY_ADDRESS is unset). Returns True when
    this call connected (so the caller disconnects), False when Ray was already initialised.
    Raises LeagueError with one line naming what is wrong."""
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home from a league run
    if address:
        _probe(address)
    options: dict[str, Any] = {"address": address, "logging_level": "ERROR", "log_to_driver": False}
    joining = bool(address or os.environ.get("RAY_ADDRESS"))
    if not joining:
        options["include_dashboard"] = False  # a private instance: no web UI, a faster start
    where = f"--ray-address {address}" if address else f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}" if joining else "a local Ray instance"
    failure: Exception | None = None
    with tempfile.TemporaryFile() as held:
        # Joining a cluster starts no Ray process here, so stderr can be held back meanwhile: a
        # refused connection makes Ray's C++ client log a warning a second until it gives up.
        with _stderr_into(held) if joining else contextlib.nullcontext():
            try:
                ray.init(**options)
            except Exception as exc:  # noqa: BLE001 - no cluster, a version mismatch: one line
                failure = exc
        held.seek(0)
        logged = held.read().decode(errors="replace")
    if failure is None:
        sys.stderr.write(logged)  # whatever Ray said on the way in, shown after all
        return True
    if "Unauthenticated" in logged or "InvalidAuthToken" in logged:
        raise LeagueError(
            f"{where}: the Ray cluster refused this process (token authentication); set RAY_AUTH_MODE=token "
            "and the cluster's token (RAY_AUTH_TOKEN or ~/.ray/auth_token) here, see docs/cluster.md"
        )
    raise LeagueError(f"{where}: cannot connect to Ray: {_first_line(failure)}")


@contextlib.contextmanager
def _stderr_into(file: Any) -> Iterator[None]:
    """File descriptor 2 (where Ray's C++ code logs) into `file` for the duration."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _probe(address: str) -> None:
    """Fail in seconds, not after Ray's long reconnect loop, when HOST:PORT does not answer."""
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise LeagueError(f"--ray-address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise LeagueError(f"--ray-address {address}: no Ray head answers at {host}:{port} ({exc.strerror or exc})") from None


def _task_error(exc: RayTaskError) -> str:
    """What failed on the worker, as `Type: message`: a RayTaskError's own first line is only
    the task's process title (`ray::_play_task() (pid=..., ip=...)`), which names nothing."""
    cause = exc.cause if isinstance(exc.cause, BaseException) else exc
    return f"{type(cause).__name__}: {_first_line(cause)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


# ---- the model host actor ---------------------------------------------------------------------------


class ModelHost:
    """The league's local-model policies on one node (or GPU): built once, so the model loads once
    and its engine batches the moves of every match task that asks this host."""

    def __init__(self, config: LeagueConfig, names: list[str]) -> None:
        self.error: str | None = None
        self.policies: dict[str, Policy] = {}
        try:
            self.policies = build_policies(config, names)
        except LeagueError as exc:  # reported by providers(), so the head can say it in one line
            self.error = str(exc)

    def providers(self) -> dict[str, str] | str:
        return self.error if self.error is not None else {n: p.provider for n, p in self.policies.items()}

    def stats(self) -> dict[str, dict[str, Any]]:
        """Each engine's counters (moves served, batches, largest batch) by base model."""
        engines = {p.engine.base: p.engine for p in self.policies.values() if hasattr(p, "engine")}
        return {base: dataclasses.asdict(engine.stats) for base, engine in engines.items()}

    async def act(self, name: str, request: MoveRequest) -> tuple[PolicyReply | None, BaseException | None]:
        """The reply, or the policy's exception (raised again in the match, so the driver records it
        exactly as in one process)."""
        try:
            return await self.policies[name].act(request), None
        except Exception as exc:  # noqa: BLE001 - handed back, not lost in a RayTaskError
            return None, exc


class HostedPolicy(Policy):
    """Stands in for a local-model policy inside a match task: each move goes to a ModelHost."""

    def __init__(self, name: str, spec: str, provider: str, host: Any, lost: list[str]) -> None:
        self.name, self.spec, self.provider = name, spec, provider
        self.host = host
        self.lost = lost  # shared by the match's seats: set when the host died under a move

    async def act(self, request: MoveRequest) -> PolicyReply:
        # The seat's bound bot/random movers hold the whole game: LLM policies never use them.
        request = dataclasses.replace(request, baseline=None, random_move=None)
        try:
            reply, error = await self.host.act.remote(self.name, request)
        except RayActorError as exc:
            self.lost.append(_first_line(exc))
            raise HostLost(self.lost[-1]) from None
        if error is not None:
            raise error
        assert reply is not None
        return reply


# ---- the match task (runs in Ray worker processes) ------------------------------------------------------


@dataclass
class MatchSetup:
    """What every match task of a league needs; put in the object store once per league."""

    config: LeagueConfig
    providers: dict[str, str]  # policy name -> Policy.provider
    hosted: set[str] = field(default_factory=set)  # names served by ModelHost actors
    hosts: dict[str, list[Any]] = field(default_factory=dict)  # node id -> ModelHost handles


_WORKER_POLICIES: dict[tuple[str, str], Policy] = {}  # (name, spec) -> policy, per worker process
_WORKER_LOOP: asyncio.AbstractEventLoop | None = None


def _worker_loop() -> asyncio.AbstractEventLoop:
    """One event loop per worker process: cached API clients are bound to the loop they started on.

    A stopping league cancels its match tasks, and Ray cancels by raising KeyboardInterrupt in the
    worker wherever it is; landing inside asyncio's own bookkeeping it can leave this thread
    marked as running a loop, and then every later match on this worker fails at once ("Cannot
    run the event loop while another loop is running"; seen under load as a resumed league that
    abandoned 10 of 12 matches). Such a loop is dropped with the policies bound to it."""
    global _WORKER_LOOP
    stale = asyncio._get_running_loop() is not None or (_WORKER_LOOP is not None and _WORKER_LOOP.is_running())
    if stale:
        asyncio._set_running_loop(None)
        _drop_worker_loop()
    if _WORKER_LOOP is None or _WORKER_LOOP.is_closed():
        _WORKER_LOOP = asyncio.new_event_loop()
    return _WORKER_LOOP


def _drop_worker_loop() -> None:
    """Forget the worker's loop and the cached policies whose clients are bound to it."""
    global _WORKER_LOOP
    loop, _WORKER_LOOP = _WORKER_LOOP, None
    _WORKER_POLICIES.clear()
    if loop is not None and not loop.is_running():
        with contextlib.suppress(Exception):
            loop.close()


def _seat_policies(setup: MatchSetup, key: str, seats: tuple[str, ...], lost: list[str]) -> dict[str, Policy]:
    policies: dict[str, Policy] = {}
    node_hosts = setup.hosts.get(ray.get_runtime_context().get_node_id()) or [h for hs in setup.hosts.values() for h in hs]
    specs = {e.name: e.spec for e in setup.config.policies}
    for name in set(seats):
        if name in setup.hosted:
            host = node_hosts[zlib.crc32(key.encode()) % len(node_hosts)]  # spread a node's matches over its GPUs
            policies[name] = HostedPolicy(name, specs[name], setup.providers[name], host, lost)
            continue
        cached = _WORKER_POLICIES.get((name, specs[name]))
        if cached is None:
            cached = _WORKER_POLICIES[(name, specs[name])] = build_policies(setup.config, [name])[name]
        policies[name] = cached
    return policies


def _play_task(setup: MatchSetup, key: str, game_id: str, seats: tuple[str, ...], seed: int) -> dict[str, Any]:
    """Play one pairing in this worker; the record comes back as JSON types."""
    pairing = Pairing(key, game_id, tuple(seats), seed)
    lost: list[str] = []
    loop = _worker_loop()  # first: it may drop cached policies bound to a spoiled loop
    policies = _seat_policies(setup, key, pairing.seats, lost)
    options = {g.id: g.options for g in setup.config.games}
    match = loop.create_task(play_pairing(pairing, policies, options, setup.config.move_timeout))
    try:
        record = loop.run_until_complete(match)
    except BaseException:  # ray.cancel (KeyboardInterrupt): leave no half-run match on the loop
        match.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(match)
        raise  # a loop spoiled by the interrupt is dropped by the next task (_worker_loop)
    if lost:
        raise HostLost(f"model host lost during match {key}: {lost[0]}")  # Ray retries the task
    return record.to_dict()


def _describe_task(config: LeagueConfig, names: list[str]) -> dict[str, str] | str:
    """Build the non-hosted policies once on a worker: their providers, or the one-line error."""
    try:
        return {name: policy.provider for name, policy in build_policies(config, names).items()}
    except LeagueError as exc:
        return str(exc)


# ---- the executor (head process) ---------------------------------------------------------------------


class RayExecutor(Executor):
    """Matches as Ray tasks on the cluster at `address` (None: $RAY_ADDRESS or a local instance).

    `cpus_per_match` is what each match task reserves; by default 1 for matches of scripted bots
    only (they compute the whole time) and WAITING_CPUS when a seat waits on a model host or API.
    """

    def __init__(self, config: LeagueConfig, address: str | None = None, cpus_per_match: float | None = None) -> None:
        self.config = config
        self.address = address
        self.cpus_per_match = cpus_per_match
        self.connected = False
        self.hosts: list[Any] = []
        self.host_stats: list[dict[str, dict[str, Any]]] = []  # per host, read when closing
        self.setup: MatchSetup | None = None
        self._setup_ref: Any = None
        self._task: Any = None

    def connect(self) -> None:
        """Join (or start) Ray now; `start` does it too. One-line LeagueError when it cannot."""
        if not ray.is_initialized():
            self.connected = connect(self.address)

    async def start(self) -> dict[str, str]:
        self.connect()
        entries = list(enumerate(self.config.policies))
        for i, entry in entries:
            if PolicySpec.parse(entry.spec).kind in TERMINAL_KINDS:
                raise LeagueError(f"policies[{i}].spec: {entry.spec!r} needs this terminal; play it with --executor local")
        hosted = {e.name for _, e in entries if PolicySpec.parse(e.spec).kind in HOSTED_KINDS}
        others = [e.name for _, e in entries if e.name not in hosted]
        providers: dict[str, str] = {}
        if others:
            described = await ray.remote(num_cpus=0)(_describe_task).remote(self.config, others)
            if isinstance(described, str):
                raise LeagueError(described)
            providers.update(described)
        hosts_by_node: dict[str, list[Any]] = {}
        if hosted:
            hosts_by_node = self._start_hosts(sorted(hosted))
            for reported in await asyncio.gather(*(h.providers.remote() for h in self.hosts)):
                if isinstance(reported, str):
                    raise LeagueError(reported)
                providers.update(reported)
        self.setup = MatchSetup(self.config, providers, hosted, hosts_by_node)
        self._setup_ref = ray.put(self.setup)
        self._task = ray.remote(max_retries=SYSTEM_RETRIES, retry_exceptions=[HostLost])(_play_task)
        return providers

    def _start_hosts(self, names: list[str]) -> dict[str, list[Any]]:
        """One ModelHost per GPU on GPU nodes, one per CPU-only node; none on nodes that offer no
        CPU or GPU to tasks (a head started with --num-cpus 0). Soft affinity: a host whose node
        dies restarts elsewhere, and moves in flight are retried on it."""
        actor = ray.remote(ModelHost)
        by_node: dict[str, list[Any]] = {}
        for node in ray.nodes():
            resources = node.get("Resources", {})
            if not node.get("Alive") or (resources.get("CPU", 0) <= 0 and resources.get("GPU", 0) <= 0):
                continue
            gpus = int(resources.get("GPU", 0))
            for _ in range(max(1, gpus)):
                handle = actor.options(
                    num_cpus=0, num_gpus=1 if gpus else 0, max_restarts=-1, max_task_retries=-1,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=True),
                ).remote(self.config, names)
                by_node.setdefault(node["NodeID"], []).append(handle)
                self.hosts.append(handle)
        if not self.hosts:
            raise LeagueError("the Ray cluster has no node with CPUs or GPUs for the model hosts")
        return by_node

    def _cpus(self, pairing: Pairing) -> float:
        if self.cpus_per_match is not None:
            return self.cpus_per_match
        assert self.setup is not None
        scripted = all(self.setup.providers[name] == SCRIPTED_PROVIDER for name in pairing.seats)
        return 1.0 if scripted else WAITING_CPUS

    async def play(self, pairing: Pairing) -> MatchRecord:
        assert self._task is not None, "start() first"
        failures: list[str] = []
        for _ in range(1 + RESUBMITS):
            ref = self._task.options(num_cpus=self._cpus(pairing)).remote(self._setup_ref, pairing.key, pairing.game_id, pairing.seats, pairing.seed)
            try:
                return MatchRecord.from_dict(await ref)
            except asyncio.CancelledError:  # the runner stops (Ctrl-C): stop the remote match too
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
                raise
            except RayTaskError as exc:
                if not isinstance(exc, HostLost):  # our code failed on the worker: retrying cannot help
                    raise MatchLost(f"match {pairing.key}: {_task_error(exc)}") from None
                failures.append(_task_error(exc))
            except RayError as exc:  # the worker or node died after Ray's own retries
                failures.append(_first_line(exc))
        raise MatchLost(f"match {pairing.key} lost {len(failures)} times; last: {failures[-1]}")

    async def close(self) -> None:
        if self.hosts:
            with contextlib.suppress(Exception):
                self.host_stats = list(await asyncio.wait_for(asyncio.gather(*(h.stats.remote() for h in self.hosts)), 10))
        for handle in self.hosts:
            with contextlib.suppress(Exception):
                ray.kill(handle)
        self.hosts = []
        if self.connected:
            self.connected = False
            ray.shutdown()
