"""What each verb's --help says of Claude Code: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event as it is: what 'claude -p --output-format json' prints (a run "
            "whose is_error is true prints it too, and is reported: status 1).",
    "result": "the answer is the result's text, that of the run's last main-thread message, known "
              "only at the run's end. --live prints the text deltas where the stream has partial "
              "messages, else whole text blocks, never the same text twice.",
    "text": "Bash is shell, Read read, Write write, Edit edit, Glob glob, Grep grep, Task task, "
            "mcp__* tools mcp, WebSearch webSearch, ...; the calls of a subagent print too.",
    "tools": "name is the tool's name (Bash, Read, mcp__server__tool, ...), args its input, result "
             '{"content": ...} of its tool_result (with tool_use_result when the line has it), '
             "model_call_id the message id, parent the parent_tool_use_id of a subagent's call. A "
             "call still open at the run's end that the result's permission_denials lists is "
             "printed permissionDenied.",
    "validate": "a FILE is checked whole, never in parts: result_index is followed from one run "
                "to the next.",
    "stats": "the figures are those of the result event: tokens from its modelUsage (else its "
             "usage), cost from its total_cost_usd. A call that the result's permission_denials "
             "names counts as permissionDenied.",
    "run": "its run is over at its result event; with --input-format stream-json it makes several "
           "runs in one process, each of which must begin within --grace of the one before.",
    "markdown": "the prompt shows only in a stream made with --replay-user-messages; thinking "
                "comes from whole thinking blocks; Started is known from CLI 2.1 on, whose lines "
                "carry a timestamp.",
    "html": "the prompt shows only in a stream made with --replay-user-messages; thinking comes "
            "from whole thinking blocks; Started is known from CLI 2.1 on, whose lines carry a "
            "timestamp.",
}
