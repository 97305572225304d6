"""The image and the composite action install the package's dependencies from one lock, uv.lock,
exported with hashes to requirements/image.txt (the Dockerfile) and requirements/action.txt
(composite/action.yml); the release workflow's package tools (build, twine) come from the same lock,
as requirements/release.txt (.github/release/build-package.sh). The exports must say exactly what the lock says, and the lock must agree
with pyproject.toml: a dependency changed in one place only fails here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.release

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = {
    "requirements/image.txt": ["--extra", "image"],
    "requirements/action.txt": [],
    "requirements/release.txt": ["--only-group", "release"],
}


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not found:
        pytest.skip("uv is not installed: pip install -e '.[test]'")
    return found


def export(extra: list[str]) -> str:
    result = subprocess.run(
        [uv(), "export", "--frozen", "--no-dev", "--no-emit-project", "--no-header", "--quiet", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return result.stdout


@pytest.mark.parametrize("path", sorted(EXPORTS))
def test_requirements_export_matches_the_lock(path: str) -> None:
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == export(EXPORTS[path]), (
        f"{path} drifted from uv.lock: uv export --frozen --no-dev --no-emit-project --no-header "
        f"{' '.join(EXPORTS[path])} -o {path}"
    )


@pytest.mark.parametrize("path", sorted(EXPORTS))
def test_every_requirement_is_pinned_with_hashes(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[a-z0-9])", text.strip())
    assert len(entries) >= 10
    for entry in entries:
        assert re.match(r"[a-z0-9._-]+==\S+", entry), entry
        assert "--hash=sha256:" in entry, entry


def test_lock_agrees_with_pyproject() -> None:
    # uv reads package metadata from PyPI (or its cache); the system's CA store serves machines
    # whose TLS goes through a private CA.
    env = {**os.environ, "UV_NATIVE_TLS": "1"}
    result = subprocess.run(
        [uv(), "lock", "--check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_test_extra_pins_the_release_tools_as_the_release_does() -> None:
    # The tests build and check the package with the tools the release uses, at the same versions.
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    release = set(project["dependency-groups"]["release"])
    assert release and release <= set(project["project"]["optional-dependencies"]["test"])
    exported = (ROOT / "requirements" / "release.txt").read_text(encoding="utf-8")
    for pin in release:
        assert re.search(rf"^{re.escape(pin)} \\", exported, re.M), pin
