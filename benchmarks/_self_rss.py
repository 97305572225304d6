"""Run a module as ``python -m`` would, then write this process's own peak RSS (children
excluded) and the modules it imported to the JSON file named by ``MCP_BENCH_INFO``.

    python benchmarks/_self_rss.py -m mcp_replay_action.cli replay ...
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import runpy
import sys


def _peak_kib() -> int:
    """This program's peak RSS: VmHWM belongs to this address space alone, where ru_maxrss
    carries over the peak of whatever process forked us (exec keeps it)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _report() -> None:
    target = os.environ.get("MCP_BENCH_INFO")
    if not target:
        return
    facts = {
        "maxrss_kib": _peak_kib(),
        "modules": sorted({name.partition(".")[0] for name in sys.modules}),
    }
    with open(target, "w") as fh:
        json.dump(facts, fh)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "-m":
        sys.exit("usage: _self_rss.py -m MODULE [ARGS...]")
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    atexit.register(_report)
    runpy.run_module(module, run_name="__main__", alter_sys=True)
