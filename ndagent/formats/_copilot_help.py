"""What each verb's --help says of the GitHub Copilot CLI: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the run's result line as it is (its JSON mode is the stream; the result is its "
            "one summary): exitCode, sessionId and usage (premium requests, durations, code "
            "changes); a failed run's is printed too (status 1).",
    "result": "the answer is the last main-agent assistant.message that has text, known "
              "only at the run's end. --live prints the deltas (or each whole message).",
    "text": "bash is shell, view read, create write, edit edit, grep grep, glob glob, "
            "web_fetch webFetch, task task, a tool with an MCP server mcp, ...",
    "tools": "call_id is toolCallId, name toolName (server/tool for MCP), args the arguments, "
             "result the result or error; a shell command that exits non-zero is a failure; "
             "error code denied is permissionDenied, rejected rejected.",
    "validate": "a session.error in a run that exits 0 and each session.warning are "
                "warnings, as are deltas that differ from their message.",
    "stats": "tokens are the sums of the assistant.usage events (null when the CLI prints "
             "none); the duration is the result's sessionDurationMs; no cost (its cost "
             "is a premium-request multiplier).",
    "run": "its run is over at its result line.",
    "markdown": "the prompt is the user.message event.",
    "html": "the prompt is the user.message event.",
}
