"""The action's entrypoint: the story of one run.

1. Read the settings (``INPUT_*``) and the event; keep tokens and inputs away from the code under
   test by scrubbing them from the environment it inherits.
2. Run ``install`` in the working directory.
3. Replay every cassette the globs match, each against a fresh server.
4. Report: the JSON report file, annotations on the cassette lines, the job summary, the sticky
   PR comment (or the comment file, for pull requests from forks), the step outputs.
5. Exit by the gate: 0 passed, 1 failed. A bad input or cassette is one line and exit 2; a server,
   install or GitHub failure, or any error we did not foresee, is one line and exit 3 (and, but
   for GitHub's own, the sticky comment says the run could not complete, so no earlier verdict
   stands).

``mode: post-comment`` instead posts a comment file saved by an earlier run (a ``workflow_run``
job), after verifying it against that run. ``mode: refresh`` re-records what changed and proposes
it as one branch and pull request (``refresh.py``).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import traceback
from collections.abc import MutableMapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from mcp_replay_action.errors import EXIT_GATE, EXIT_INFRA, EXIT_OK, ConfigError, ReplayError, ServerError
from mcp_replay_action.explore.explorer import skipped_lines
from mcp_replay_action.github import comment as sticky
from mcp_replay_action.github import gitdata, isolation, refresh
from mcp_replay_action.github.accept import accept_for, local_command
from mcp_replay_action.github.annotations import annotations_for
from mcp_replay_action.github.change_report import render_change_report
from mcp_replay_action.github.client import GitHubClient, GitHubError
from mcp_replay_action.github.commands import Commands, append_summary, write_outputs
from mcp_replay_action.github.drift import publish_drift
from mcp_replay_action.github.event import Event, read_event, write_refusal
from mcp_replay_action.github.exploration import exploration_block
from mcp_replay_action.github.install import run_install
from mcp_replay_action.github.install_advice import install_advice
from mcp_replay_action.github.settings import RunContext, Settings, scrub
from mcp_replay_action.github.summary import write_failure_summary, write_summary
from mcp_replay_action.github.template import Links, render_comment, render_could_not_run, what_to_do
from mcp_replay_action.github.unwritten import unwritten_advice
from mcp_replay_action.grade.assemble import build_report
from mcp_replay_action.host import inside
from mcp_replay_action.model.results import CassetteResult, Report
from mcp_replay_action.plan import Plan
from mcp_replay_action.redact import Redactor, env_secrets
from mcp_replay_action.replay.engine import Outcome, run
from mcp_replay_action.report import counts_text, public_target
from mcp_replay_action.report import json_report as report_json
from mcp_replay_action.report.sinks import write_files
from mcp_replay_action.scenarios import load_scenarios

if TYPE_CHECKING:
    from mcp_replay_action.report.sarif import Anchor

# Only when the package's metadata is missing (a bare source tree); pyproject.toml says the same.
PROJECT_URL = "https://github.com/mcp-replay/mcp-replay-action"


def calibrate_cassettes(settings: Settings, event: Event, out: Commands) -> int:
    """``mode: calibrate``: learn each cassette's noise from three fresh runs of the server and
    store the rules in its header (a later step commits them, or a refresh proposes them): so
    only where a refresh may write."""
    refresh.check_event(event, "calibrate")
    from mcp_replay_action.replay.calibrate import calibrate

    plan = settings.plan()
    for path in plan.paths:
        result = calibrate(replace(plan, paths=(path,)))
        out.log(f"{plan.shown(path)}: {len(result.rules)} noise rule(s) from {result.runs} runs")
    return EXIT_OK


def main(environ: MutableMapping[str, str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the action with ``environ`` (the process environment by default); return the exit code."""
    environ = os.environ if environ is None else environ
    if stdout is None and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")  # a log line must never crash the run
    context = RunContext.from_env(environ)
    out = Commands(stdout, debug=context.debug)
    settings: Settings | None = None
    event: Event | None = None
    try:
        settings = Settings.from_env(environ)
        event = read_event(environ)
        trusted = isolation.runner_files(environ)
        scrub(environ)
        out.hide(env_secrets(dict(settings.env), settings.env_public))
        # The code under test may plant links in the workspace: none is followed from here on
        # (host/inside.py), and as root what we write there is the workspace owner's.
        inside.confine(settings.workspace)
        out.debug(f"event {event.name}: pr={event.pr_number} sha={event.head_sha[:12]} fork={event.is_fork}")
        with isolation.children_isolated(settings, environ, trusted, out):
            return run_mode(settings, context, event, out)
    except ReplayError as exc:
        if isinstance(exc, ServerError) and exc.stderr_tail:
            with out.group("Server stderr (last lines)"), out.untrusted():
                out.log(exc.stderr_tail)
        advice = install_advice(exc, settings.install if settings else "")  # the usual first-run miss
        message = f"{exc.one_line()} {advice}".strip()
        out.error(message, title="mcp-replay")
        write_failure_summary(context.summary_path, message)
        if exc.exit_code == EXIT_INFRA and not isinstance(exc, GitHubError) and settings and event:
            comment_could_not_run(settings, context, event, exc.one_line(), out, advice=advice)
        return exc.exit_code
    except Exception as exc:  # a bug of ours: still one line and an exit code, details in a group
        with out.group("Internal error (please report it)"), out.untrusted():
            out.log(traceback.format_exc())
        message = f"internal error: {type(exc).__name__}: {exc}"
        out.error(message, title="mcp-replay")
        write_failure_summary(context.summary_path, message)
        if settings and event:
            # The run did not complete: no earlier verdict ("passed") may stand on the pull request.
            try:
                comment_could_not_run(settings, context, event, message, out)
            except Exception as again:  # noqa: BLE001 - the run has failed already; say so, once
                out.warning(f"Cannot write the PR comment: {type(again).__name__}", title="mcp-replay comment")
        return EXIT_INFRA


