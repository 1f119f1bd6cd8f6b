"""What each verb's --help says of OpenCode: its format's ``help``."""

# What each verb's --help says of this agent (``Format.help``).
HELP = {
    "json": "OpenCode has no json mode: the object is ndagent's, "
            '{"sessionID","response","steps","tokens","cost","error","rejected"}: the answer, '
            "the number of steps, and tokens and cost summed over the steps (OpenCode's own "
            "shape); a failed run's object has its error event's error and no response "
            "(status 1).",
    "result": "the answer is the text parts of the run's last step (what opencode run's own "
              "prompt returns), printed at the step_finish that ends the run. --live prints "
              "every text part.",
    "text": "bash is shell, read read, write write, edit edit, apply_patch write, delete or "
            "edit, glob glob, grep grep, webfetch webFetch, task task, ...; a call is printed "
            "when it ends (the stream has no start event).",
    "tools": "call_id is callID, name the tool, args state.input, result state.output or "
             "state.error with state.metadata; a shell command that exits non-zero is a "
             "failure, a permission the CLI rejected is permissionDenied.",
    "validate": "there is no answer check: the stream holds no answer of its own. A run "
                "ends at a step_finish whose reason is not tool-calls: a stream that stops "
                "before one was cut off.",
    "stats": "the figures are the sums of the steps' tokens and cost (reasoning counts as "
             "output); the duration is from the first timestamp to the last; no model.",
    "run": "it writes no end event: its run is over at a step_finish whose reason is not "
           "tool-calls (or at an error), and the agent is then given --grace to exit.",
}
