"""Secrets never reach a sink: a league plays against a fake OpenAI-compatible server on 127.0.0.1
that answers every request with an error echoing the key it was sent (and the Authorization
header), with the key in an environment variable and the base URL (with user-info) in another,
and `arena eval suite --quick` evaluates a policy against the same server. Then the DB files
(WAL included), every export and report card, every web page and JSON API answer, the CLI's output
and the logs are searched for the secrets. A spec carrying a literal secret is refused in one
redacted line. The trainer's warnings, a store's URL and `arena web`'s store errors are checked too.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llm_arena_cli.app import app
from arena.redaction import install_log_redaction

# Not key-shaped on purpose, and in a variable whose name says nothing: only the value
# remembered from `api_key_env=` can catch it.
NAMED_KEY = "zq-literal-Credential-9f3a7e"
ENV_KEY = "sk-envdefault-7b1c9d2e"  # OPENAI_API_KEY: the provider's usual variable
URL_PASSWORD = "urlpass-9d8c7b6a"
SECRETS = (NAMED_KEY, ENV_KEY, URL_PASSWORD, "TESTSECRET123")

runner = CliRunner()


class EchoingProvider(BaseHTTPRequestHandler):
    """Every chat completion fails with a 401 that quotes the key and the headers it got."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization", "")
        body = json.dumps({"error": {
            "message": f"Incorrect API key provided: {auth.removeprefix('Bearer ')}. Headers: Authorization: {auth}",
            "type": "invalid_request_error", "code": "invalid_api_key",
        }}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def provider():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingProvider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _invoke(*args: str):
    return runner.invoke(app, list(args), terminal_width=200)


def _assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {where}"


@pytest.fixture(scope="module")
def played(provider, tmp_path_factory):
    """A league with two OpenAI-compatible players whose every move fails with the echo."""
    tmp = tmp_path_factory.mktemp("secrets")
    patch = pytest.MonkeyPatch()
    patch.setenv("MY_PROVIDER_VAR", NAMED_KEY)
    patch.setenv("OPENAI_API_KEY", ENV_KEY)
    patch.setenv("OPENAI_BASE_URL", f"http://urluser:{URL_PASSWORD}@{provider}/v1")
    config = tmp / "league.yaml"
    config.write_text(
        "name: sinks\nseed: 1\nmatches_per_pair: 1\ngames: [{id: tictactoe}]\npolicies:\n"
        f"  - {{name: named, spec: 'openai:m1,base_url=http://{provider}/v1,api_key_env=MY_PROVIDER_VAR,max_retries=0'}}\n"
        "  - {name: envkey, spec: 'openai:m2,max_retries=0'}\n"
        "  - bot\n"
    )
    db_path = tmp / "sinks.db"
    db = f"sqlite:///{db_path}"
    install_log_redaction()
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # openai and httpx log requests, headers and errors at DEBUG/INFO
    cards = {"json": tmp / "card.json", "markdown": tmp / "card.md"}
    try:
        run = _invoke("league", "run", str(config), "--db", db, "-q")
        # ~3 s more once the league has imported the SDK: every candidate move fails at once
        evaluation = _invoke("eval", "suite", "--policy", f"openai:m3,base_url=http://{provider}/v1,api_key_env=MY_PROVIDER_VAR,max_retries=0",
                             "--quick", "--name", "evaluated", "--db", db, "-q", "--json", str(cards["json"]), "--markdown", str(cards["markdown"]))
        logging.getLogger("arena.test").warning("provider said: key %s, url %s", NAMED_KEY, f"http://u:{URL_PASSWORD}@h")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert run.exit_code == 0, run.output
    assert evaluation.exit_code == 0 and "evaluated on core-v1 (quick)" in evaluation.output, evaluation.output
    yield {"tmp": tmp, "db": db, "db_path": db_path, "run": run, "eval": evaluation, "cards": cards,
           "logs": "\n".join(r.getMessage() for r in records)}
    patch.undo()


@pytest.mark.slow  # the shared league run takes ~10 s (the openai SDK's import, 6 matches)
def test_the_store_files_hold_no_secret_but_the_errors_are_kept(played):
    from league.store import Store

    db_path = played["db_path"]
    files = sorted(db_path.parent.glob(db_path.name + "*"))  # with WAL, recent writes sit in sinks.db-wal
    assert db_path in files
    for path in files:
        raw = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in raw, f"{secret!r} is in {path.name}"
    with Store(played["db"]) as store:
        errors = [t.error for r in store.iter_records() for t in r.turns if t.error]
        assert errors and any("401" in e and "***" in e for e in errors)  # the failure is still explained


@pytest.mark.slow  # the shared league run takes ~10 s (the openai SDK's import, 6 matches)
def test_cli_output_and_logs_hold_no_secret(played):
    _assert_clean(played["run"].output, "league run output")
    _assert_clean(played["eval"].output, "eval suite output")
    logs = played["logs"]
    assert "provider said: key ***" in logs and "http://***@h" in logs
    _assert_clean(logs, "the logs")
    listing = _invoke("policy", "list", "--db", played["db"])
    assert listing.exit_code == 0 and "named" in listing.output
    _assert_clean(listing.output, "policy list")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["records", "sft", "dpo"])
