"""``python -I -m mcp_replay_action.github``: the action's entrypoint, the process that holds the token.

In order, before anything from the pull request runs:

1. it makes itself non-dumpable (``privilege.no_dumps``), so no process of its user can read its
   ``/proc`` files or trace it, and re-executes itself without the tokens and inputs in its
   environment, handing them over on a file descriptor (``handover.py``): no process the code
   under test can inspect holds them in an environment block;
2. it loads every module it will ever run and refuses any other (``preload.py``), so what
   ``install`` writes into the action's own installation never runs in here;
3. ``main`` runs ``install``, ``setup`` and the server as an unprivileged user when it holds root
   (the image; ``privilege.run_children_as``).

``-I`` keeps the working directory (the workspace), user site-packages and ``PYTHON*`` variables
off the import path."""

from mcp_replay_action.host.privilege import no_dumps

no_dumps()  # first: execve resets it, so the re-executed image does this again

import os  # noqa: E402
import sys  # noqa: E402

from mcp_replay_action.github.handover import HANDOVER_VARIABLE, receive, reexec_clean  # noqa: E402

if HANDOVER_VARIABLE not in os.environ:
    reexec_clean()
environ = receive()

from mcp_replay_action.github import preload  # noqa: E402

preload.seal(preload.roots_of(preload.preload()))

from mcp_replay_action.github.main import main  # noqa: E402

sys.exit(main(environ))
