"""A local package index standing in for PyPI (PyPI's own ``pypiserver``), for the release tests:
it listens on 127.0.0.1 only, takes uploads without credentials, serves ``/simple/``, and is ended
by its PID. Also: installing one distribution from it alone, into a fresh virtual environment."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def package_index(root: Path) -> Iterator[tuple[str, Path]]:
    """A running index over ``root/packages``: its upload URL (``http://127.0.0.1:PORT/``) and
    that directory. Skips the test when pypiserver is not installed (the test extra has it)."""
    server = shutil.which("pypi-server", path=str(Path(sys.executable).parent))
    if server is None:
        pytest.skip("pypiserver is not installed: pip install -e '.[test]'")
    packages = root / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    log = open(root / "index.log", "wb")  # noqa: SIM115 - closed below, after the process
    # -a . -P .: no authentication for any action (a stand-in that holds nothing of value).
    process = subprocess.Popen(
        [server, "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".", str(packages)],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "simple/", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"the package index did not start: {(root / 'index.log').read_text()}"
                    ) from None
                time.sleep(0.2)
        yield url, packages
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


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