def test_exports_hold_no_secret(played, kind):
    out = played["tmp"] / f"{kind}.jsonl"
    result = _invoke("export", "--kind", kind, "--out", str(out), "--db", played["db"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    if kind == "records":
        assert "Incorrect API key provided: ***" in text
    _assert_clean(text, f"the {kind} export")


@pytest.mark.slow  # the shared league run takes ~10 s (the openai SDK's import, 6 matches)
def test_report_cards_hold_no_secret(played):
    for kind, path in played["cards"].items():
        text = path.read_text()
        assert "evaluated" in text
        _assert_clean(text, f"the {kind} report card")


@pytest.mark.slow  # the shared league run takes ~10 s (the openai SDK's import, 6 matches)
def test_web_pages_and_api_hold_no_secret(played):
    from urllib.parse import quote

    from fastapi.testclient import TestClient

    from league.store import Store
    from web.app import create_app

    with Store(played["db"]) as store:
        match_ids = store.match_ids()
        leagues = store.league_names()
    assert len(leagues) == 2  # the league and the evaluation's; pages show the newest unless told
    paths = ["/api/leagues", "/runs", "/api/runs", "/evals", "/api/evals",
             "/evals/evaluated?suite=core-v1&quick=1", "/api/evals/evaluated?suite=core-v1&quick=1"]
    for league in leagues:
        query = f"?league={quote(league)}"
        paths += [page + query for page in ("/", "/api/leaderboard", "/api/leaderboard.csv", "/matches", "/api/matches",
                                            "/h2h", "/api/h2h", "/live", "/api/live")]
        for name in ("named", "envkey") if league == "sinks" else ("evaluated",):
            paths += [f"/policies/{name}{query}", f"/api/policies/{name}{query}"]
    for match_id in match_ids:
        paths += [f"/matches/{match_id}", f"/api/matches/{match_id}"]
    with TestClient(create_app(played["db"])) as client:
        for path in paths:
            response = client.get(path)
            assert response.status_code == 200, path
            _assert_clean(response.text, path)
        assert [card["policy"] for card in client.get("/api/evals").json()] == ["evaluated"]


def test_a_literal_secret_in_a_spec_is_refused_in_one_redacted_line(tmp_path, provider):
    db_path = tmp_path / "refused.db"
    for spec in ("openai:gpt-4o-mini,api_key=sk-TESTSECRET123", f"openai:m,base_url=http://user:sk-TESTSECRET123@{provider}/v1",
                 "openai:m,token=TESTSECRET123", "litellm:openai/x,api_key_env=sk-TESTSECRET123"):
        config = tmp_path / "sec.yaml"
        config.write_text(f"name: sec\nseed: 1\ngames: [{{id: tictactoe}}]\npolicies: [bot, {{name: gpt, spec: \"{spec}\"}}]\n")
        result = _invoke("league", "run", str(config), "--db", f"sqlite:///{db_path}", "-q")
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and "policies[1].spec" in lines[0] and "literal secret" in lines[0] and "***" in lines[0], lines
        _assert_clean(result.output, spec)
        added = _invoke("policy", "add", spec, "--name", "x", "--db", f"sqlite:///{db_path}")
        assert added.exit_code == 2 and "***" in added.output
        _assert_clean(added.output, "policy add")
    if db_path.exists():
        for secret in SECRETS:
            assert secret.encode() not in db_path.read_bytes()


def test_arena_play_refuses_a_key_without_echoing_it():
    result = _invoke("play", "tictactoe", "-p", "openai:gpt-4o-mini,api_key=sk-TESTSECRET123", "-p", "bot")
    assert result.exit_code == 2 and "***" in result.output and len(result.output.strip().splitlines()) == 1
    _assert_clean(result.output, "arena play")


def test_wandb_gets_a_redacted_config(tmp_path, monkeypatch):
    import sys
    import types

    from trainer.metrics import MetricsLogger

    seen: dict = {}
    fake = types.ModuleType("wandb")
    fake.init = lambda **kwargs: seen.update(kwargs) or types.SimpleNamespace(log=lambda *a, **k: None, finish=lambda: None)
    monkeypatch.setitem(sys.modules, "wandb", fake)
    monkeypatch.setenv("MY_PROVIDER_VAR", NAMED_KEY)
    config = {"opponents": [{"policies": [f"openai:m,base_url=http://u:{URL_PASSWORD}@h/v1", "bot"]}], "api_key": ENV_KEY,
              "notes": f"Authorization: Bearer {NAMED_KEY}"}
    MetricsLogger(Path(tmp_path / "m.jsonl"), use_wandb=True, project="p", run_name="r", config=config, resume=False)
    _assert_clean(json.dumps(seen["config"]), "the wandb config")
    assert seen["config"]["opponents"][0]["policies"][1] == "bot"


def test_a_store_url_is_shown_without_its_password_or_tokens(tmp_path):
    import warnings

    from league.store import Store

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pysqlite ignores the query argument, and says so
        store = Store(f"sqlite:///{tmp_path / 'shown.db'}?token={NAMED_KEY}")
    try:
        shown = store._safe_url()  # what `arena league run`, `league status` and the web's empty page print
    finally:
        store.close()
    assert shown == f"sqlite:///{tmp_path / 'shown.db'}?token=***"


def test_the_settings_a_run_writes_beside_it_hold_no_secret():
    from trainer.config import parse_config
    from trainer.run import stored_config

    config = parse_config({"name": "t", "games": [{"id": "tictactoe"}],
                           "checkpoint": {"db": f"postgresql+psycopg://arena:{URL_PASSWORD}@db-host/arena"},
                           "rollout": {"atropos_url": f"http://hub:{NAMED_KEY}@127.0.0.1:8000"}})
    written = stored_config(config)  # runs/NAME/config.yaml and every checkpoint's copy
    assert written["checkpoint"]["db"] == "postgresql+psycopg://***@db-host/arena" and written["name"] == "t"
    _assert_clean(json.dumps(written), "a run's config.yaml")


def test_trainer_warnings_are_redacted(tmp_path):
    """A checkpoint that cannot be registered is a warning the CLI prints: the store's error quotes
    its URL (SQLAlchemy hides the password, not a token in the query)."""
    import asyncio

    from trainer.config import parse_config
    from trainer.run import Trainer

    bad_url = f"sqlite://user:{URL_PASSWORD}@/{tmp_path / 'x.db'}?token={NAMED_KEY}"  # not a valid SQLite URL
    config = parse_config({"name": "t", "games": [{"id": "tictactoe"}], "checkpoint": {"db": bad_url}})
    events: list[tuple[str, object]] = []
    trainer = Trainer(config, on_event=lambda kind, payload: events.append((kind, payload)))
    asyncio.run(trainer._publish(1, tmp_path / "step-1"))
    warnings = [str(payload) for kind, payload in events if kind == "warning"]
    assert len(warnings) == 1 and "could not register" in warnings[0] and "Invalid SQLite URL" in warnings[0], warnings
    _assert_clean(warnings[0], "a trainer warning")


def test_a_secret_in_a_meta_key_is_not_stored(tmp_path):
    """`--meta KEY=VALUE` drops secret-named keys and masks values; a key that is itself a pasted
    secret (key-shaped, or the value of a secret variable) is masked too (issue 56, finding 6)."""
    from league.store import Store

    db_path = tmp_path / "meta.db"
    db = f"sqlite:///{db_path}"
    patch = pytest.MonkeyPatch()
    patch.setenv("OPENAI_API_KEY", ENV_KEY)
    try:
        added = _invoke("policy", "add", "random", "--name", "noted", "--meta", f"{ENV_KEY}=pasted", "--meta", "sk-metakey-0123456789=x",
                        "--meta", "note=baseline", "--db", db)
        assert added.exit_code == 0, added.output
        listing = _invoke("policy", "list", "--db", db)
    finally:
        patch.undo()
    with Store(db) as store:
        assert store.policy("noted").meta == {"***": "x", "note": "baseline"}  # two masked keys are one
    for path in sorted(tmp_path.glob("meta.db*")):
        for secret in (ENV_KEY, "sk-metakey-0123456789"):
            assert secret.encode() not in path.read_bytes(), f"{secret!r} is in {path.name}"
    assert "note=baseline" in listing.output and ENV_KEY not in listing.output
