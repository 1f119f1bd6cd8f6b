"""ndagent atif: each run as an ATIF trajectory (Harbor's Agent Trajectory Interchange
Format), one line a run."""

from ndagent import atif, cli, options
from ndagent.recorder import RunRecorder

SUMMARY = "write each run as an ATIF trajectory (Harbor's format)"

DESCRIPTION = f"""\
For each run, when it ends, write one line: the run as a trajectory of the Agent
Trajectory Interchange Format (Harbor's RFC 0001), version {atif.SCHEMA_VERSION}, the
version Harbor's own converters of these agents write. The agent as Harbor names it,
with its version where the stream tells it (else "unknown", as Harbor writes) and its
model; a step for each message of the assistant, holding the tool calls it asked for
(parallel calls share a step) and their results as observations, each with its
outcome; a subagent's calls (those of a Task call) as an embedded trajectory that the
Task call's result refers to; each message's own tokens as its step's metrics, where
the agent reports tokens per message; the run's own tokens and cost as final metrics
(cached tokens counted in the prompt tokens, as ATIF does); and in extra.ndagent the
run's outcome, failure, duration, answer and where it began. A failed or cut-off run is
written too, with a note saying so.

A step's timestamp is the stream time of its first line, and only where the stream has
one: no time is made up. Results are whole unless --max-chars is given.

Harbor's tools read one trajectory a file: 'split -l 1' makes them.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  <AGENT> 'fix the tests' | tee run.ndjson | ndagent atif > trajectory.jsonl
  ndagent atif run.ndjson > trajectories.jsonl
  # one trajectory.json a run, as Harbor's tools read them
  ndagent atif run.ndjson | split -l 1 -d --additional-suffix=.json - trajectory-"""

EXIT_STATUSES = (
    ("0", "every run ended ok"),
    ("1", "a run failed or was cut off (its trajectory is written all the same), a bad\n"
          "line under --strict, or an input that is no agent's stream"),
    ("2", "usage error, a FILE that cannot be read, or output that cannot be written"),
    ("130", "interrupted (Ctrl-C)"),
)


class AtifCommand(RunRecorder):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "atif", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    FILES_HELP = ("input streams, each read as a stream of its own; '-' or none: standard "
                  "input")
    keeps_content = True
    keeps_text = True
    keeps_messages = True  # each agent step's metrics, where the agent reports them

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--max-chars", type=options.whole_number, metavar="N",
            help="cut each argument and result string to N characters (default: whole)")
        options.add_jobs_option(parser)

    def write_run(self, run, end):
        self.out.write_json(atif.trajectory(run, end, self.args.max_chars))


build_parser, main = cli.entry(AtifCommand)
