"""`python -m llm_arena_cli ...` runs the `arena` command (what tests and scripts use without the console script)."""

from llm_arena_cli.app import main

main()
