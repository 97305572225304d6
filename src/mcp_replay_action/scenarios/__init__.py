"""Scripted recording: drive a server through the actions of a ``scenarios.yml``, no client code.

``model`` (the dataclasses), ``loader`` (the file format, documented there; every mistake a
``file:line`` error) and ``recorder`` (each scenario against a fresh server) make up the package.
"""

from mcp_replay_action.scenarios.loader import ACTIONS, load_scenarios
from mcp_replay_action.scenarios.model import Action, Redaction, Scenario, Scenarios
from mcp_replay_action.scenarios.recorder import record_scenario, record_scenarios
from mcp_replay_action.transport import Target

__all__ = [
    "ACTIONS",
    "Action",
    "Redaction",
    "Scenario",
    "Scenarios",
    "Target",
    "load_scenarios",
    "record_scenario",
    "record_scenarios",
]
