"""ndagent otel: each run as OpenTelemetry GenAI trace data, OTLP/JSON, one line a run."""

import argparse

from ndagent import cli, options, otlp
from ndagent.decoder import encode_line
from ndagent.feed import read_here
from ndagent.recorder import RunRecorder
from ndagent.sources import source_name

SUMMARY = "write each run as OpenTelemetry GenAI trace data (OTLP/JSON)"

# --max-chars' default: each string of --content is cut to it.
MAX_CHARS = 10_000
# How long a post to --endpoint may take.
POST_TIMEOUT = 30

DESCRIPTION = f"""\
For each run, when it ends, write one line: an OTLP/JSON ExportTraceServiceRequest (the
JSON Lines of the OTLP file exporter, what a collector's /v1/traces takes as its body)
holding the run's trace, by the OpenTelemetry GenAI semantic conventions of version
{otlp.SCHEMA_URL.rsplit('/', 1)[1]} (its schemaUrl): an 'invoke_agent' span for the run
(agent, version, session as gen_ai.conversation.id, model, the run's own tokens with
the cached ones in the input, error.type for a failed run, and ndagent.outcome,
ndagent.cost_usd, ndagent.duration_ms, ndagent.source, ndagent.line); a 'chat' span
under it for each model call of an agent whose stream gives each message's tokens
(the model, the message id as gen_ai.response.id, its tokens, the output only where
the stream gives its final count); and an
'execute_tool' span for each tool call, under the chat span of the message that made
it, or its Task call's span for a subagent's call, else the run's: the agent's tool
name, its call id, error.type for an outcome other than success (pending: a call with
no end). A failed run's span has status ERROR with its failure text; a cut-off run's,
error.type 'cutoff'.

Ids are made from the stream: the trace id from the agent, the session id and the
run's rank among that session's runs in its FILE (from the FILE and the run's line
when there is no session), each span id from the trace id and the call (or message)
id, so that the same stream always gives the same ids.

Times: a span's ends are the stream times of its lines where the stream has them
(ndagent.timing 'stream'), else the nearest timed line's ('derived'); a run with no
clock at all (some agents, some versions) is laid out from a time origin (--time-origin, else
SOURCE_DATE_EPOCH, else the FILE's modification time, else the time it is read), over
the duration the run reports, or 1 ms a line without one ('synthetic': only the order
and nesting are real).

No prompt, text, argument or result leaves the stream unless --content is given:
then the prompts the stream holds (gen_ai.input.messages), the answer of a run that
ended ok (gen_ai.output.messages), and each call's arguments and (for a success) its
result, as the agent's format shows it, go in, each string cut to --max-chars
characters.

--endpoint URL posts each line to URL (an OTLP/HTTP receiver: http://HOST:4318/v1/traces)
instead of writing it, with Content-Type application/json. When a post fails (refused,
no server, a status other than 2xx), one message says so, that line and every later one
are written to standard output instead (nothing is lost: redirect it to a file), and
the status is 2.

""" + options.JSON_ON_A_TERMINAL

EXAMPLES = """\
  <AGENT> 'fix the tests' | tee run.ndjson | ndagent otel > trace.jsonl
  ndagent otel run.ndjson > traces.jsonl
  # with the answers, arguments and results; then, to a collector, one request a run:
  # 'ndagent otel --endpoint http://127.0.0.1:4318/v1/traces logs/*.ndjson'
  ndagent otel --content --max-chars 2000 logs/*.ndjson > traces.jsonl"""

EXIT_STATUSES = (
    ("0", "every run ended ok"),
    ("1", "a run failed or was cut off (its trace is written all the same), a bad line\n"
          "under --strict, or an input that is no agent's stream"),
    ("2", "usage error, a FILE that cannot be read, output that cannot be written, or a\n"
          "post to --endpoint that failed (the lines not posted are written instead)"),
    ("130", "interrupted (Ctrl-C)"),
)


