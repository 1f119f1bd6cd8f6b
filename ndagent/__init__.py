"""ndagent: small Unix filters for the NDJSON event streams of AI coding agents.

The commands are ``ndagent json``, ``result``, ``text``, ``tools`` and ``validate``.
For scripts, ``ndagent.decoder`` reads streams (``iter_items``, ``batches``) and
``ndagent.stream`` knows what the events mean (runs, tool calls, the answer).
"""

__version__ = "0.1.0"
