"""arena.redaction: what is masked, what is kept, and what a spec checker is told."""

import logging

import pytest

from arena.policy import PolicySpec, PolicySpecError, make_policy
from arena.redaction import MASK, find_secrets, install_log_redaction, known_secret_masker, redact, redact_data, remember_secret


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai:gpt-4o-mini,api_key=sk-TESTSECRET123", "openai:gpt-4o-mini,api_key=***"),
        ("openai:m,base_url=http://user:pw-123@127.0.0.1:8000/v1", "openai:m,base_url=http://***@127.0.0.1:8000/v1"),
        ("postgresql+psycopg://arena:hunter22@db:5432/arena", "postgresql+psycopg://***@db:5432/arena"),
        ("https://host/v1?key=AIzaSyA-1234567890abcdefghij&alt=json", "https://host/v1?key=***&alt=json"),
        ("https://host/v1?access_token=abc&x=1", "https://host/v1?access_token=***&x=1"),
        ("Authorization: Bearer abcdef0123456789", "Authorization: ***"),
        ("{'x-api-key': 'k-123456789', 'accept': 'json'}", "{'x-api-key': '***', 'accept': 'json'}"),
        ('{"password": "hunter22", "user": "me"}', '{"password": "***", "user": "me"}'),
        ("echo: token=abc and Bearer zzzzzzzz", "echo: token=*** and Bearer ***"),
        ("key ghp_abcdefghij0123456789 and hf_abcdefghijklmn", "key *** and ***"),
    ],
)
def test_secrets_are_masked(text, expected):
    assert redact(text) == expected
    assert find_secrets(text) and not find_secrets(redact(text))  # masks already in place are not secrets


@pytest.mark.parametrize(
    "text",
    ["openai:m,api_key_env=MY_KEY,max_tokens=64,max_new_tokens=8", "local,temperature=0.7", "prompt_tokens=12 monkey=3",
     "hf:Qwen/Qwen2.5-0.5B-Instruct+runs/t/step-3", "https://openrouter.ai/api/v1", "task-based desk-lamp",
     "game error: basic strategy failed"],
)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text and find_secrets(text) == []


