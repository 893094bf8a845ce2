"""Multi-agent text games for language models: the core every other package speaks (the game API,
policies and their kinds, the local-model engines, the match driver, the seat environment,
redaction). Command lines, servers, evaluation, training and the database live in the packages
above it (docs/architecture.md, "Layers"); tests/test_layers.py keeps web and CLI frameworks out."""

import os

# torch's OpenMP threads spin while waiting by default; on small machines shared with other
# processes (2 cores here) that made local generation 5-6x slower. Passive waiting costs nothing
# measurable on an idle machine. It must be set before torch is first imported; users may override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
