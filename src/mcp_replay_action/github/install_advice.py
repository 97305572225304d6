"""What to say when the server could not start for something it needs and the action's image does
not have: the fix is the action's ``install`` input, which a first workflow often leaves out
(the server runs on the developer's machine, where its dependencies are installed). The
comment and the error annotation say it, with an example for what was missing
(``transport/missing.py`` reads what that was).

Plain text; the comment template escapes it. The name comes from the server's redacted stderr
and is a plain word (``missing.py`` keeps no other), shown in a code span.
"""

from __future__ import annotations

from mcp_replay_action.transport.missing import Missing, missing_dependency

_WHAT = {
    "python": "the Python module {name}",
    "node": "the Node package {name}",
    "file": "the file {name}",
    "program": "the program {name}",
}
_EXAMPLE = {
    "python": "`install: pip install -r requirements.txt` (or `pip install -e .`)",
    "node": "`install: npm ci`",
    "file": "`install: npm ci && npm run build` (the step that writes it)",
    "program": "`install: npm ci` or `install: pip install -e .` (what puts it on PATH), or run it with `npx` / `uvx`",
}


def install_advice(exc: BaseException, install: str) -> str:
    """One sentence naming the ``install`` input, with an example, when ``exc`` is a start that
    failed for a missing module, package, file or program; "" otherwise. ``install`` is the
    input as given: when it is set, it ran and did not install what was missing."""
    missing = missing_dependency(exc)
    if missing is None:
        return ""
    return f"{_missing_text(missing)} {_fix(missing, ran=bool(install.strip()))}"


def _missing_text(missing: Missing) -> str:
    name = f"`{missing.name}`" if missing.name else "it needs"
    what = _WHAT[missing.kind].format(name=name)
    where = "is not on the action's PATH" if missing.kind == "program" else "is not there in the action"
    return f"The server could not start: {what} {where}."


def _fix(missing: Missing, *, ran: bool) -> str:
    if ran:
        return f"The action's `install` input ran but did not provide it: make it install your server's dependencies, for example {_EXAMPLE[missing.kind]}."
    return (
        f"Install your server's dependencies with the action's `install` input, for example {_EXAMPLE[missing.kind]}."
    )
