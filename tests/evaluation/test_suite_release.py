"""Released suites are frozen: their files' hashes are held here, and every reference of a released
suite carries its anchor and the fit's provenance (docs/eval.md).

core-v1.yaml's header names this file by the path it had when the suite was released
(tests/eval/); the suite file cannot follow the move without changing its frozen hash."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from evaluation.suites import available_suites, load_suite

# sha256 of each released suite file (line endings normalised to \n). Never update a hash: a
# changed suite is a new version (core-v2.yaml) with its own entry here.
RELEASED = {
    "core-v1": "cc0e9e9016c53ff5ae62620bfa429a12f4cea59002fa07fc9fd527d4309b2726",
}


def _sha256(name: str) -> str:
    data = resources.files("evaluation.suites").joinpath(f"{name}.yaml").read_bytes()
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def test_every_shipped_suite_is_released_with_a_frozen_hash():
    assert sorted(RELEASED) == available_suites(), "a new suite file is released by adding its hash to RELEASED"


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_a_released_suite_file_never_changes(name):
    assert _sha256(name) == RELEASED[name], (
        f"evaluation/suites/{name}.yaml changed after its release: a changed suite is a new version; "
        f"restore {name}.yaml and put the change in a new file (e.g. the next core-vN.yaml)"
    )


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_a_released_suite_has_every_anchor_and_its_provenance(name):
    suite = load_suite(name)
    assert set(suite.anchors()) == {r.name for r in suite.references}
    for field in ("date", "command", "matches", "machine"):
        assert suite.anchor_fit.get(field), f"{name}: anchor_fit.{field} is missing"
    assert suite.anchor_fit["date"] == suite.released  # freezing the anchors is the release
