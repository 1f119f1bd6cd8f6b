"""What each verb's --help says of Qwen Code: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event as it is, the last element of what 'qwen --output-format "
            "json' prints (a failed run's too: status 1); a subagent's result in the middle of "
            "a run is not printed. Its usage is the process's running total.",
    "result": "the answer is the result's text, that of the run's last main-thread message, known "
              "only at the run's end. A run whose answer is an '[API Error: ...]' the CLI "
              "reported as a success failed: nothing is printed.",
    "text": "run_shell_command is shell, read_file read, write_file write, edit edit, glob glob, "
            "grep_search grep, list_directory ls, web_fetch webFetch, agent task, mcp__* tools "
            "mcp, ...; the calls of a subagent print too.",
    "tools": "name is the tool's name (read_file, run_shell_command, ...), args its input, result "
             '{"content": ...} of its tool_result, model_call_id the message id, parent the '
             "parent_tool_use_id of a subagent's call. A call that the result's "
             "permission_denials lists is permissionDenied.",
    "validate": "a subagent's result in the middle of a run is a warning, and ends nothing; an "
                "'[API Error: ...]' answer is a failed run.",
    "stats": "the result's usage is the process's running total: each run counts it less the "
             "previous result's of the same session_id (input less its cached part); no cost.",
    "run": "its run is over at its result event (not a subagent's).",
}