def _endpoint(text):
    """--endpoint's URL, refused at once where it could not be posted to: no http or
    https scheme, no host, a port that is no number, a space or control character."""
    from urllib.parse import urlsplit  # lazy: only --endpoint has a URL

    if not text.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"not an http:// or https:// URL: {text!r}")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a URL: {text!r} ({error})") from None
    if not parts.hostname or any(char <= " " or char == "\x7f" for char in text):
        raise argparse.ArgumentTypeError(f"not a URL: {text!r}")
    return text


class OtelCommand(RunRecorder):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "otel", SUMMARY, DESCRIPTION, EXAMPLES
    EXIT_STATUSES = EXIT_STATUSES
    FILES_HELP = ("input streams, each read as a stream of its own; '-' or none: standard "
                  "input")
    keeps_messages = True  # a chat span for each model call that reports its own usage

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--content", action="store_true",
            help="put the prompt, the answer, the calls' arguments and their results in "
                 "the spans (gen_ai.input.messages, gen_ai.output.messages, "
                 "gen_ai.tool.call.arguments and .result): they may hold secrets the tools "
                 "printed"
        ).brief = "put prompts, answers, arguments and results in the spans"
        parser.add_argument(
            "--max-chars", type=options.whole_number, default=MAX_CHARS, metavar="N",
            help=f"with --content, cut each string to N characters (default {MAX_CHARS:,})")
        parser.add_argument(
            "--endpoint", type=_endpoint, metavar="URL",
            help="post each line to URL (an OTLP/HTTP receiver's /v1/traces) instead of "
                 "writing it; on a failure, the rest is written to standard output "
                 "(status 2)")
        options.add_time_origin_option(parser)
        options.add_jobs_option(parser)

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.keeps_content = args.content
        self.ordinals = {}  # (agent, session) -> runs of it so far in the FILE
        self.origin = None  # the time origin of the FILE in hand
        self.posting = args.endpoint is not None

    def read(self, inputs):
        """Posts go one after the other, from this process: one message if they fail."""
        if self.posting:
            read_here(self, inputs)
        else:
            super().read(inputs)

    def write_run(self, run, end):
        start = run.start
        key = (start.agent, start.session_id)
        ordinal = self.ordinals.get(key, 0)
        self.ordinals[key] = ordinal + 1
        if self.origin is None:
            self.origin = options.time_origin(self.args.time_origin, start.source)
        request = otlp.run_request(run, end, ordinal, self.origin,
                                   self.args.max_chars if self.args.content else None)
        if self.posting and self._post(encode_line(request)[:-1], start):
            return
        self.out.write_json(request)

    def _post(self, line, start):
        """Post one line to --endpoint: whether it was taken."""
        from http.client import HTTPException  # lazy: only --endpoint posts
        from urllib import error, request  # lazy: only --endpoint posts

        asked = request.Request(self.args.endpoint, data=line, method="POST",
                                headers={"Content-Type": "application/json"})
        try:
            with request.urlopen(asked, timeout=POST_TIMEOUT) as answer:
                answer.read()
            return True
        except error.HTTPError as refused:
            reason = f"HTTP {refused.code} {refused.reason}"
        except error.URLError as failed:
            reason = str(failed.reason)
        except (OSError, ValueError, HTTPException) as failed:
            reason = str(failed) or type(failed).__name__
        self.say(f"{self.args.endpoint}: error: cannot post the trace of "
                 f"{start.source}:{start.line}: {reason}: it and the traces after it are "
                 "written to standard output")
        self.status = max(self.status, options.EXIT_USAGE)
        self.posting = False
        return False

    def end_input(self, source, events):
        self.ordinals = {}
        self.origin = None

    def not_read(self, where, message):
        super().not_read(where, message)
        self.end_input(source_name(where.source), 0)


build_parser, main = cli.entry(OtelCommand)
