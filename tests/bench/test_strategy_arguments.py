"""bench.strategy's command line: a run's picture lands in its own folder unless told otherwise, so
a run with another budget never overwrites a picture the docs show (a 24-step Leduc run once
replaced the 8-step section's)."""

from pathlib import Path

import pytest

from bench.strategy import parse_arguments


def test_a_poker_runs_curve_goes_to_its_run_folder_by_default(tmp_path):
    args = parse_arguments(["--game", "leduc_holdem", "--steps", "24", "--name", "leduc24", "--runs", str(tmp_path)])
    assert args.plot == tmp_path / "leduc24" / "exploitability.png"


def test_the_plot_can_be_named_or_turned_off():
    assert parse_arguments(["--plot", "docs/img/strategy-kuhn.png"]).plot == Path("docs/img/strategy-kuhn.png")
    assert parse_arguments(["--plot", "none"]).plot is None


def test_tictactoe_has_no_exploitability_curve():
    assert parse_arguments(["--game", "tictactoe"]).plot is None


def test_the_games_defaults_are_filled_in():
    kuhn, leduc = parse_arguments([]), parse_arguments(["--game", "leduc_holdem"])
    assert (kuhn.groups, leduc.groups) == (256, 64)
    assert kuhn.name == "bench-strategy-kuhn_poker" and kuhn.state_baseline and kuhn.train_temperature == 5.0


def test_an_impossible_budget_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit):
        parse_arguments(["--steps", "0", "--lagged", "1"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--steps must be at least 1, got 0" in error and "--lagged must be in [0, 1), got 1.0" in error


def test_the_prompt_variant_reaches_training_and_every_policy_the_bench_scores(capsys, monkeypatch):
    from bench import head_to_head
    from bench.strategy import build_config

    args = parse_arguments(["--game", "leduc_holdem", "--prompt", "Private-Last"])
    assert args.prompt == "private-last" and build_config(args)["rollout"]["prompt"] == "private-last"
    assert parse_arguments([]).prompt == "default"
    specs = []
    monkeypatch.setattr(head_to_head, "make_policy", lambda spec: specs.append(spec) or type("P", (), {})())
    head_to_head.choice_policy("/runs/x/final", 5.0, "trained", prompt=args.prompt)
    head_to_head.choice_policy(None, 5.0, "base", prompt="default")
    assert specs == ["hf:local+/runs/x/final,engine=hf,mode=choice,obs=state,prompt=private-last,temperature=5",
                     "local,engine=hf,mode=choice,obs=state,temperature=5"]
    with pytest.raises(SystemExit):
        parse_arguments(["--prompt", "last"])
    assert "--prompt: prompt must be default, no-legal-moves, san or private-last" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_arguments(["--prompt", "no-legal-moves+private-last"])
    assert "this bench plays in choice mode, which scores the listed moves" in capsys.readouterr().err
    with pytest.raises(TypeError):  # every policy the bench scores names its prompt (no silent default)
        head_to_head.choice_policy(None, 5.0, "base")


def test_the_state_weighting_reaches_the_trainer(capsys):
    from bench.strategy import build_config

    assert build_config(parse_arguments([]))["algorithm"]["state_weighting"] == "visits"
    args = parse_arguments(["--state-weighting", "per_state"])
    assert build_config(args)["algorithm"]["state_weighting"] == "per_state"
    with pytest.raises(SystemExit):
        parse_arguments(["--state-weighting", "per_card"])
    assert "--state-weighting: invalid choice: 'per_card'" in capsys.readouterr().err


def test_leducs_recipe_is_its_default_and_each_part_can_be_turned_off():
    """Leduc trains with the card restated last, the private contrast and every information set
    alike, without the entropy bonus; Kuhn and Tic-Tac-Toe keep what their figures were measured with."""
    from bench.strategy import build_config, defaults

    leduc = parse_arguments(["--game", "leduc_holdem"])
    assert (leduc.prompt, leduc.private_contrast, leduc.state_weighting, leduc.entropy_coef) == ("private-last", 1.0, "per_state", 0.0)
    config = build_config(leduc)
    assert config["rollout"]["prompt"] == "private-last"
    assert (config["algorithm"]["private_contrast"], config["algorithm"]["state_weighting"], config["algorithm"]["entropy_coef"]) == (1.0, "per_state", 0.0)
    for game in ("kuhn_poker", "tictactoe"):
        other = parse_arguments(["--game", game])
        assert (other.prompt, other.private_contrast, other.state_weighting) == ("default", 0.0, "visits")
    assert parse_arguments([]).entropy_coef == 0.02
    plain = parse_arguments(["--game", "leduc_holdem", "--prompt", "default", "--private-contrast", "0", "--state-weighting", "visits",
                             "--entropy-coef", "0.02"])
    assert (plain.prompt, plain.private_contrast, plain.state_weighting, plain.entropy_coef) == ("default", 0.0, "visits", 0.02)
    for game in ("kuhn_poker", "leduc_holdem", "tictactoe"):  # the other benches' settings are this command line's
        assert build_config(defaults(game)) == build_config(parse_arguments(["--game", game]))


def test_the_minibatch_defaults_to_the_whole_step_and_bounds_the_micro_batch(capsys):
    """One optimizer step per step unless told otherwise; a smaller minibatch also caps a forward's
    decisions, which the trainer's config requires (micro_batch_size <= minibatch_size)."""
    from bench.strategy import WHOLE_STEP, build_config

    whole = build_config(parse_arguments(["--game", "leduc_holdem"]))["algorithm"]
    assert (whole["minibatch_size"], whole["micro_batch_size"]) == (WHOLE_STEP, 32)
    small = build_config(parse_arguments(["--game", "leduc_holdem", "--minibatch", "16"]))["algorithm"]
    assert (small["minibatch_size"], small["micro_batch_size"]) == (16, 16)
    with pytest.raises(SystemExit):
        parse_arguments(["--minibatch", "0"])
    assert "--minibatch must be at least 1, got 0" in capsys.readouterr().err
