"""A bounded least-recently-used map: what the engines and the learner remember (choice scores,
prompt encodings, option ids, the base model's log-probs) without growing for ever."""

from __future__ import annotations

import collections
import threading
from typing import Any, Hashable

DEFAULT_ENTRIES = 8192  # a Kuhn or Leduc step needs dozens to hundreds; Tic-Tac-Toe a few thousand


class BoundedMemo:
    """A bounded least-recently-used map; entries nobody asks for again age out. Safe to share
    between threads (the prompts' encodings are asked for from every event loop's thread)."""

    def __init__(self, entries: int = DEFAULT_ENTRIES):
        self.entries = entries
        self._values: "collections.OrderedDict[Hashable, Any]" = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        if self.entries <= 0:
            return
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.entries:
                self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)
