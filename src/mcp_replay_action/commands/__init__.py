"""The ``mcp-replay`` commands, one module each. ``cli.py`` lists them and imports a command's
module only when that command runs or shows its own help: ``mcp-replay --help`` builds none of
them, and ``replay`` builds only itself."""
