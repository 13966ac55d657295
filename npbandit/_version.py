"""The package version, in a module of its own so that library modules can read it
without importing :mod:`npbandit` (whose ``__init__`` would import them back)."""

__version__ = "0.1.0.dev0"
