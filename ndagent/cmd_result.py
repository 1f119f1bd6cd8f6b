"""ndagent result: the assistant's full answer, rebuilt from the stream as it arrives."""

import os

from ndagent import cli
from ndagent.frame import Command
from ndagent.model import Answer
from ndagent.terminal import escape_prose

SUMMARY = "reassemble the assistant's full answer"

DESCRIPTION = """\
Print the answer of each run, the text that the agent's own json output gives as its
answer (what each agent's is, below), then a newline at the end of the run unless the
answer already ends with one. An answer known as the stream delivers it is printed
text by text as it arrives; any other only at the run's end, and a failed run then
prints nothing. A run cut off (with no event that ends it) still prints what it has of
the answer, then is reported (status 1). --live prints every assistant text as it
arrives instead, interim messages included, an empty line between two messages: the
way to watch a run of an agent whose answer is known only at its end (below), which
is why it is not the default, on a terminal or elsewhere: what it prints is then more
than the answer.

With -z, each run's answer is printed exactly and followed by a NUL, so that answers
that hold newlines stay apart (xargs -0, read -d ''). A message on standard error never
lands on the line of an answer still being printed to the same terminal.

When standard output is a terminal, control characters other than newline and tab are
spelt out (\\x1b) rather than sent raw, as are the bidirectional controls and the tag
characters (\\u202e, \\U000e0001), which reorder or hide text."""

EXAMPLES = """\
  <AGENT> 'explain main.c' | ndagent result
  # watch any agent's texts as they come, interim messages included
  <AGENT> 'explain main.c' | ndagent result --live
  ndagent result run.ndjson > answer.md
  ndagent result --from-result -n run.ndjson | wc -c
  # each run's answer on one line, whatever it holds (or: xargs -0, read -d '')
  ndagent result -z logs/*.ndjson | tr '\\n\\0' ' \\n'
  # what the agent said last, in a session file
  ndagent result --last logs/session.jsonl
  # in a Makefile: the rule fails when the agent's run failed or was cut off
  answer.md: prompt.txt
  \t<AGENT> "$$(cat $<)" | ndagent result > $@"""

# What an answer printed at its run's end needs: the RunEnd.
_ENDS = frozenset({"ends"})


class ResultCommand(Command):
    VERB, SUMMARY, DESCRIPTION, EXAMPLES = "result", SUMMARY, DESCRIPTION, EXAMPLES
    splits_files = True
    needs = frozenset({"text", "ends"})

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "-n", "--no-newline", action="store_true",
            help="print each answer exactly, adding no newline at the end of a run",
        ).brief = "add no newline at the end of an answer"
        parser.add_argument(
            "-z", "--null", action="store_true",
            help="end each run's answer with a NUL instead of a newline, the answer "
                 "printed exactly (for xargs -0, read -d '', sort -z)",
        ).brief = "end each answer with a NUL, the answer exact"
        parser.add_argument(
            "--from-result", action="store_true",
            help="print the result event's text at the end of each run instead of "
                 "streaming the rebuilt answer",
        ).brief = "print the result event's text at each run's end"
        parser.add_argument(
            "--live", action="store_true",
            help="print every assistant text as it arrives, interim messages included "
                 "(what some agents' answer is anyway)",
        ).brief = "print every assistant text as it arrives"
        parser.add_argument(
            "--last", action="store_true",
            help="print only the last run's answer, once every input is read (what the "
                 "agent said last, of a session file or a stream of many runs)",
        ).brief = "print only the last run's answer"

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.for_terminal = os.isatty(out.fd)
        self.answer = Answer()
        self.shown_message = None  # the key of the message whose text was printed last
        self.streaming = False
        self.last = None  # --last: the answer of the last run read so far
        if args.last:  # the last run is known only once every input is read, here
            self.splits_files = False

    def begin_run(self, start):
        self.answer = Answer()
        self.shown_message = None
        self.streaming = self.streams(self.format)

    def streams(self, module):
        """Whether the answer of a stream in ``module``'s format is printed as it
        arrives (its Text events), rather than at the run's end."""
        return (not self.args.from_result and not self.args.last
                and (module.live_answer or self.args.live))

    def needs_of(self, module):
        """The Text events only where the answer is printed as it arrives: elsewhere
        the run's end brings it, and the format need not make them."""
        return self.needs if self.streams(module) else _ENDS

    def text(self, piece):
        if self.streaming:
            text = piece.text
            if piece.message != self.shown_message and self.answer.length:
                text = self.format.separator + text
            self.shown_message = piece.message
            self.answer.add(text)
            self.print(text)

    def end_run(self, end, pending):
        if self.streaming:
            answer = self.answer
            self.end_line(answer.length and not answer.ends_with_newline)
            if (not end.cutoff and end.answer is not None and self.format.live_answer
                    and not answer.matches(end.answer)):
                self.warn(end, "the rebuilt answer differs from the result event's text")
        elif self.args.last:
            self.last = self.format.answer(end)
        else:
            self.print_answer(self.format.answer(end))
        super().end_run(end, pending)

    def finish(self):
        if self.args.last:
            self.print_answer(self.last)

    def print_answer(self, text):
        """A run's answer (None: it has none) and its end."""
        if text is not None:
            if text:
                self.print(text)
            self.end_line(text and not text.endswith("\n"))

    def end_line(self, unfinished):
        """End the run's answer: with a NUL (-z), else with a newline when it has none,
        unless -n."""
        if self.args.null:
            self.out.write(b"\0")
        elif unfinished and not self.args.no_newline:
            self.out.write(b"\n")

    def print(self, text):
        if self.for_terminal:
            text = escape_prose(text)
        self.out.write(text.encode("utf-8", "replace"))


build_parser, main = cli.entry(ResultCommand)
