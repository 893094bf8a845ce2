"""Session slots shared fairly between clients (server_guards.client_slots)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from server_guards.client_slots import ClientSlots, client_address


def test_one_client_cannot_take_every_slot():
    slots = ClientSlots(total=3, per_client=2, per_client_hint="--max-per-client")
    assert slots.take("10.0.0.1") is None and slots.take("10.0.0.1") is None
    refused = slots.take("10.0.0.1")
    assert refused is not None and "2/2" in refused and "--max-per-client" in refused
    assert slots.take("10.0.0.2") is None  # another client still gets the last slot
    assert "capacity: 3/3" in slots.take("10.0.0.3")
    slots.give_back("10.0.0.1")
    assert slots.held_by("10.0.0.1") == 1 and slots.take("10.0.0.3") is None


def test_limits_are_checked():
    with pytest.raises(ValueError):
        ClientSlots(total=0, per_client=1)


def test_client_address_from_a_request_or_a_scope():
    assert client_address(SimpleNamespace(client=SimpleNamespace(host="127.0.0.1", port=5))) == "127.0.0.1"
    assert client_address({"client": ("::1", 5)}) == "::1"
    assert client_address({"type": "http"}) == "unknown"
