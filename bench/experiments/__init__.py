"""Experiments: scripts that answered one question about the project (why self-play stays
card-blind, what a tabular learner reaches at the same budget). Their runs and reasoning are dated
pages in docs/experiments/; run them as `.venv/bin/python -m bench.experiments.NAME`."""
