"""What the verbs that write a whole run at its end (otel, atif) keep of it until then:
its tool calls in start order, with where and when each began and ended and how; its
prompts, main-thread text and thinking by message; its messages' own figures, where
its agent reports them; the lines that carry a stream time.
In bounded memory: at most MAX_CALLS calls a run, and their arguments, results (as
their agent's format shows them: ``Format.result_text``, each cut to the verb's
--max-chars first), prompts and texts up to MAX_CONTENT characters in all."""

from ndagent.frame import Command
from ndagent.markup import cut
from ndagent.model import MAX_OPEN_CALLS, NATIVE_BYTES
from ndagent.timeline import Timeline, stream_time

MAX_CALLS = MAX_OPEN_CALLS
MAX_CONTENT = NATIVE_BYTES


class Call:
    """One tool call of a run, as its start and end told it."""

    __slots__ = ("call_id", "name", "kind", "args", "parent", "model_call_id",
                 "start_line", "end_line", "outcome", "result", "kept")

    def __init__(self, event):
        self.call_id = event.call_id
        self.name = event.name
        self.kind = event.kind
        self.args = None
        self.parent = event.parent
        self.model_call_id = event.model_call_id
        self.start_line = self.end_line = None
        self.kept = False  # whether its run keeps it (at most MAX_CALLS)
        self.outcome = "pending"
        self.result = None


class Run:
    """A run being read: its start, calls, prompts ((text, line)), text pieces and
    thinking ((message key, text, line)), messages (model.Message) and timeline."""

    def __init__(self, start):
        self.start = start
        self.calls = []
        self.prompts = []
        self.texts = []
        self.thinking = []
        self.messages = []
        self.timeline = Timeline(start.line or 1)
        self.timeline.add(start.line, stream_time(start))
        self.content = 0  # the characters of content kept
        self.dropped = 0  # the calls beyond MAX_CALLS


class RunRecorder(Command):
    """A verb that writes each run when it ends (``write_run``), from what it kept."""

    CONVERTER = True
    per_input = True
    # "transcript": the prompts and thinking, and the stream times of more lines (the
    # run's first, the text's), whatever the verb keeps of them, so that its times do
    # not depend on its options.
    needs = frozenset({"tools", "tool_ends", "ends", "transcript"})
    # What the verb keeps beyond the calls' names, places and outcomes: their arguments
    # and results and the runs' prompts; the runs' text and thinking.
    keeps_content = False
    keeps_text = False
    # Whether it keeps the messages' own figures (Message events, need "messages").
    keeps_messages = False

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.run = None
        self.max_chars = getattr(args, "max_chars", None)

    def needs_of(self, module):
        needs = self.needs | {"text"} if self.keeps_text else self.needs
        # Only a format whose Reader makes Message events knows the need.
        return needs | {"messages"} if self.keeps_messages and module.reports_messages else needs

    def begin_run(self, start):
        self.run = Run(start)

    def _run_of(self, event):
        if self.run is None:  # a call before any run: kept with the next run's end
            self.run = Run(event)
        return self.run

    def text(self, piece):
        run = self.run
        if self.keeps_text and run is not None and self._fits(run, piece.text):
            run.texts.append((piece.message, piece.text, piece.line))
            run.timeline.add(piece.line, stream_time(piece))

    def prompt(self, prompt):
        run = self.run
        if self.keeps_content and run is not None and self._fits(run, prompt.text):
            run.prompts.append((prompt.text, prompt.line))

    def thinking(self, thinking):
        run = self.run
        if self.keeps_text and run is not None and self._fits(run, thinking.text):
            run.thinking.append((thinking.message, thinking.text, thinking.line))

    def message(self, message):
        """A Message, kept with the times of its first and last lines (at most
        MAX_CALLS a run: each is much smaller than a call)."""
        run = self.run
        if not self.keeps_messages or run is None or len(run.messages) >= MAX_CALLS:
            return
        run.messages.append(message)
        run.timeline.add(message.first_line, message.first_ms)
        run.timeline.add(message.last_line, message.last_ms)

    def _fits(self, run, text):
        """Whether ``text`` may still be kept (MAX_CONTENT); said once when not."""
        size = len(text) if text.__class__ is str else 0
        if run.content + size > MAX_CONTENT:
            self.warn(run.start, f"more than {MAX_CONTENT >> 20} Mi characters of "
                                 "arguments, results and text in one run: the rest is "
                                 "left out", once="content-bound")
            return False
        run.content += size
        return True

    def _content(self, run, value):
        """Arguments to keep (the outputs cut their strings to --max-chars)."""
        if not self.keeps_content or value is None:
            return None
        return value if self._fits(run, value if value.__class__ is str else "") else None

    def _result(self, run, end):
        """The result text of a call's end to keep, cut to --max-chars, or None."""
        if not self.keeps_content:
            return None
        text = self.format.result_text(end)
        if text is None:
            return None
        text = text.replace("\r\n", "\n")
        if self.max_chars:
            text = cut(text, self.max_chars)
        return text if self._fits(run, text) else None

    def keep(self, start):
        run = self._run_of(start)
        call = Call(start)
        call.start_line = start.line
        call.args = self._content(run, start.args)
        self._add_call(run, call)
        if call.kept:  # the times of the calls left out are not kept either
            run.timeline.add(start.line, stream_time(start))
        return call, 64

    def _add_call(self, run, call):
        if len(run.calls) < MAX_CALLS:
            run.calls.append(call)
            call.kept = True
        else:
            run.dropped += 1
            self.warn(run.start, f"more than {MAX_CALLS} tool calls in one run: the rest "
                                 "are left out", once="call-bound")

    def call_ended(self, kept, end):
        run = self._run_of(end)
        call = kept
        if call is None:  # an end with no start seen: all there is of the call
            call = Call(end)
            call.args = self._content(run, end.args)
            self._add_call(run, call)
        call.end_line = end.line
        call.outcome = end.outcome or "unknown"
        call.result = self._result(run, end)
        if call.name is None:
            call.name = end.name
        if call.kind is None:
            call.kind = end.kind
        if call.kept:
            run.timeline.add(end.line, stream_time(end))

    def end_run(self, end, pending):
        run = self.run if self.run is not None and self.run.start is end.start else Run(
            end.start)
        self.run = None
        told = end.outcomes or {}
        if told:  # what the run's end tells of its calls (Claude's permission_denials)
            for call in run.calls:
                if call.call_id in told:
                    call.outcome = told[call.call_id]
        run.timeline.add(end.line, stream_time(end))
        self.write_run(run, end)
        super().end_run(end, pending)

    def write_run(self, run, end):
        """Write the run that ``end`` (its RunEnd) ended."""
