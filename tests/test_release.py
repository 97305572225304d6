"""The release path, run for real up to the push: .github/release/publish-image.sh builds the
action's image from the real Dockerfile and pushes it to a real registry (Debian's
docker-registry, listening on 127.0.0.1 only, started and ended by this test), anonymous-pull.py
fetches the pushed manifest by digest with no credentials, and pin-action.sh makes the release
commit in a real git repository whose ``origin`` is a bare repository on disk: ``action.yml`` pins
``docker://REGISTRY/NAME@sha256:...`` and both the version tag and ``v1`` point at that commit.

The push test is opt-in with the other container tests (MCP_REPLAY_CONTAINER_TESTS=1): it builds
the image.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from container_opt_in import container_test
from http_helpers import free_port
from package_index import package_index

pytestmark = pytest.mark.release

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / ".github" / "release"
SCRIPTS = ROOT / "tests" / "container"
VERSION = "1.2.3"
PACKAGE_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real registry on 127.0.0.1 (plain HTTP, no auth), ended by PID."""
    if os.geteuid() != 0:
        pytest.skip("installs docker-registry from Debian and builds with buildah: needs root")
    subprocess.run(["bash", str(SCRIPTS / "install-tools.sh")], check=True, timeout=900)  # docker-registry too
    root = tmp_path_factory.mktemp("registry")
    port = free_port()
    config = root / "config.yml"
    config.write_text(
        f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(["docker-registry", "serve", str(config)], stdout=subprocess.DEVNULL,
                               stderr=open(root / "log", "wb"), stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError((root / "log").read_text(errors="replace")) from None
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def served_digest(registry: str, tag: str) -> str:
    """The digest of the manifest the registry serves for ``octo/mcp-replay-action:TAG`` (one with
    layers)."""
    request = urllib.request.Request(f"http://{registry}/v2/octo/mcp-replay-action/manifests/{tag}", headers={
        "Accept": "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    assert json.loads(body)["layers"], tag
    return "sha256:" + hashlib.sha256(body).hexdigest()


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60, check=True)
    return result.stdout.strip()


def tagged_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A clone on the version tag, as actions/checkout leaves it, with a bare ``origin``."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True, timeout=60)
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=60)
    shutil.copy(ROOT / "action.yml", work / "action.yml")
    git(work, "add", "action.yml")
    git(work, "-c", "user.name=dev", "-c", "user.email=dev@example.invalid", "commit", "-q", "-m", "1.2.3")
    git(work, "tag", f"v{VERSION}")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main", f"refs/tags/v{VERSION}")
    git(work, "checkout", "-q", "--detach", f"v{VERSION}")
    return work, origin


def container_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(SCRIPTS / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(SCRIPTS / "storage.conf"), **extra}  # fmt: skip


@container_test(timeout=2400)
def test_release_pushes_checks_an_anonymous_pull_and_pins_the_digest(registry: str, tmp_path: Path) -> None:
    subprocess.run(["bash", str(SCRIPTS / "install-tools.sh")], check=True, timeout=900)
    subprocess.run(["bash", str(SCRIPTS / "make-base.sh")], check=True, timeout=900, env=container_env())
    dockerfile = tmp_path / "Dockerfile"
    subprocess.run(["bash", "-c", f'source "{SCRIPTS}/env.sh" && buildable_dockerfile "{dockerfile}"'],
                   check=True, timeout=120, env=container_env())  # fmt: skip
    image = f"{registry}/octo/mcp-replay-action"
    ca = "/etc/ssl/certs/ca-certificates.crt"
    build_args = "--isolation chroot --pull=never" + (f" -v {ca}:/host-ca.crt:ro --build-arg PIP_CERT=/host-ca.crt"
                                                      if Path(ca).exists() else "")  # fmt: skip
    env = container_env(ENGINE="podman", PLATFORMS="linux/amd64", PUSH_TLS_VERIFY="false",
                        DOCKERFILE=str(dockerfile), BUILD_ARGS=build_args)  # fmt: skip
    published = subprocess.run(["bash", str(RELEASE / "publish-image.sh"), image, VERSION], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=1800, check=False)  # fmt: skip
    assert published.returncode == 0, published.stderr[-6000:]
    ref = published.stdout.strip().splitlines()[-1]
    assert ref.startswith(f"{image}@sha256:"), published.stdout
    digest = ref.split("@", 1)[1]

    # The registry serves that digest for every tag the release pushed.
    for tag in (VERSION, "1.2", "1"):
        assert served_digest(registry, tag) == digest, tag

    pulled = subprocess.run([sys.executable, str(RELEASE / "anonymous-pull.py"), ref],
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    missing = ref[:-64] + "0" * 64
    refused = subprocess.run([sys.executable, str(RELEASE / "anonymous-pull.py"), missing],
                             capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert refused.returncode == 1 and "make it public" in refused.stderr

    work, origin = tagged_checkout(tmp_path)
    tagged = git(work, "rev-parse", "HEAD")
    pinned = subprocess.run(["bash", str(RELEASE / "pin-action.sh"), ref, VERSION], cwd=work,
                            env={**os.environ, "GITHUB_TOKEN": ""}, capture_output=True, text=True, timeout=120,
                            check=False)  # fmt: skip
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    release_commit = git(origin, "rev-parse", f"v{VERSION}^{{commit}}")
    assert git(origin, "rev-parse", "v1^{commit}") == release_commit
    assert git(origin, "rev-parse", f"{release_commit}^") == tagged
    action = git(origin, "show", f"{release_commit}:action.yml")
    assert f"  image: docker://{ref}\n" in action + "\n"
    assert "image: Dockerfile" not in action
    changed = git(origin, "diff", "--name-only", tagged, release_commit)
    assert changed == "action.yml"
    assert git(origin, "rev-parse", "main") == tagged, "the release moves tags, never the branch"


@container_test(timeout=2400)
def test_release_workflow_through_act_pushes_and_pins_the_pushed_digest(registry: str, tmp_path: Path) -> None:
    """The real release.yml, run by act for a pushed tag (tests/act/release-job.sh): every step but
    QEMU, buildx and the ghcr.io login (skipped under act; they need an engine and ghcr.io), with
    buildah for one platform in place of `docker buildx` for two and the local registry in place
    of ghcr.io; the package and publish jobs too, publishing to a local package index in place of
    PyPI (tagged with the package's own version, which the package job requires)."""
    version = PACKAGE_VERSION
    major, minor = version.split(".")[0], ".".join(version.split(".")[:2])
    subprocess.run(["bash", str(SCRIPTS / "install-tools.sh")], check=True, timeout=900)
    subprocess.run(["bash", str(SCRIPTS / "make-base.sh")], check=True, timeout=900, env=container_env())
    work, origin = tmp_path / "work", tmp_path / "origin.git"
    subprocess.run(["bash", str(ROOT / "tests" / "act" / "copy-tree.sh"), str(ROOT), str(work)], check=True,
                   timeout=300)  # fmt: skip
    git(work, "tag", f"v{version}")
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True, timeout=60)
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "main", f"refs/tags/v{version}")
    git(work, "checkout", "-q", "--detach", f"v{version}")
    tagged = git(work, "rev-parse", "HEAD")
    act = ROOT / ".venv" / "bin" / "act"
    env = {**os.environ, "ACT": str(act) if act.exists() else (shutil.which("act") or "act")}
    with package_index(tmp_path / "index") as (index, packages):
        result = subprocess.run(["bash", str(work / "tests" / "act" / "release-job.sh"), registry, version, index],
                                cwd=work, env=env, capture_output=True, text=True, timeout=2100, check=False,
                                stdin=subprocess.DEVNULL)  # fmt: skip
        published = sorted(p.name for p in packages.iterdir())
    log = result.stdout + result.stderr
    assert result.returncode == 0 and "Job succeeded" in log, log[-10000:]
    # Published after the image was pinned, as the workflow orders it.
    assert published == [f"mcp_replay_action-{version}-py3-none-any.whl", f"mcp_replay_action-{version}.tar.gz"]
    assert log.index("Success - Main Release commit pins the image") < log.index("Uploading distributions to")
    # Skipped under act, as the workflow says; the stand-in act was given for them fails if run.
    assert "ran the never-run stand-in" not in log
    assert "Main docker/setup-qemu-action" not in log and "Main docker/setup-buildx-action" not in log
    pushed = re.search(r"::set-output:: ref=(\S+)", log)
    assert pushed, log[-6000:]
    ref = pushed.group(1)
    image = f"{registry}/octo/mcp-replay-action"
    assert ref.startswith(f"{image}@sha256:"), ref
    digest = ref.split("@", 1)[1]
    assert f"anonymous pull of {ref}: ok" in log

    # The digest the release pinned is the one the registry serves for the version's tags.
    for tag in (version, minor, major):
        assert served_digest(registry, tag) == digest, tag

    # The release commit: action.yml alone changed, pinned to that digest; both tags on it.
    release_commit = git(origin, "rev-parse", f"v{version}^{{commit}}")
    assert release_commit != tagged
    assert git(origin, "rev-parse", f"v{major}^{{commit}}") == release_commit
    assert git(origin, "rev-parse", f"{release_commit}^") == tagged
    assert git(origin, "diff", "--name-only", tagged, release_commit) == "action.yml"
    action = git(origin, "show", f"{release_commit}:action.yml")
    pinned = re.findall(r"^  image: (\S+)$", action, re.M)
    assert pinned == [f"docker://{ref}"], pinned
    assert git(origin, "rev-parse", "main") == tagged, "the release moves tags, never the branch"


def test_pin_action_refuses_a_reference_without_a_digest(tmp_path: Path) -> None:
    work, _ = tagged_checkout(tmp_path)
    result = subprocess.run(["bash", str(RELEASE / "pin-action.sh"), "ghcr.io/octo/x:1.2.3", VERSION], cwd=work,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 2 and "IMAGE@sha256:DIGEST" in result.stderr
    assert "image: Dockerfile" in (work / "action.yml").read_text(encoding="utf-8")
