"""ndagent json: a stream-json stream as the single-object json output format."""

from ndagent import cli, options
from ndagent.frame import Command

SUMMARY = "convert a stream to the single-object json output format"

DESCRIPTION = """\
For each run, print one line: the object that the agent's own json output gives for
that run (what each agent's is, below), made from its stream. Values are the same JSON
values; numbers are written in their shortest form (1E3 becomes 1000.0, 1.50 becomes
1.5), except a number beyond 64 bits or a double, which is written as it stands. A run
cut off (with no event that ends it) prints no line, and is reported on standard error
at the line where it began (status 1); a failed run is reported too (status 1), its
line printed or not as the agent's json output would be.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  <AGENT> 'add tests' | tee run.ndjson | ndagent json
  ndagent json run.ndjson | jq -r .result
  # each agent's object has its own keys: figures over the runs of any agents
  # (time, tokens, cost, outcome) come from 'ndagent stats --by run'
  ndagent stats --by run --format ndjson logs/*.ndjson | jq -s 'map(.duration_ms) | add'"""


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
