"""What each verb's --help says of the Antigravity CLI: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "the object under the stream's result event, as it is (whether it is what "
            "--output-format json prints is not documented); a failed run's is printed too "
            "(status 1).",
    "result": "the answer is every text_delta of the run, printed as it arrives (agy's "
              "response is the same text); a failed run's text stays printed.",
    "text": "run_command is shell, view_file read, write_to_file write, replace_file_content "
            "edit, list_dir ls, find_by_name glob, grep_search grep, invoke_subagent task, "
            "call_mcp_tool mcp, ...; a tool the permission mode blocked looks done when its "
            "step ends: only the run's result says it was denied.",
    "tools": "call_id is conversation_id:step_index, name tool_name, args the parameters, "
             "result the output or error; duration_ms is null (the lines have no clock).",
    "validate": "the result's denied_actions are warnings; a result usage that is not the sum "
                "of the steps' (a resumed conversation's totals) is a warning. A large FILE "
                "of many runs is checked in parts.",
    "stats": "the figures are the sums of the run's agent_response steps' usage, not the "
             "result's (which counts the whole conversation); it reports no cost.",
    "run": "its run is over at its result event.",
}
