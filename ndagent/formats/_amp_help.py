"""What each verb's --help says of Amp: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "Amp has no json mode: each run's result event as it is (a failed run's too, with "
            "its error: status 1).",
    "result": "the answer is the result's text, that of the run's last main-thread assistant "
              "line, known only at the run's end; a failed run's error text is in the message.",
    "text": "Bash is shell, Read read, create_file write, edit_file edit, Grep grep, glob glob, "
            "finder semSearch, read_web_page webFetch, Task and oracle task, ...; the calls of a "
            "subagent print too.",
    "tools": "name is the tool's name (Bash, Read, ...), args its input, result {\"content\": "
             "...} of its tool_result, model_call_id null (Amp's messages have no id), parent "
             "the parent_tool_use_id of a subagent's call. A Bash result with a non-zero "
             "exitCode is a failure.",
    "validate": "the prompt comes back as a user line after the init; an input_tokens that is "
                "the sum of the cache figures (an older Amp) is a warning.",
    "stats": "the figures are the sums over the run's assistant lines' usage (the result has "
             "none); no cost, no model.",
    "run": "its run is over at its result event.",
}
