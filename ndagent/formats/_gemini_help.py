"""What each verb's --help says of the Gemini CLI: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the object of its json mode, "
            '{"session_id","response","stats","error","warnings"}, '
            "made from the stream: stats in the stream's reduced form (the result's few "
            "figures, not the CLI's session metrics); a failed run's object is printed (status "
            "1), where the CLI writes it on standard error.",
    "result": "the answer is the text after the run's last tool call (its json mode's response), "
              "known only at the run's end, since a later tool call would make the text so far "
              "an interim message. --live prints every delta.",
    "text": "run_shell_command is shell, read_file read, write_file write, replace edit, glob "
            "glob, grep_search grep, mcp_* tools mcp, google_web_search webSearch, ...",
    "tools": "call_id is tool_id, name tool_name, args the parameters, result the output or "
             "error; a tool_use with no tool_id cannot be paired: it is printed at its run's end, "
             "with a warning.",
    "validate": "the CLI writes notices that are not JSON ('Loaded cached credentials.') on "
                "its standard output: each known one is a warning (noise), as every agent's. "
                "There is no answer check: the stream holds no answer to check against. A "
                "large FILE of many runs is checked in parts.",
    "stats": "the figures are those of the result event's stats; it reports no cost.",
    "run": "its run is over at its result event.",
    "markdown": "the prompt is the user message; Started is the init's timestamp; thinking is not "
                "in the stream.",
    "html": "the prompt is the user message; Started is the init's timestamp; thinking is not in "
            "the stream.",
}