def run_mode(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """The work of the ``mode`` input."""
    if settings.mode == "post-comment":
        return post_saved_comment(settings, context, event, out)
    if settings.mode == "refresh":
        return refresh_and_propose(settings, context, event, out)
    if settings.mode == "merge":
        return merge_and_report(settings, context, event, out)
    if settings.mode == "calibrate":
        return calibrate_cassettes(settings, event, out)
    return replay_and_report(settings, context, event, out)


def replay_and_report(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """Install, replay, report, gate."""
    if settings.install:
        run_install(settings.install, cwd=settings.working_directory, env=dict(settings.env), out=out)
    if settings.baseline:
        return compare_with_baseline(settings, context, event, out)
    plan = settings.plan()
    out.info(f"Replaying {len(plan.paths)} cassette(s) against {public_target(plan.target.describe())}")
    outcome = run(plan)
    warn_unused_rules(outcome, out)
    warn_cut_short(plan, out)
    return report_everywhere(settings, context, event, outcome.report, out, outcome.exit_code)


def compare_with_baseline(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """Input ``baseline``: the base commit checked out beside the workspace, installed, explored
    and replayed against this build (``baseline.py``); the cassettes the repository has, if any,
    replayed as usual; one report, one comment, one gate."""
    import tempfile

    from mcp_replay_action.explore.builds import compare_builds
    from mcp_replay_action.github import baseline
    from mcp_replay_action.host.discovery import find_cassettes

    commit = baseline.base_commit(settings.baseline, event, settings.workspace)
    shown = f"baseline {commit[:12]}"
    out.info(f"Comparing with the base build at {commit[:12]} ({settings.baseline})")
    results: list[CassetteResult] = []
    try:
        find_cassettes(settings.cassettes, settings.workspace, confine=True)
    except ConfigError:
        plan = None  # no cassettes yet: the baseline is the whole check
    else:
        plan = settings.plan()
        out.info(f"Replaying {len(plan.paths)} cassette(s) against {public_target(plan.target.describe())}")
        outcome = run(plan)
        warn_unused_rules(outcome, out)
        results.extend(outcome.report.cassettes)
    with baseline.checked_out(settings.workspace, commit) as tree, tempfile.TemporaryDirectory() as scratch:
        base_cwd = tree / settings.working_directory.relative_to(settings.workspace)
        if settings.install:
            try:
                run_install(settings.install, cwd=base_cwd, env=dict(settings.env), out=out)
            except ReplayError as exc:
                raise ServerError(f"the base build ({commit[:12]}) could not be installed: {exc.one_line()}") from None
        compared = compare_builds(
            settings.values(),
            {"cwd": base_cwd},
            {},
            str(Path(scratch) / "explored-base.jsonl"),
            root=str(settings.workspace),
        )
    explored = compared.explored
    out.info(f"Base: {explored.line}")
    for line in skipped_lines(explored.skipped):
        out.info(f"skipped {line}")
    # There is no committed file to point at: the results are named by the base commit.
    results.extend(replace(r, path=shown) for r in compared.outcome.report.cassettes)
    gate = plan.gate if plan is not None else settings.gate_policy()
    report = build_report(results, target=compared.outcome.report.target, policy=gate)
    block = exploration_block(explored, commit, report)
    return report_everywhere(
        settings, context, event, report, out, EXIT_OK if report.gate.passed else EXIT_GATE, explored=block
    )


def sarif_anchor(settings: Settings, context: RunContext, report: Report, out: Commands) -> Anchor | None:
    """Where the SARIF log points the findings of an exploration no file holds (a ``baseline``'s):
    the workflow line that asks for it (``workflow_line.py``). Without one they are left out of
    the log, and a warning says so."""
    from mcp_replay_action.github.workflow_line import baseline_anchor

    files = repository_files(settings, report)
    if all(c.path in files for c in report.cassettes):
        return None
    anchor = baseline_anchor(context, settings.workspace)
    if anchor is None:
        out.warning(
            "sarif-file: the baseline's findings are in no file of the repository, and the running workflow's "
            "file (GITHUB_WORKFLOW_REF) is not in the workspace to point them at: they are left out of the SARIF log",
            title="mcp-replay",
        )
    return anchor


def warn_unused_rules(outcome: Outcome, out: Commands) -> None:
    """A warning annotation for every ignore rule that matched nothing in the run (a typo
    ignores nothing, silently, otherwise), named by its input as the workflow spells it."""
    from mcp_replay_action.options import OPTIONS

    inputs = {flag: row.input for row in OPTIONS if row.input for flag in row.flags}
    for flag, rule in outcome.unused_rules:
        out.warning(f"input {inputs.get(flag, flag)}: {rule!r} matched nothing in this run", title="mcp-replay")


def warn_cut_short(plan: Plan, out: Commands) -> None:
    """A warning annotation on each cassette whose last line was left out, cut short (a
    recording killed while it wrote it)."""
    from mcp_replay_action.cassette import cut_short_line, cut_short_note

    for path in plan.paths:
        if line := cut_short_line(path):
            out.warning(cut_short_note(plan.shown(path), line), title="mcp-replay")


def merge_and_report(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """``mode: merge``: the shards' JSON reports (``shard: i/n`` jobs) combined into one report,
    then reported and gated (by this step's ``fail-on``/``min-grade``/``min-coverage``) exactly as one replay of
    every cassette would be."""
    from mcp_replay_action.host.discovery import find_cassettes
    from mcp_replay_action.host.files import read_json_object
    from mcp_replay_action.replay.shard import merge

    paths = find_cassettes(settings.reports, settings.workspace, confine=True, what="input reports")
    out.info(f"Merging {len(paths)} shard report(s)")
    names = [settings.relative(p) for p in paths]
    shards = [
        report_json.from_dict(read_json_object(p, "report", 256 * 1024 * 1024), where=name)
        for p, name in zip(paths, names, strict=True)
    ]
    # The merge job's own gate inputs decide: the shards only report (their fail-on: none).
    report = merge(shards, names, settings.gate_policy())
    return report_everywhere(settings, context, event, report, out, EXIT_OK if report.gate.passed else EXIT_GATE)


def report_everywhere(
    settings: Settings,
    context: RunContext,
    event: Event,
    report: Report,
    out: Commands,
    exit_code: int,
    *,
    explored: str = "",
) -> int:
    """Every sink of a finished report: files, log, annotations, summary, comment, outputs.
    ``explored``: what a baseline's exploration did, for the comment (safe Markdown)."""
    write_files(
        report,
        json_file=settings.report_file,
        markdown_file=settings.markdown_file,
        junit_file=settings.junit_file,
        badge_file=settings.badge_file,
        sarif_file=settings.sarif_file,
        root=settings.workspace,
        sarif_anchor=sarif_anchor(settings, context, report, out) if settings.sarif_file else None,
    )
    out.info(f"Grade {report.score.grade} ({report.score.score:.1f}/100): {counts_text(report)}")
    if settings.annotations:
        for annotation in annotations_for(report, files=repository_files(settings, report)):
            out.annotate(annotation)
    if not report.gate.passed:
        out.error(f"mcp-replay gate failed: {'; '.join(report.gate.reasons)}", title="mcp-replay gate")
    if settings.job_summary:
        accept = comment_links(settings, context, event).accept
        lead = what_to_do(accept, failed=not report.gate.passed, accepted=report.gate.accepted)
        write_summary(context.summary_path, report, lead=lead)
    comment = publish_comment(settings, context, event, report, out, explored=explored)
    drift_url = watch_drift(settings, context, event, report, out) if event.name == "schedule" else ""

    write_outputs(
        context.output_path,
        {
            "grade": report.score.grade,
            "score": f"{report.score.score:.1f}",
            "passed": str(report.passed),
            "failed": str(report.failed),
            "missing": str(report.missing),
            "gate": "passed" if report.gate.passed else "failed",
            "report": settings.relative(settings.report_file),
            "markdown": settings.relative(settings.markdown_file) if settings.markdown_file else "",
            "junit": settings.relative(settings.junit_file) if settings.junit_file else "",
            "badge": settings.relative(settings.badge_file) if settings.badge_file else "",
            "sarif": settings.relative(settings.sarif_file) if settings.sarif_file else "",
            "comment-url": comment.url,
            "comment-file": comment.file,
            "comment-written": str(comment.written).lower(),
            "drift-issue-url": drift_url,
        },
    )
    return exit_code


def watch_drift(settings: Settings, context: RunContext, event: Event, report: Report, out: Commands) -> str:
    """On ``schedule``: open, update or close the drift issue; its URL (empty when none). The
    replay's verdict stands whatever happens here: a failure to write is a warning."""
    refusal = write_refusal(event)  # the allowlist refresh and calibrate write under
    if refusal:
        out.warning(f"The drift issue is not written on {event.name}: {refusal}", title="mcp-replay drift")
        return ""
    if not settings.github_token:
        out.warning("No github-token: the drift issue cannot be written.", title="mcp-replay drift")
        return ""
    gh = GitHubClient(context.api_url, settings.github_token, log=out.debug)
    try:
        opened = publish_drift(
            gh,
            context.repository or event.repository,
            report,
            gate_passed=report.gate.passed,
            comment_id=settings.comment_id,
            links=comment_links(settings, context, event),
            labels=settings.drift_labels,
        )
    except GitHubError as exc:
        out.warning(f"Cannot write the drift issue: {exc.one_line()}", title="mcp-replay drift")
        return ""
    if opened is None:
        out.debug("replay clean and no drift issue open: nothing to do")
        return ""
    out.info(f"Drift issue #{opened.number} {opened.action}: {opened.url}")
    return opened.url


def refresh_and_propose(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """``mode: refresh``: re-record, and when a cassette changed, commit it on the refresh branch
    and open or update the pull request; the change report goes to its body and the job summary."""
    refresh.check_event(event)
    if settings.install:
        run_install(settings.install, cwd=settings.working_directory, env=dict(settings.env), out=out)
    plan = settings.plan(mode="refresh")
    before = {settings.relative(p): refresh.cassette_bytes(p) for p in plan.paths}
    out.info(f"Refreshing {len(plan.paths)} cassette(s) against {public_target(plan.target.describe())}")
    from_scenarios: dict[str, str] = {}
    if settings.scenarios is not None:
        scenarios = load_scenarios(settings.scenarios, environ={**os.environ, **dict(settings.env)})
        from_scenarios = refresh.scenario_cassettes(list(plan.paths), scenarios)
    # An explored cassette is explored again (a tool added since is called too), not replayed.
    explored = [p for p in refresh.explored_cassettes(list(plan.paths)) if p not in from_scenarios]
    outcome = run(replace(plan, paths=tuple(p for p in plan.paths if p not in from_scenarios and p not in explored)))
    warn_unused_rules(outcome, out)
    report = outcome.report
    rows = [(u.path, u.updated, u.kept) for u in outcome.updates]
    if from_scenarios or explored:
        again = []
        if from_scenarios:
            out.info(f"Re-recording {len(from_scenarios)} cassette(s) from their scenarios")
            again += [refresh.rerecord(p, scenarios, name, plan.compare) for p, name in from_scenarios.items()]
        if explored:
            out.info(f"Exploring the server again for {len(explored)} explored cassette(s)")
            again += [refresh.reexplore(p, plan) for p in explored]
        results = [*report.cassettes, *(replace(r.result, path=plan.shown(r.result.path)) for r in again)]
        report = build_report(results, target=report.target, policy=plan.gate)
        rows += [(plan.shown(r.path), r.changed, 0) for r in again]
    write_files(report, json_file=settings.report_file)
    changed = refresh.changed_files(before, settings.workspace)
    rewritten = refresh.rewritten_for(rows, changed)
    outputs = {
        "changed": "true" if changed else "false",
        "changed-cassettes": "\n".join(sorted(changed)),
        "refresh-branch": "",
        "refresh-commit": "",
        "refresh-pr-url": "",
        "report": settings.relative(settings.report_file),
    }
    repo = context.repository or event.repository
    gh = GitHubClient(context.api_url, settings.github_token, log=out.debug) if settings.github_token else None
    if not changed:
        base, failing = event.head_ref, []
        try:  # which pull requests into this branch fail: worth a warning, never the run's outcome
            base = refresh.base_branch(gh, repo, event) if gh and repo else base
            failing = refresh.failing_pulls(gh, repo, base) if gh and repo else []
        except GitHubError as exc:
            out.warning(f"Cannot list the failing pull requests: {exc.one_line()}", title="mcp-replay refresh")
        base = base or "the branch it ran on"
        out.info(f"No cassette changed on {base}: nothing to propose.")
        if failing:
            names = ", ".join(f"#{p.number} ({p.head_ref})" for p in failing)
            out.warning(
                f"{len(failing)} open pull request(s) into {base} fail the replay: {names}. Their changes are on "
                "their branches: run the refresh with 'Use workflow from' set to the pull request's branch.",
                title="mcp-replay refresh",
            )
        if settings.job_summary:
            append_summary(context.summary_path, refresh.nothing_changed(base, failing))
        write_outputs(context.output_path, outputs)
        return EXIT_OK
    body = render_change_report(report, rewritten, links=comment_links(settings, context, event))
    if settings.job_summary:
        append_summary(context.summary_path, body)
    for rel in sorted(changed):
        out.info(f"changed: {rel}")
    if gh is None:
        raise ConfigError(
            "input github-token: missing; refresh needs a token with contents: write and pull-requests: write"
        )
    author = gitdata.parse_person(settings.commit_author) if settings.commit_author else gitdata.BOT
    base = refresh.base_branch(gh, repo, event)
    proposal = refresh.propose(
        gh,
        repo,
        parent=event.head_sha or context.sha,
        base=base,
        files=changed,
        branch=refresh.branch_for(settings.refresh_branch, base),
        message=settings.commit_message,
        author=author,
        title=settings.pr_title,
        body=body,
        labels=settings.pr_labels,
        draft=settings.pr_draft,
    )
    out.info(
        f"Branch {proposal.branch} {proposal.branch_action} at {proposal.commit[:12]}; "
        f"pull request #{proposal.pull.number} {proposal.pull.action}: {proposal.pull.url}"
    )
    write_outputs(
        context.output_path,
        {
            **outputs,
            "refresh-branch": proposal.branch,
            "refresh-commit": proposal.commit,
            "refresh-pr-url": proposal.pull.url,
        },
    )
    return EXIT_OK


@dataclass(frozen=True)
class CommentOutcome:
    """What became of the sticky comment: its URL when posted, and the comment file only when the
    comment could not be posted and was saved for a ``post-comment`` job instead."""

    url: str = ""
    file: str = ""

    @property
    def written(self) -> bool:
        return bool(self.file)


def wants_comment(settings: Settings, event: Event, gate_passed: bool) -> str:
    """How the ``comment`` input applies to this run: ``post`` (create or update), ``update``
    (only refresh an existing comment), ``find`` (look for the open PR of this commit, then post)
    or ``skip``.

    - ``auto``: on pull request events; nothing elsewhere.
    - ``always``: on pull request events, and on any other event (push, workflow_dispatch,
      schedule, ...) on the open pull request whose head is this commit, when there is one.
    - ``on-failure``: on pull request events when the gate fails; a passing run only updates an
      earlier comment (so it stops saying "failing"), and creates none.
    - ``off``: never.
    """
    if settings.comment == "off":
        return "skip"
    if not event.is_pull_request:
        return "find" if settings.comment == "always" else "skip"
    if settings.comment == "on-failure" and gate_passed:
        # A comment that said "failing" must not go on saying so once the PR is fixed.
        return "update"
    return "post"


def pull_request_of_commit(gh: GitHubClient, repo: str, sha: str) -> int | None:
    """The number of the open pull request into ``repo`` whose head is ``sha`` (the lowest number
    when several are), or None."""
    pulls = gh.paginate(f"/repos/{repo}/pulls", {"state": "open", "per_page": 100}, max_pages=10)
    numbers = [
        int(pull["number"])
        for pull in pulls
        if isinstance(pull, dict) and isinstance(pull.get("head"), dict) and pull["head"].get("sha") == sha
    ]
    return min(numbers) if numbers else None


def publish_comment(
    settings: Settings, context: RunContext, event: Event, report: Report, out: Commands, *, explored: str = ""
) -> CommentOutcome:
    """Post or refresh the sticky comment. When it cannot be posted (no token, a read-only token
    on a pull request from a fork, an API error), save it to the comment file for a
    ``post-comment`` job instead; only then is the comment file an output."""
    how = wants_comment(settings, event, report.gate.passed)
    repo = context.repository or event.repository
    if how == "find" and settings.github_token and repo and (event.head_sha or context.sha):
        sha = event.head_sha or context.sha
        try:
            number = pull_request_of_commit(
                GitHubClient(context.api_url, settings.github_token, log=out.debug), repo, sha
            )
        except GitHubError as exc:
            out.warning(f"Cannot look up the pull request of {sha[:12]}: {exc.one_line()}", title="mcp-replay comment")
            return CommentOutcome()
        if number is None:
            out.info(f"comment: always, but no open pull request has {sha[:12]} as its head: no comment")
            return CommentOutcome()
        event = replace(event, pr_number=number, head_sha=sha)
        how = "post"
    if how in ("skip", "find") or event.pr_number is None:
        out.debug(f"no PR comment (comment: {settings.comment}, event: {event.name or 'none'})")
        return CommentOutcome()
    mark = sticky.marker(settings.comment_id)
    links = comment_links(settings, context, event, report)
    body = render_comment(report, marker=mark, comment_id=settings.comment_id, links=links, explored=explored)
    docs = docs_url(context)

    def save(exc: GitHubError | None) -> CommentOutcome:
        saved = sticky.SavedComment(
            repository=repo,
            pr_number=event.pr_number or 0,
            head_sha=event.head_sha,
            comment_id=settings.comment_id,
            report=report_json.to_dict(report),  # the trusted job renders it; never our body
            run_id=context.run_id,
        )
        sticky.save_comment_file(settings.comment_file, saved)
        comment_file = settings.relative(settings.comment_file)
        advice = unwritten_advice(exc, fork=event.is_fork, saved_to=comment_file, docs=docs)
        out.warning(advice, title="mcp-replay comment")
        return CommentOutcome(file=comment_file)

    if not settings.github_token:
        return save(None)
    gh = GitHubClient(context.api_url, settings.github_token, log=out.debug)
    # GitHub counts some characters differently; if it refuses the body, the headline still goes.
    fallback = render_comment(report, marker=mark, comment_id=settings.comment_id, links=links, compact=True)
    try:
        posted = sticky.upsert_comment(
            gh,
            repo,
            event.pr_number,
            body,
            settings.comment_id,
            fallback=fallback,
            create=how == "post",
        )
    except GitHubError as exc:
        # The replay result stands; a comment that could not be written is a warning, not a failure.
        return save(exc)
    if posted is None:
        out.debug("gate passed and no earlier comment: nothing to update (comment: on-failure)")
        return CommentOutcome()
    out.info(f"PR comment {posted.action}: {posted.url}")
    return CommentOutcome(url=posted.url)


def comment_could_not_run(
    settings: Settings, context: RunContext, event: Event, reason: str, out: Commands, *, advice: str = ""
) -> None:
    """A pull request run that could not complete (exit 3) says so in the sticky comment, so an
    earlier verdict ("passing") does not stand; ``advice`` (``install_advice``) names the fix when
    the server lacked a dependency. The reason and the advice are redacted like a target; a comment
    that cannot be written is a warning (the run has already failed)."""
    if settings.mode not in ("replay", "merge") or wants_comment(settings, event, False) != "post":
        return
    repo = context.repository or event.repository
    if not (settings.github_token and repo and event.pr_number):
        return
    redactor = Redactor(env_values=env_secrets(dict(settings.env), settings.env_public))
    shown = redactor.apply(public_target(reason))
    mark = sticky.marker(settings.comment_id)
    body = render_could_not_run(
        shown,
        marker=mark,
        comment_id=settings.comment_id,
        links=comment_links(settings, context, event),
        command=local_command(settings, update=False),
        advice=redactor.apply(advice),
    )
    try:
        gh = GitHubClient(context.api_url, settings.github_token, log=out.debug)
        posted = sticky.upsert_comment(gh, repo, event.pr_number, body, settings.comment_id)
    except GitHubError as exc:
        out.warning(
            unwritten_advice(exc, fork=event.is_fork, saved_to="", docs=docs_url(context)), title="mcp-replay comment"
        )
        return
    if posted is not None:
        out.info(f"PR comment {posted.action}: {posted.url}")


def post_saved_comment(settings: Settings, context: RunContext, event: Event, out: Commands) -> int:
    """``mode: post-comment``: post the comment file an earlier (fork) run saved, once the API
    confirms it belongs to the pull request that run was for."""
    saved = sticky.load_comment_file(settings.comment_file)
    if not settings.github_token:
        raise ConfigError("input github-token: missing; post-comment needs a token with pull-requests: write")
    repo = context.repository or event.repository
    gh = GitHubClient(context.api_url, settings.github_token, log=out.debug)
    verdict = sticky.verify_saved_comment(gh, repo, event, saved)
    run_id = str(event.workflow_run.id) if event.workflow_run else ""
    comment_file = settings.relative(settings.comment_file)
    if not verdict.ok:
        out.warning(f"Not posting the saved comment: {verdict.reason}", title="mcp-replay comment")
        write_outputs(
            context.output_path, {"comment-url": "", "comment-file": comment_file, "comment-written": "false"}
        )
        return EXIT_OK
    # The file came from untrusted code: its report is checked against the schema and rendered
    # here, with our template, so nothing it wrote is posted as it wrote it.
    report = report_json.from_dict(saved.report, where=f"{comment_file}: report")
    mark = sticky.marker(saved.comment_id)
    links = replace(
        comment_links(settings, context, event), sha=saved.head_sha, run_url=replace(context, run_id=run_id).run_url
    )
    body = render_comment(report, marker=mark, comment_id=saved.comment_id, links=links)
    fallback = render_comment(report, marker=mark, comment_id=saved.comment_id, links=links, compact=True)
    posted = sticky.upsert_comment(gh, repo, saved.pr_number, body, saved.comment_id, fallback=fallback)
    url = posted.url if posted else ""
    out.info(f"PR comment {posted.action if posted else 'skipped'} on #{saved.pr_number}: {url}")
    write_outputs(context.output_path, {"comment-url": url, "comment-file": comment_file, "comment-written": "false"})
    return EXIT_OK


def comment_links(
    settings: Settings, context: RunContext, event: Event, report: Report | None = None
) -> Links:
    """Where the comment (and the drift issue) link to: the run, the commit's cassette lines (of
    ``report``'s cassettes, those that are files of the repository), and how to accept an
    intended change (the refresh workflow on the head branch, the local command)."""
    return Links(
        server_url=context.server_url,
        repository=context.repository or event.repository,
        sha=event.head_sha,
        run_url=context.run_url,
        accept=accept_for(settings, context, event),
        files=repository_files(settings, report) if report is not None else None,
    )


def repository_files(settings: Settings, report: Report) -> frozenset[str]:
    """The cassettes of ``report`` that are files of the workspace (a baseline's exploration,
    named by its commit, is not)."""
    return frozenset(c.path for c in report.cassettes if (settings.workspace / c.path).is_file())


def docs_url(context: RunContext) -> str:
    """Where the README explains pull requests from forks: in the repository this action was used
    from (``GITHUB_ACTION_REPOSITORY``, else the ``owner/repo`` in ``GITHUB_ACTION_PATH``), else at
    the project URL in the package's metadata (pyproject's ``[project.urls]``)."""
    found = re.search(r"/_actions/([\w.-]+)/([\w.-]+)/", context.action_path.replace("\\", "/"))
    if context.action_repository:
        base = f"{context.server_url}/{context.action_repository}"
    elif found:
        base = f"{context.server_url}/{found.group(1)}/{found.group(2)}"
    else:
        base = project_url()
    return f"{base}#pull-requests-from-forks"


def project_url() -> str:
    """The package's home page, as pyproject.toml declares it."""
    try:
        urls = importlib.metadata.metadata("mcp-replay-action").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a bare source tree
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "homepage":
            return url.strip()
    return PROJECT_URL


if __name__ == "__main__":  # pragma: no cover - python -m mcp_replay_action.github.main
    sys.exit(main())
