"""The version, apart from the front door: output.py and cli.py read it here, so no module
below the face imports `fabgen/__init__.py` (which imports the API and with it every stage)."""

__version__ = "0.1.0"
