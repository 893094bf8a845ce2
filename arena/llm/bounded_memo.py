"""A bounded least-recently-used map, and the small digests that key it: what the engines and the
learner remember (choice scores, prompt encodings, option ids, the base model's log-probs)
without growing for ever."""

from __future__ import annotations

import collections
import hashlib
import threading
from array import array
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


def ids_digest(*parts: Any) -> bytes:
    """A 16-byte digest of token-id lists (and nested lists of them, and scalars): memo keys stay
    small however long the prompts are. Each part is framed by its length, so different splits
    of the same ids never collide."""
    digest = hashlib.blake2b(digest_size=16)

    def feed(part: Any) -> None:
        if isinstance(part, (list, tuple)) and part and isinstance(part[0], (list, tuple)):
            digest.update(b"L%d;" % len(part))
            for inner in part:
                feed(inner)
        elif isinstance(part, (list, tuple)):
            digest.update(b"I%d;" % len(part))
            digest.update(array("q", part).tobytes())
        else:
            digest.update(b"S" + repr(part).encode() + b";")

    for part in parts:
        feed(part)
    return digest.digest()
