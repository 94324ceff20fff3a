"""A read-only MCP server over the summary DAG (``hiermem-tui mcp``), with secrets masked.

``tools.py`` does the work (headless, without the SDK: the same core functions as the CLI),
``schemas.py`` holds each tool's JSON Schemas, ``args.py`` checks arguments against them, and
``server.py`` speaks the protocol over stdio with the official MCP Python SDK. Only server.py
imports ``mcp``; nothing here imports Textual.
"""
