"""hiermem-tui: a local inspector and builder of hierarchical summary DAGs over chat history."""

__version__ = "0.1.0"
