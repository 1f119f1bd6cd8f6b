"""ndagent json: a stream-json stream as the single-object json output format."""

from ndagent import cli, options
from ndagent.frame import Command

SUMMARY = "convert a stream to the single-object json output format"

DESCRIPTION = """\
For each run that ends with a result event, print one line: that event's object with
the keys in the json format's order (type, subtype, is_error, duration_ms,
duration_api_ms, result, session_id, request_id), then any other keys (such as usage)
in the stream's order. Values are the same JSON values; numbers are written in their
shortest form (1E3 becomes 1000.0, 1.50 becomes 1.5), except a number beyond 64 bits
or a double, which is written as it stands. This is what 'cursor-agent -p
--output-format json' prints, made from a stream-json capture. A run with no result event prints no
line, and is reported on standard error at the line where it began (status 1).

For Claude Code, each run's result event as it is, what 'claude -p --output-format
json' prints (a run whose is_error is true still prints it, and is reported: status 1).
For Codex, each run is the SDK's Turn, {"items":[...],"finalResponse":...,"usage":...}
(a failed run prints no line, as the SDK throws); for Gemini, the object of its json
mode, {"session_id","response","stats","error","warnings"}, made from the stream
(stats in the stream's reduced form; a failed run's object is printed, status 1).

For Cursor, only lines that may hold a result or init event are decoded (wherever the
type stands in the line, however it is spelt): a line that is not a JSON object is still
noticed when it does not look like one ({...}); 'ndagent validate' checks every line
in full.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  cursor-agent -p --output-format stream-json 'add tests' | tee run.ndjson | ndagent json
  ndagent json run.ndjson | jq -r .result
  ndagent json logs/*.ndjson | jq -s 'map(.duration_ms) | add'
  # how the runs ended, counted
  ndagent json logs/*.ndjson | jq -r .subtype | sort | uniq -c
  # the session ids of the three slowest runs
  ndagent json logs/*.ndjson | jq -r '[.duration_ms, .session_id] | @tsv' |
    sort -rn | head -n 3 | cut -f 2"""


class JsonCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "json", SUMMARY, DESCRIPTION, EXAMPLES
    splits_files = True
    needs = frozenset({"native"})
    exact = True

    def end_run(self, end, pending):
        if end.native is not None:
            self.out.write_json(end.native)
        super().end_run(end, pending)


build_parser, main = cli.entry(JsonCommand)
