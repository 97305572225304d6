"""The GitHub Action edge: settings from ``INPUT_*``, the event payload, workflow commands, a small
REST client, the sticky PR comment, the job summary and the entrypoint (``main.py``).

Everything here consumes a finished ``Report``; nothing here compares or grades.
"""
