"""Benchmarks: scripts whose figures are re-run and compared as the code changes, each with one
current table in docs/benchmarks.md. Run them from the repository root as modules, so they import
the project and each other without touching sys.path:

    .venv/bin/python -m bench.engine
    .venv/bin/python -m bench.strategy --minutes 5

bench/experiments/ holds experiments instead: scripts that answered one question, whose dated runs
and reasoning are pages in docs/experiments/.
"""
