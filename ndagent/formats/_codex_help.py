"""What each verb's --help says of the Codex CLI: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run is the SDK's Turn, "
            '{"items":[...],"finalResponse":...,"usage":...}: '
            "the items completed in the run, its answer and turn.completed's usage; a failed run "
            "prints no line, as the SDK throws.",
    "result": "the answer is the run's last agent_message (the SDK's finalResponse), known only "
              "at the run's end. --live prints every agent_message.",
    "text": "command_execution is shell, file_change write, delete or edit, mcp_tool_call mcp, "
            "web_search webSearch, todo_list updateTodos, collab_tool_call task.",
    "tools": "call_id is the item id, name the item type (server/tool for MCP), args and result "
             "the item's fields (command; exit_code and aggregated_output; ...), duration_ms null "
             "(the stream has no clock).",
    "validate": "a FILE is checked whole, never in parts: some of its findings are made once "
                "for the whole input.",
    "stats": "the figures are those of turn.completed (tokens from its usage); it reports no "
             "duration, no model and no cost.",
    "run": "its run is over at turn.completed or turn.failed.",
    "markdown": "the stream holds no prompt and no clock (no Started, no call durations); thinking"
                " is the reasoning items.",
    "html": "the stream holds no prompt and no clock (no Started, no call durations); thinking is "
            "the reasoning items.",
}
