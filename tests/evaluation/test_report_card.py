"""The report card itself, without playing: what it exports must carry no secret."""

from __future__ import annotations

import json

from evaluation.report_card import report_card
from evaluation.suites import load_suite

SECRET = "sk-abcdefghijklmnopqrstuvwx123456"


def test_the_card_redacts_the_policy_spec():
    card = report_card(load_suite("core-v1"), "gpt", f"openai:gpt-4o-mini,api_key={SECRET}", [], quick=True, planned=18)
    assert SECRET not in json.dumps(card)
    assert card["spec"] == "openai:gpt-4o-mini,api_key=***"
