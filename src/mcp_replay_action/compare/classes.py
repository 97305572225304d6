"""The class table: every rule that says how badly a difference hurts a client, one row each.

``compare.py`` decides *which* rule a difference meets (it knows paths and values); the class a
finding gets comes from this table and nowhere else, so a finding always names its rule
(``Finding.rule``) and ``docs/classes.md`` is generated from these rows (``markdown_table``; a
test holds the page to the table). A class says what a client feels:

- ``breaking``: a client written against the recording can fail (something it reads is gone or
  different, something it must send is new, a success is now an error). Gates by default.
- ``additive``: a client keeps working; the server says more, or says the same thing in other
  words (an error text reworded, a capability gained), or a model is told less (a listed item's
  description dropped). Reported, accepted with a refresh.
- ``cosmetic``: nothing a client can tell apart (an equivalent schema spelling, an order that
  carries no meaning, a version string, prose reworded: a title, a description). Never fails an
  interaction. A model reads a description; rewording it is still cosmetic, and the SARIF report
  keeps it as definition drift (``report/sarif.py``), so a rewording that changes what a tool is
  said to do is seen without every touch-up of the docs needing a refresh.

The rows were checked against real releases of third-party servers: an empty
``capabilities.experimental: {}`` removed, a capability gained, ``exclusiveMaximum: 1000000``
rewritten as ``maximum: 999999`` on an integer and an error text that gained a hint were each
once classed breaking; they are the ``empty-object-removed``, ``capability-added``,
``schema-equivalent`` and ``error-text-changed`` rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, Unpack

from mcp_replay_action.model import JSON
from mcp_replay_action.model.results import CLASS_ORDER, Finding, FindingClass, FindingKind
from mcp_replay_action.values.depth import COMPARED


@dataclass(frozen=True)
class Rule:
    """One row of the table: its id (``Finding.rule``), when it applies, its class and why."""

    id: str
    when: str
    cls: FindingClass
    why: str


RULES: tuple[Rule, ...] = (
    # -- breaking: what a client written against the recording can trip on ---------------------
    Rule("missing-response", "no live answer arrived (a crash, a hang, a timeout)", "breaking",
         "the client waits for an answer that never comes"),
    Rule("too-deep", "an answer is nested too deeply to read or compare (past Python's recursion limit; "
         f"answers up to {COMPARED} levels deep always are): the finding says how deep", "breaking",
         "nothing in it was compared, and a client parsing it may fail the same way"),
    Rule("result-became-error", "a result became a JSON-RPC error", "breaking",
         "a call that succeeded now fails"),
    Rule("error-became-result", "a JSON-RPC error became a result", "breaking",
         "a client that handles the error gets a result it never saw"),
    Rule("tool-became-error", "a tool result became an error (`isError` true)", "breaking",
         "a call that succeeded now fails"),
    Rule("tool-no-longer-error", "a tool error became a success (`isError` false)", "breaking",
         "a client that handles the error gets a result it never saw"),
    Rule("error-code-changed", "an error's `code` changed", "breaking",
         "clients branch on the code"),
    Rule("era-refused", "the server refused the recorded protocol era", "breaking",
         "a client of that era cannot talk to it"),
    Rule("required-added", "a required argument (of a tool or a prompt) was added, or an argument became "
         "required", "breaking",
         "every existing call lacks it"),
    Rule("tool-removed", "a tool, prompt, resource or other named item was removed", "breaking",
         "a client calling it gets an error"),
    Rule("capability-removed", "a capability was removed from `capabilities`", "breaking",
         "a client relying on it loses the feature"),
    Rule("key-removed", "a key was removed (an output field, a schema keyword)", "breaking",
         "a client reading it gets nothing"),
    Rule("item-removed", "a list item was removed", "breaking",
         "a client reading it gets nothing"),
    Rule("type-changed", "a value's JSON type changed (`2 -> \"2\"`)", "breaking",
         "a client parsing the old type fails"),
    Rule("value-changed", "a value changed", "breaking",
         "a client reading it gets a different answer"),
    Rule("list-reordered", "the same list items in another order", "breaking",
         "a client may read items by position"),
    Rule("hint-widened", "a tool annotation now allows more (`readOnlyHint` true->false, "
         "`destructiveHint` or `openWorldHint` false->true; an absent hint is the spec's default, so a hint "
         "spelled out with its default and left out are no change)",
         "breaking", "a client or a user trusted the tool to do less"),
    Rule("output-schema", "a live tool result's `structuredContent` does not validate against the `outputSchema` "
         "the live server declared for the tool (or is missing, or the schema is invalid)", "breaking",
         "a client that validates (the official SDKs do) refuses the result"),
    Rule("output-text-disagrees", "a tool result's only text block is a JSON object other than its "
         "`structuredContent`", "breaking", "a client reading the text sees other data than one reading the structure"),
    Rule("latency", "the answer came, the same, but over `--max-slowdown` times slower", "breaking",
         "a client with a timeout fails"),
    Rule("size", "the answer is over `--max-growth` times its recorded size in bytes (and over 1 KiB)", "breaking",
         "it costs a model that many times the context, and may no longer fit"),
    # What the server sends while it answers (compare/notifications.py).
    Rule("progress-dropped", "a request's progress notifications stopped (recorded some, live none)", "breaking",
         "a client showing progress, or keeping a long call alive on it, hears nothing"),
    Rule("log-level-raised", "a log message (`notifications/message`) rose to `warning` or "
         "above, or one at that level appeared", "breaking",
         "the server now says something went wrong"),
    Rule("notification-dropped", "a `list_changed`, `resources/updated` or other notification (compared by "
         "presence per method) did not arrive", "breaking",
         "a client waiting for it never refetches"),
    Rule("server-request-dropped", "the server no longer sends a request to the client (sampling, elicitation, "
         "roots) it sent in the recorded session", "breaking", "what the client was asked for (a user's consent, a "
         "model's answer) is no longer asked"),
    Rule("server-request-added", "the server sends a request to the client the recorded session never saw",
         "breaking", "a client written against the recording was never asked it and may not answer"),
    # -- additive: a client keeps working -------------------------------------------------------
    Rule("response-appeared", "an answer arrived where the recording has none", "additive",
         "nothing a client waited for is missing"),
    Rule("key-added", "a key was added (an optional output field, an optional argument)", "additive",
         "a client ignores what it does not read"),
    Rule("item-added", "a list item was added", "additive", "a client ignores what it does not read"),
    Rule("tool-added", "a tool, prompt, resource or other named item was added", "additive",
         "existing calls are untouched"),
    Rule("capability-added", "a capability was added to `capabilities`", "additive",
         "the server offers more; nothing it offered is gone"),
    Rule("empty-object-removed", "an empty object was removed outside tool output "
         "(`capabilities.experimental: {}`), but not a capability itself", "additive",
         "it declared nothing"),
    Rule("required-dropped", "an argument (of a tool or a prompt) is no longer required", "additive",
         "every existing call still fits"),
    Rule("description-dropped", "a listed tool's, prompt's, resource's or template's `description` (or one of its "
         "arguments' or schema properties') was removed or became blank", "additive",
         "no client parses it, but a model loses what told it when and how to call it"),
    Rule("error-text-changed", "an error's text changed while it stays an error of the same code "
         "(a JSON-RPC error's `message` or `data`, an `isError` result's content)", "additive",
         "clients branch on the code and the error, not on its wording"),
    Rule("hint-narrowed", "a tool annotation now allows less, or `idempotentHint` changed", "additive",
         "the tool promises more than before"),
    Rule("progress-added", "progress notifications where the recording has none", "additive",
         "a client ignores what it did not ask to show"),
    Rule("progress-changed", "how many progress notifications came (when the recorded ones went up in equal "
         "steps), or the last one's `progress` or `total`, changed (never their timing)", "additive",
         "the client still hears progress"),
    Rule("progress-unfinished", "a request's progress no longer reaches its `total` (the recording's last "
         "notification did)", "additive", "a client's progress bar stops short; the answer still comes"),
    Rule("log-changed", "a log message's data changed, its level changed below `warning`, or one was added below "
         "`warning` or removed (data masked as any text)", "additive",
         "a client does not branch on logs; a person reading them sees the change"),
    Rule("notification-added", "a notification arrived where the recording has none of its method", "additive",
         "a client refetches once more"),
    Rule("server-request-changed", "a request the server sends to the client carries other params", "additive",
         "the client is asked the same thing in other words"),
    # -- cosmetic: nothing a client or a model can tell apart -----------------------------------
    Rule("schema-equivalent", "a JSON Schema was spelled another way that accepts the same values for its "
         "declared type (integer `exclusiveMaximum: n` = `maximum: n-1`, `exclusiveMinimum` likewise, "
         "`type: [x]` = `type: x`, a one-item `enum` = `const`, keywords of another type, defaults spelled out)",
         "cosmetic", "a client validates the same inputs the same way"),
    Rule("description-changed", "a listed tool's, prompt's, resource's or template's `description` (or one of its "
         "arguments' or schema properties') was reworded, or written where there was none", "cosmetic",
         "prose a model reads and no client parses (reported as definition drift in SARIF)"),
    Rule("metadata-text", "a `title`, `description` (outside listings) or `instructions` text changed (a "
         "schema property of that name is a property: `key-removed`, `value-changed`)",
         "cosmetic", "text for people, not for a client"),
    Rule("server-version", "`serverInfo.version` changed", "cosmetic", "a new build says so"),
    Rule("named-reordered", "named items (tools by `name`, ...) in another order", "cosmetic",
         "they are looked up by name"),
    Rule("required-reordered", "the `required` list in another order", "cosmetic", "it is a set"),
    Rule("progress-text-changed", "the last progress notification's `message` changed", "cosmetic",
         "text for people, not for a client"),
)  # fmt: skip

RULE: dict[str, Rule] = {rule.id: rule for rule in RULES}


class Details(TypedDict, total=False):
    """What a finding may say besides where and what (``Finding``'s fields of those names)."""

    before: JSON
    after: JSON
    diff: str
    also: tuple[str, ...]


def finding(rule: str, kind: FindingKind, path: str, message: str, **details: Unpack[Details]) -> Finding:
    """A ``Finding`` of ``kind`` at ``path`` that meets ``rule``, classed by this table."""
    return Finding(kind, RULE[rule].cls, path, message, rule=rule, **details)


def markdown_table() -> str:
    """The table as ``docs/classes.md`` shows it, worst class first (GitHub-flavoured Markdown)."""
    lines = ["| rule | when | class | why |", "|---|---|---|---|"]
    for rule in sorted(RULES, key=lambda r: CLASS_ORDER.index(r.cls)):
        lines.append(f"| `{rule.id}` | {rule.when} | {rule.cls} | {rule.why} |")
    return "\n".join(lines) + "\n"
