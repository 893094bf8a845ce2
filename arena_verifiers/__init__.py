"""The verifiers plugin id `arena-verifiers` (`vf-eval arena-verifiers --env.taskset.game ...`).

verifiers 0.4 imports a taskset plugin by a dotless module name and takes the Taskset, Env and
Harness classes it exports in `__all__`; the classes live in `interop.verifiers`."""

from interop.verifiers import ArenaChatHarness, ArenaEnv, ArenaTaskset

__all__ = ["ArenaTaskset", "ArenaEnv", "ArenaChatHarness"]
