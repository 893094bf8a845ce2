"""How many rows of a given width fit one micro-batch of the learner's update (algorithm.micro_batch_memory_gb).

The update keeps every layer's activations for the backward pass. On the learner's usual path (a
shared system prompt run once, its KV cache repeated for every row, `Learner._run`) attention runs
with an explicit mask, so it keeps the full attention matrices: memory grows with each row's width
squared, times layers and heads. Measured on the shipped SmolLM2-135M (30 layers, 9 heads, float32
on CPU, `resource.getrusage` around one update of rows sharing a 500-token prefix, padded to 1,016
tokens): 4 rows took 5.5 GB, ~1.4 GB a row, i.e. ~5 bytes per (layer, head, query, key); rows of
one width without a shared prefix cost ~110 KB a token (~1.7 bytes per layer per hidden and MLP
unit). A micro-batch of 16 such rows took the 24 GB machine's learner out of memory
(bench.core_climb, step 6). The estimate is for float32; bf16 on a GPU halves it (raise the limit there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ATTENTION_BYTES_PER_CELL = 5.0  # per layer, head, query position and key position (measured, above)
BYTES_PER_UNIT = 1.7  # per token, layer and hidden-or-MLP unit (measured, above)


@dataclass(frozen=True)
class RowMemory:
    """Bytes the update keeps for one row of `width` tokens, from the model's shape."""

    layers: int
    heads: int
    units: int  # hidden size + MLP size

    @classmethod
    def of(cls, config: Any) -> "RowMemory":
        layers = int(getattr(config, "num_hidden_layers", 0) or getattr(config, "n_layer", 0) or 1)
        heads = int(getattr(config, "num_attention_heads", 0) or getattr(config, "n_head", 0) or 1)
        hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0) or 1)
        mlp = int(getattr(config, "intermediate_size", 0) or 4 * hidden)
        return cls(layers=layers, heads=heads, units=hidden + mlp)

    def bytes(self, width: int) -> float:
        attention = ATTENTION_BYTES_PER_CELL * self.layers * self.heads * width * width
        activations = BYTES_PER_UNIT * self.layers * self.units * width
        return attention + activations

    def rows_fitting(self, width: int, budget_gb: float) -> int:
        """Rows of `width` tokens within `budget_gb`; at least 1 (a wider row runs alone)."""
        return max(1, int(budget_gb * 1e9 // self.bytes(width)))
