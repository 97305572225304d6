"""Which row of the class table a changed part of a listing takes.

A tool's ``inputSchema`` names its required properties in a ``required`` list, a prompt flags
each of its ``arguments`` with its own ``required``. Both say the same thing to a client (every
call must now give it, or need no longer), so both take ``required-added`` / ``required-dropped``.

A listed item's ``description`` (a tool's, prompt's, resource's or template's, or one of their
arguments' or schema properties') is prose a model reads and no client parses: reworded or
written it is ``description-changed``, gone or blank ``description-dropped`` (docs/classes.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# The lists whose items a client looks up by name and a model chooses among by their descriptions.
LISTED = frozenset({"tools", "prompts", "resources", "resourceTemplates"})


def required_in(steps: Sequence[Any], name: str) -> bool:
    """Whether the schema holding ``properties`` (two steps up) lists ``name`` as required."""
    if len(steps) < 2:
        return False
    schema = steps[-2].container
    required = schema.get("required") if isinstance(schema, dict) else None
    values = required.values() if isinstance(required, dict) else required
    return isinstance(values, Iterable) and not isinstance(values, str) and name in list(values)


def _prompt_argument(keys: Sequence[str | None]) -> bool:
    """``keys`` (a finding path's dict keys, None for a step into a list) end at one argument of
    a prompt: ``result.prompts[name=p].arguments[name=a]``."""
    return list(keys[-4:]) == ["prompts", None, "arguments", None]


def prompt_argument_rule(keys: Sequence[str | None], value: Any, added: bool) -> str | None:
    """A prompt argument added that is required is ``required-added``; None for anything else."""
    if added and _prompt_argument(keys) and isinstance(value, dict) and value.get("required") is True:
        return "required-added"
    return None


def prompt_required_rule(keys: Sequence[str | None], before: Any, after: Any) -> str | None:
    """A prompt argument's ``required`` flag changed (absent reads as false): ``required-added``
    when it became required, ``required-dropped`` when it no longer is; None for anything else."""
    if not keys or keys[-1] != "required" or not _prompt_argument(keys[:-1]):
        return None
    if (before is True) == (after is True):
        return None
    return "required-added" if after is True else "required-dropped"


def description_rule(keys: Sequence[str | None], after: Any) -> str | None:
    """A listed item's ``description`` changed, appeared or went away (``after`` None): the row
    ``description-dropped`` when no text is left (gone, blank, or not a string), else
    ``description-changed``; None for any other key. ``keys`` must not lead into a payload or
    name a schema property (the caller's checks)."""
    if not keys or keys[-1] != "description" or not LISTED.intersection(k for k in keys if k):
        return None
    if isinstance(after, str) and after.strip():
        return "description-changed"
    return "description-dropped"