def test_values_of_secret_variables_and_remembered_keys_are_masked_whatever_their_shape(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plain-looking-value-42")
    monkeypatch.setenv("HARMLESS_SETTING", "plain-setting-value")
    remember_secret("no-shape-at-all-7781")
    text = "got plain-looking-value-42 and no-shape-at-all-7781 with plain-setting-value"
    assert redact(text) == f"got {MASK} and {MASK} with plain-setting-value"
    remember_secret("short")  # too short to mask without masking ordinary words
    assert redact("a short word") == "a short word"


def test_structured_values_mask_secret_fields_and_strings():
    value = {"api_key": "x", "nested": [{"Authorization": "Basic abc"}, "token=abc"], "max_tokens": 5, "spec": "openai:m"}
    assert redact_data(value) == {"api_key": MASK, "nested": [{"Authorization": MASK}, f"token={MASK}"], "max_tokens": 5, "spec": "openai:m"}


@pytest.mark.parametrize(
    "spec",
    ["openai:gpt-4o-mini,api_key=sk-TESTSECRET123", "openai:m,base_url=http://u:TESTSECRET123@h/v1", "openai:m,secret=TESTSECRET123",
     "litellm:openai/x,api_key_env=sk-TESTSECRET123", "hf:Qwen/x,token=TESTSECRET123"],
)
def test_specs_with_a_literal_secret_are_refused_redacted(spec):
    with pytest.raises(PolicySpecError) as err:
        PolicySpec.parse(spec)
    message = str(err.value)
    assert "TESTSECRET123" not in message and MASK in message and "api_key_env" in message
    with pytest.raises(PolicySpecError):
        make_policy(spec)


def test_every_log_record_is_redacted(caplog):
    install_log_redaction()
    # the library logger's own level: importing litellm (earlier tests do) raises httpx's to WARNING
    with caplog.at_level(logging.INFO, logger="httpx"):
        logging.getLogger("httpx").info("HTTP Request: POST %s", "http://user:pw-secret@127.0.0.1/v1")
    assert "pw-secret" not in caplog.text and "http://***@127.0.0.1/v1" in caplog.text


def test_placeholders_in_help_text_are_kept():
    for text in ("parameter 'seed' is not key=value", "--meta 'x': expected KEY=VALUE", "do not put api_key=... in a spec"):
        assert redact(text) == text


def test_formatted_tracebacks_and_stacks_are_redacted():
    """`log.exception` (serve-env does) prints the exception's message in the traceback, and a
    stack's source lines may hold a URL: a standard Formatter's output holds neither secret."""
    import io

    install_log_redaction()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log = logging.getLogger("arena.test.tracebacks")
    log.addHandler(handler)
    log.propagate = False
    try:
        try:
            raise RuntimeError("provider said: http://user:pw-in-traceback-4411@host/v1 api_key=zq-traceback-key-9911")
        except RuntimeError:
            log.exception("request failed")
        log.warning("with a stack", stack_info=True)  # this very line (and its URL) is in the stack: http://u:pw-in-stack-5522@h
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "Traceback (most recent call last)" in text and "RuntimeError: provider said: http://***@host/v1 api_key=***" in text
    assert "Stack (most recent call last)" in text and "http://***@h" in text
    for secret in ("pw-in-traceback-4411", "zq-traceback-key-9911", "pw-in-stack-5522"):
        assert secret not in text


def test_an_http_agents_token_is_masked_whatever_its_variables_name(monkeypatch):
    """`token_env=VAR` names the variable of a bearer token, as `api_key_env=` does for a key: an
    agent echoing the token gets it masked even when neither the name nor the value looks secret."""
    monkeypatch.setenv("AGENT_HEADER_VALUE", "plain-agent-value-3141")
    make_policy("http:http://127.0.0.1:9/move,token_env=AGENT_HEADER_VALUE")
    assert redact("agent said: you sent plain-agent-value-3141") == f"agent said: you sent {MASK}"


def test_the_masker_masks_known_secrets_in_text_and_structures_keys_included(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "value-of-a-token-2718")  # a secret by its variable's name
    remember_secret('quoted"agent\\badge-1618')  # one JSON escapes: found in a structure all the same
    mask = known_secret_masker()
    assert mask("you sent value-of-a-token-2718, twice: value-of-a-token-2718") == f"you sent {MASK}, twice: {MASK}"
    meta = {"reasoning": 'it said quoted"agent\\badge-1618', "value-of-a-token-2718": 1, "samples": [{"raw": "x value-of-a-token-2718"}], "ids": [1, 2]}
    assert mask(meta) == {"reasoning": f"it said {MASK}", MASK: 1, "samples": [{"raw": f"x {MASK}"}], "ids": [1, 2]}
    assert mask(None) is None and mask(3) == 3


def test_the_masker_keeps_everything_else_as_it_was(monkeypatch):
    """Game text is recorded as the game wrote it: no pattern rule applies, only known values."""
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "value-of-a-token-2718")
    mask = known_secret_masker()
    board = "key: 5, token=abc, Bearer of bad news: sk-notknown-1234567 | Your password hint: hunter22"
    assert mask(board) == board
    meta = {"parse": "exact", "harness": {"sampler": "single"}, "prompt_ids": list(range(50))}
    assert mask(meta) is meta  # nothing to mask: kept as it is, not copied


def test_secret_keys_are_redacted_in_stored_notes():
    """`--meta sk-...=note` or a league file's `meta:` with a pasted key: the key is masked too."""
    from league.store import scrub

    assert redact_data({"sk-pastedkey-0123456789": "note", "note": "fine"}) == {MASK: "note", "note": "fine"}
    assert scrub({"ghp_abcdefghij0123456789": "x", "note": "fine", "api_key": "dropped"}) == {MASK: "x", "note": "fine"}
