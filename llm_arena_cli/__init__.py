"""The `arena` command, the composition root: it sits above every package it puts together
(games, league, web, trainer, serve-model), so no core package imports it. See docs/architecture.md."""
