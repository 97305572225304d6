"""A local package index standing in for PyPI (PyPI's own ``pypiserver``), for the release tests:
it listens on 127.0.0.1 only, takes uploads without credentials, serves ``/simple/``, and is ended
by its PID. Also: installing one distribution from it alone, into a fresh virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from http_helpers import free_port, running


@contextmanager
def package_index(root: Path) -> Iterator[tuple[str, Path]]:
    """A running index over ``root/packages``: its upload URL (``http://127.0.0.1:PORT/``) and
    that directory. Skips the test when pypiserver is not installed (the test extra has it)."""
    server = shutil.which("pypi-server", path=str(Path(sys.executable).parent))
    if server is None:
        pytest.skip("pypiserver is not installed: pip install -e '.[test]'")
    packages = root / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    port = free_port()
    # -a . -P .: no authentication for any action (a stand-in that holds nothing of value).
    argv = [server, "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".", str(packages)]
    with running(argv, f"http://127.0.0.1:{port}/") as url:
        yield url, packages


def install_from_index(index: str, requirement: str, venv: Path) -> Path:
    """A fresh virtual environment at ``venv`` with ``requirement`` installed: the distribution
    itself fetched from ``index`` alone (no other index, no find-links, no cache), its dependencies
    then as this machine installs any. Returns the environment's bin directory."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = str(venv / "bin" / "pip")
    alone = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    alone |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    downloads = venv / "downloaded"
    subprocess.run(
        [pip, "download", "--no-deps", "--no-cache-dir", "--index-url", index + "simple/", "-d", str(downloads),
         requirement],
        check=True, timeout=300, env=alone, capture_output=True,
    )  # fmt: skip
    wheels = sorted(downloads.glob("*.whl"))
    assert len(wheels) == 1, f"the index served {sorted(p.name for p in downloads.iterdir())} for {requirement}"
    subprocess.run([pip, "install", "--quiet", str(wheels[0])], check=True, timeout=600, capture_output=True)
    return venv / "bin"
