"""Settings from the runner's environment: INPUT_* with hyphens (or underscores), empty = unset,
one-line errors naming the input and what it accepts, paths kept inside the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_replay_action.errors import EXIT_USAGE, ConfigError
from mcp_replay_action.github.settings import (
    INPUT_DEFAULTS,
    RunContext,
    Settings,
    clean_comment,
    clean_comment_id,
    read_input,
    scrub,
)
from mcp_replay_action.options import (
    clean_bool,
    clean_cassettes,
    clean_env,
    clean_headers,
    clean_list,
    clean_min_grade,
    clean_path,
    clean_server,
    clean_timeout,
)

pytestmark = pytest.mark.unit


def env_for(workspace: Path, **inputs: str) -> dict[str, str]:
    env = {"GITHUB_WORKSPACE": str(workspace)}
    for name, value in inputs.items():
        env["INPUT_" + name.upper().replace("_", "-")] = value
    return env


def test_defaults_with_only_a_server(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path, server="python -m my_server"))
    assert settings.server == ("python", "-m", "my_server")
    assert settings.cassettes == ("cassettes/**/*.jsonl", "cassettes/**/*.json")
    assert settings.min_grade is None
    assert settings.fail_on == "breaking"
    assert settings.comment == "auto"
    assert settings.comment_id == "default"
    assert settings.working_directory == tmp_path.resolve()
    assert settings.report_file == tmp_path.resolve() / "mcp-replay-report.json"
    assert settings.timeout == 30.0
    assert settings.annotations and settings.job_summary


def test_hyphenated_and_underscored_names_are_both_read(tmp_path: Path) -> None:
    hyphen = Settings.from_env({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SERVER": "x", "INPUT_MIN-GRADE": "b"})
    underscore = Settings.from_env({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SERVER": "x", "INPUT_MIN_GRADE": "C"})
    assert hyphen.min_grade == "B"
    assert underscore.min_grade == "C"


def test_empty_inputs_mean_unset_as_act_passes_them(tmp_path: Path) -> None:
    env = {f"INPUT_{name.upper()}": "" for name in INPUT_DEFAULTS}
    env.update({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SERVER": "node x.js"})
    settings = Settings.from_env(env)
    assert settings.mode == "replay"
    assert settings.comment == "auto"
    assert settings.fail_on == "breaking"
    assert settings.cassettes == ("cassettes/**/*.jsonl", "cassettes/**/*.json")


@pytest.mark.parametrize(
    ("inputs", "fail_on"),
    [
        ({}, "breaking"),
        ({"fail_on": "none"}, "none"),
        ({"fail_on": "ANY"}, "any"),
        ({"fail_on_regression": "true"}, "any"),
        ({"fail_on_regression": "false"}, "none"),
        ({"fail_on": "none", "fail_on_regression": "true"}, "none"),
    ],
)
def test_fail_on_and_its_older_spelling(tmp_path: Path, inputs: dict[str, str], fail_on: str) -> None:
    assert Settings.from_env(env_for(tmp_path, server="x", **inputs)).fail_on == fail_on


def test_token_from_input_or_environment_and_never_in_repr(tmp_path: Path) -> None:
    env = env_for(tmp_path, server="x", github_token="ghs_secret123")
    settings = Settings.from_env(env)
    assert settings.github_token == "ghs_secret123"
    assert "ghs_secret123" not in repr(settings)
    env2 = env_for(tmp_path, server="x") | {"GITHUB_TOKEN": "tok2"}
    assert Settings.from_env(env2).github_token == "tok2"


@pytest.mark.parametrize(
    ("inputs", "needle"),
    [
        ({"server": "x", "min_grade": "Z"}, "input min-grade: 'Z' is not valid; expected one of A, B, C, D, F"),
        ({"server": "x", "fail_on_regression": "maybe"}, "input fail-on-regression: 'maybe'"),
        ({"server": "x", "fail_on": "breaking-ish"}, "input fail-on: 'breaking-ish' is not valid; expected one of"),
        ({"server": "x", "comment": "sometimes"}, "expected one of auto, always, on-failure, off"),
        ({"server": "x", "timeout": "-1"}, "input timeout"),
        ({"server": "x", "timeout": "soon"}, "input timeout"),
        ({"server": "x", "mode": "refresh-all"}, "input mode"),
        ({"server": "x", "comment_id": "a b"}, "input comment-id"),
        (
            {"server": "x", "report_file": "../out.json"},
            "input report-file: '../out.json' is not valid; expected a path",
        ),
        ({"server": "x", "working_directory": "/etc"}, "input working-directory"),
        ({"server": "x", "cassettes": "/etc/*.jsonl"}, "input cassettes"),
        ({"server": "x", "cassettes": "../other/*.jsonl"}, "input cassettes"),
        ({"server": "'unclosed"}, "input server"),
        ({}, "input server: missing"),
        ({"url": "ftp://x"}, "input url"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_input(tmp_path: Path, inputs: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        Settings.from_env(env_for(tmp_path, **inputs))
    message = info.value.one_line()
    assert needle in message
    assert "\n" not in message
    assert info.value.exit_code == EXIT_USAGE


def test_secret_values_never_echoed_in_errors() -> None:
    with pytest.raises(ConfigError) as info:
        clean_env("GOOD=1\nnot a pair sk-live-secret")
    assert "sk-live-secret" not in str(info.value)
    assert "line 2" in str(info.value)
    with pytest.raises(ConfigError) as info:
        clean_headers("Authorization Bearer sk-live-secret")
    assert "sk-live-secret" not in str(info.value)


def test_clean_functions() -> None:
    assert clean_env("A=1\n# comment\n\nB=x=y\n") == (("A", "1"), ("B", "x=y"))
    assert clean_headers("Authorization: Bearer t\nX-Api: 1") == (("Authorization", "Bearer t"), ("X-Api", "1"))
    assert clean_list("a, b\nc\n\n") == ("a", "b", "c")
    assert clean_bool("x", "TRUE") is True and clean_bool("x", "off") is False
    assert clean_min_grade("a") == "A" and clean_min_grade("") is None
    assert clean_comment("false") == "off"
    assert clean_comment_id("") == "default" and clean_comment_id("py-3.12") == "py-3.12"
    assert clean_timeout("2.5") == 2.5
    assert clean_server('node "dist/my server.js"') == ("node", "dist/my server.js")
    assert clean_cassettes("a/*.jsonl\n!a/skip.jsonl\n") == ("a/*.jsonl", "!a/skip.jsonl")


def test_comment_id_cannot_close_the_html_marker() -> None:
    for bad in ("x-->", "<!--", "a\nb", "x" * 65):
        with pytest.raises(ConfigError):
            clean_comment_id(bad)


def test_paths_stay_inside_the_workspace_even_through_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out").symlink_to(tmp_path)
    assert clean_path("report-file", "sub/r.json", ws.resolve()) == ws.resolve() / "sub" / "r.json"
    with pytest.raises(ConfigError, match="inside the workspace"):
        clean_path("report-file", "out/r.json", ws.resolve())


def test_read_input_prefers_a_non_empty_spelling() -> None:
    env = {"INPUT_MIN-GRADE": "", "INPUT_MIN_GRADE": "B"}
    assert read_input(env, "min-grade") == "B"
    assert read_input({}, "timeout") == "30"


def test_run_context_and_scrub() -> None:
    env = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_RUN_ID": "42",
        "RUNNER_DEBUG": "1",
        "GITHUB_TOKEN": "t",
        "INPUT_GITHUB-TOKEN": "t",
        "INPUT_ENV": "K=secret",
        "GITHUB_OUTPUT": "/x",
        "PATH": "/bin",
    }
    ctx = RunContext.from_env(env)
    assert ctx.run_url == "https://github.com/octo/demo/actions/runs/42"
    assert ctx.debug and ctx.output_path == "/x"
    scrub(env)
    assert env == {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_RUN_ID": "42",
        "RUNNER_DEBUG": "1",
        "PATH": "/bin",
    }


def test_max_growth_and_max_slowdown_are_factors_above_one(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path, server="x", max_growth="3", max_slowdown="2.5"))
    assert (settings.max_growth, settings.max_slowdown) == (3.0, 2.5)
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "c.jsonl").write_text("")
    assert (settings.plan().max_growth, settings.plan().max_slowdown) == (3.0, 2.5)
    assert Settings.from_env(env_for(tmp_path, server="x")).max_growth is None
    for name in ("max_growth", "max_slowdown"):
        with pytest.raises(ConfigError) as info:
            Settings.from_env(env_for(tmp_path, server="x", **{name: "1"}))
        assert name.replace("_", "-") in str(info.value) and "a factor above 1" in str(info.value)
