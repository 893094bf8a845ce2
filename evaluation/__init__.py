"""Measuring policies: frozen suites with anchored ratings, report cards, exact exploitability.
It sits above `league` (a suite is played as a league) and below `trainer` and `web`."""
