"""Multi-agent text games for language models: the core (game API, policies, match driver, CLI)."""

import os

# torch's OpenMP threads spin while waiting by default; on small machines shared with other
# processes (2 cores here) that made local generation 5-6x slower. Passive waiting costs nothing
# measurable on an idle machine. It must be set before torch is first imported; users may override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
