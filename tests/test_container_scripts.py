"""The container scripts on a machine like GitHub's hosted runner, where the tests run as a
non-root user: with no container tools they must not try apt-get (which fails there with
"Could not open lock file"), and the container tests skip instead of failing the run. With a Docker
engine (the hosted runner's case) env.sh picks docker and nothing is installed at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "container"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root to become another user")
def test_install_tools_as_a_non_root_user_without_an_engine_installs_nothing() -> None:
    # pytest's own temporary directories are private to root: this one the other user can read.
    with tempfile.TemporaryDirectory(prefix="mcp-replay-nonroot-") as name:
        run_as_nobody(Path(name))


def run_as_nobody(tmp_path: Path) -> None:
    # A PATH with the shell and coreutils the script needs, and no podman, buildah or docker.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "dirname", "id"):
        found = shutil.which(name)
        assert found, name
        (bin_dir / name).symlink_to(found)
    tmp_path.chmod(0o755)
    script = tmp_path / "install-tools.sh"
    for name in ("install-tools.sh", "env.sh", "containers.conf", "storage.conf"):
        shutil.copy(SCRIPTS / name, tmp_path / name)
        (tmp_path / name).chmod(0o644)
    result = subprocess.run(
        [str(shutil.which("runuser")), "-u", "nobody", "--", str(bin_dir / "bash"), str(script)],
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "will skip" in result.stderr
    assert "lock" not in result.stderr


def test_env_picks_docker_only_when_an_engine_answers() -> None:
    # Here no engine answers (docker is at most a client): podman, unless told otherwise.
    base = {k: v for k, v in os.environ.items() if k != "MCP_REPLAY_ENGINE"}

    def engine(extra: dict[str, str]) -> str:
        result = subprocess.run(
            ["bash", "-c", f"source {SCRIPTS / 'env.sh'} && echo $MCP_REPLAY_ENGINE"],
            env={**base, "DOCKER_HOST": "unix:///nonexistent/docker.sock", **extra},
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return result.stdout.strip()

    assert engine({}) == "podman"
    assert engine({"MCP_REPLAY_ENGINE": "docker"}) == "docker"
