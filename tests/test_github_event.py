"""Event payloads: pull_request (same repo and fork), push, workflow_dispatch, workflow_run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from github_events import fork_pull_request, pull_request, push, workflow_dispatch, workflow_run
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.event import event_from_payload, read_event

pytestmark = pytest.mark.unit


def test_pull_request_same_repository() -> None:
    event = event_from_payload("pull_request", pull_request(number=7, sha="a" * 40))
    assert event.is_pull_request
    assert event.pr_number == 7
    assert event.head_sha == "a" * 40
    assert event.head_ref == "feature"
    assert not event.is_fork


def test_fork_pull_request() -> None:
    event = event_from_payload("pull_request", fork_pull_request(number=8, sha="b" * 40))
    assert event.pr_number == 8
    assert event.is_fork
    assert event.head_repository == "stranger/demo"


def test_pull_request_whose_head_repository_was_deleted_counts_as_fork() -> None:
    payload = pull_request(number=9, sha="c" * 40)
    payload["pull_request"]["head"]["repo"] = None
    assert event_from_payload("pull_request", payload).is_fork


def test_push_and_dispatch_have_no_pull_request() -> None:
    ev = event_from_payload("push", push(sha="d" * 40))
    assert not ev.is_pull_request and ev.head_sha == "d" * 40 and ev.head_ref == "main"
    ev = event_from_payload("workflow_dispatch", workflow_dispatch(), sha="e" * 40)
    assert ev.pr_number is None and ev.head_sha == "e" * 40


def test_workflow_run_from_a_fork() -> None:
    ev = event_from_payload("workflow_run", workflow_run(run_id=99, sha="f" * 40, fork=True))
    assert ev.workflow_run is not None
    assert ev.workflow_run.id == 99
    assert ev.workflow_run.event == "pull_request"
    assert ev.is_fork and not ev.is_pull_request


def test_read_event_from_file(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(pull_request(number=3, sha="1" * 40)))
    ev = read_event({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path)})
    assert ev.pr_number == 3
    assert read_event({}).name == ""


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_bad_payload_is_a_config_error_naming_the_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "event.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="event.json"):
        read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(path)})
    with pytest.raises(ConfigError, match="cannot read"):
        read_event({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})
