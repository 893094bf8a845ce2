"""Our games in other ecosystems' environment interfaces: PettingZoo (multi-agent RL), GEM and
verifiers (LLM RL).

Adapters translate; they never change a game's rules or the match driver's. They import the game
registry (`games`), which imports the core (`arena`), so they cannot live in `arena` without
turning the one-way import chain into a loop; this package sits beside `league`, above `games`.
Each adapter module imports its third-party library itself, so importing `interop` alone costs
nothing.
"""
