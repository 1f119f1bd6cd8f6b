"""What each verb's --help says of the Cursor Agent CLI: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "each run's result event, its keys in the order of the json output format "
            "('cursor-agent -p --output-format json'): type, subtype, is_error, duration_ms, "
            "duration_api_ms, result, session_id, request_id, then any other keys (such as usage) "
            "in the stream's order; a failed run prints it too. Only lines that may hold a result "
            "or init event are decoded (wherever the type stands in the line, however it is "
            "spelt): a line that is not a JSON object is still noticed when it does not look like "
            "one ({...}); 'ndagent validate' checks every line in full.",
    "result": "the answer is every assistant event's text in order, printed as it arrives (a "
              "failed run's too; under --live, its segments join with nothing, as in the answer); "
              "in a run made with --stream-partial-output (whose first assistant event has "
              "timestamp_ms and no model_call_id) only those deltas count, since the CLI repeats "
              "their text as whole segments. The rebuilt answer is checked against the result "
              "event's own text, with a warning when they differ.",
    "text": "the lines are those of its text output format ('cursor-agent -p --output-format "
            "text') as documented; a tool's kind is the key of its tool_call without 'ToolCall' "
            "(readToolCall is read), function for a tool_call.function. Its answer is all the "
            "run's text: --final prints the text after the last tool call, what recent CLI "
            "versions print for --output-format text.",
    "tools": "kind is the key of the tool_call without 'ToolCall' ('function' for a "
             "tool_call.function); name is the tool name of an MCP or function tool, else null; "
             "result is the object under the outcome key; model_call_id is the event's "
             "model_call_id; duration_ms is the difference of the two events' timestamp_ms.",
    "validate": "whatever real streams contain is valid: the documented events and fields, and "
                "what the CLI adds to them (thinking and interaction_query events, timestamp_ms, "
                "model_call_id, usage, calls completed without being started, ...); event types "
                "and fields unknown even to that are accepted, and reported under --strict only. "
                "A large FILE of many runs is checked in parts.",
    "stats": "the figures are those of the result event (duration_ms, usage); it reports no cost.",
    "run": "its run is over at its result event, after which the CLI sometimes never exits.",
    "markdown": "the prompt is the user event; thinking is the thinking deltas, joined up to each "
                "thinking/completed; Started is the first timestamp_ms.",
    "html": "the prompt is the user event; thinking is the thinking deltas, joined up to each "
            "thinking/completed; Started is the first timestamp_ms.",
}
