"""What the transcript verbs (``markdown``, ``html``) share: a run's pieces in stream
order, made of the model's events (``RunPieces``), the hygiene and bounds of stream
text, and a run's header figures for people.  Agent-blind: what a call's result text
is, each agent's format says (``Format.result_text``).

A run is written when it ends (its header needs its outcome), but what it holds until
then stays bounded: its pieces are handed on in order as soon as each is complete (a
message once the next piece begins, a call once it ended), and a verb writes them
aside (a temporary file) or, on a live stream, out at once.
"""

import difflib
import os
import re
from collections import deque
from datetime import datetime, timezone
from stat import S_ISREG
from tempfile import SpooledTemporaryFile

from ndagent.feed import read_here
from ndagent.figures import duration_text
from ndagent.formats.base import indented_json
from ndagent.frame import Command
from ndagent.model import OUTCOMES, json_size
from ndagent.options import byte_size, positive_number
from ndagent.output import (
    END,
    FULL,
    LEAN,
    NEXT_NUMBER,
    ONCE_BEGIN,
    ONCE_END,
    SAME_NUMBER,
    Marks,
    Output,
)
from ndagent.sources import STDIN, source_name
from ndagent.terminal import escape_code, escape_field, escape_prose

# The bounds of what a transcript shows (characters), and of a whole document (bytes).
MAX_ARGS = 4_000
MAX_RESULT = 10_000
MAX_THINKING = 10_000
MAX_BYTES = 64 << 20
# Past --max-bytes: texts are cut to this many characters, tool bodies and thinking left out.
LEAN_CHARS = 1_000
LEAN_NOTE = ("Output limit of {:,} bytes reached: from here, tool bodies and thinking are "
             "left out.")
# What a run keeps of its pieces before they are written, in characters: beyond it a
# verb writes the complete ones (memory stays flat on any stream).
KEEP_CHARS = 4 << 20
# What it keeps behind a call still open (the pieces after it, its subagent's calls):
# beyond it the call is written as it stands, pending, and what came after it follows.
OPEN_CALL_CHARS = 8 << 20
OPEN_CALL_SHOWN = ("a call stayed open while more than {:,} characters of the run came "
                   "after it: it is shown pending, and its later subagent calls after it")

NO_PROMPT = "The stream holds no prompt."
NO_ANSWER = "No answer."
NO_OUTPUT = "No output."
CUT_OFF = "The input ended before the run's end event (last line {})."

# The kinds of piece.
PROMPT, PROSE, THINKING, CALL = "prompt", "prose", "thought", "call"


class Bounded:
    """A stream text cut for showing (OUTPUTS.md's Cut): its ``head``, how many
    characters were left out after it (``omitted``, 0 for none) and its ``tail``; each
    part with its control and invisible characters spelt out by ``escape`` (for prose, or
    ``escape_code``), so that no spelt-out character is split.  ``\\r\\n`` is ``\\n``
    first."""

    __slots__ = ("head", "omitted", "tail")

    def __init__(self, text, limit=None, escape=escape_prose):
        text = text.replace("\r\n", "\n")
        if limit is None or len(text) <= limit:
            self.head, self.omitted, self.tail = escape(text), 0, ""
            return
        keep_tail = limit // 4
        self.head = escape(text[:limit - keep_tail])
        self.omitted = len(text) - limit
        self.tail = escape(text[len(text) - keep_tail:])

    def marker(self):
        return f"[… {self.omitted:,} characters omitted …]"

    def parts(self):
        """The lines to show, as text: the head, the marker line, the tail."""
        if not self.omitted:
            return self.head
        return f"{self.head}\n{self.marker()}\n{self.tail}"

    def __len__(self):
        return len(self.head) + len(self.tail)


def field(value):
    """A one-line stream field (a model, an id, a name, a target) for showing."""
    return escape_field(value if value.__class__ is str else str(value))


class Call:
    """A tool call of a transcript: its number in its run, what its start and end say,
    what is shown of its arguments (``label``, ``info``: "Command" "sh", "Diff" "diff",
    "Arguments" "json") and of its result (a Bounded, or None), its subagent calls."""

    __slots__ = ("number", "call_id", "kind", "name", "target", "label", "info", "args",
                 "outcome", "result", "start_ms", "duration_ms", "children", "ended",
                 "parent", "max_args", "max_result", "shown", "source", "line")

    def __init__(self, number, start, max_args, max_result):
        self.number = number
        self.max_args, self.max_result = max_args, max_result
        self.call_id = start.call_id
        self.kind = start.kind
        self.name = start.name
        self.target = start.target
        self.parent = start.parent
        self.label, self.info, self.args = _shown_args(start.kind, start.args, max_args)
        self.outcome = "pending"
        self.result = None
        self.start_ms = start.time_ms
        self.duration_ms = None
        self.children = []
        self.ended = False
        self.shown = False  # whether it was handed on (its later end changes nothing)
        self.source, self.line = start.source, start.line

    def end(self, end, result_text):
        self.ended = True
        self.outcome = end.outcome or "unknown"
        if self.args is None and end.args is not None:
            self.label, self.info, self.args = _shown_args(end.kind, end.args, self.max_args)
        if self.kind is None:
            self.kind, self.name = end.kind, end.name
        if self.target is None:
            self.target = end.target
        text = result_text(end)
        self.result = None if not text else Bounded(text, self.max_result, escape_code)
        if self.start_ms.__class__ is int and end.time_ms.__class__ is int \
                and end.time_ms >= self.start_ms:
            self.duration_ms = end.time_ms - self.start_ms

    def size(self):
        return len(self.args or "") + len(self.result or "") + 200

    def held(self):
        """What it holds with its subagent calls, in characters."""
        return self.size() + sum(child.held() for child in self.children)

    def summary(self):
        """The parts of its one-line summary: KIND, TARGET, OUTCOME, NAME, DURATION
        (None where unknown), the outcome never stream text."""
        return (self.kind or "tool", self.target, self.outcome, self.name,
                None if self.duration_ms is None else duration_text(self.duration_ms))


def _shown_args(kind, args, limit):
    """(label, info, Bounded) of a call's arguments: a shell command alone, an edit's
    old and new strings as a unified diff, else the JSON indented by 2; None when it
    has none."""
    if args is None:
        return None, None, None
    if args.__class__ is dict:
        command = args.get("command")
        if kind == "shell" and command.__class__ is str:
            return "Command", "sh", Bounded(command, limit, escape_code)
        old, new = args.get("old_string"), args.get("new_string")
        if kind == "edit" and old.__class__ is str and new.__class__ is str:
            path = args.get("file_path")
            path = path if path.__class__ is str else ""
            diff = "".join(difflib.unified_diff(_lines(old), _lines(new), path, path, n=3))
            return "Diff", "diff", Bounded(diff, limit, escape_code)
    text = args if args.__class__ is str else indented_json(args)
    return "Arguments", "json", Bounded(text, limit, escape_code)


def _lines(text):
    """The lines of a text for a diff, each ending with a newline (the last too, so
    that no two lines of the diff run together)."""
    lines = text.splitlines(True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


class RunPieces:
    """The pieces of one run, in stream order: the prompt, each message's text, each
    thinking and each tool call (a subagent's inside the call it belongs to).  ``ready``
    hands on the complete ones from the front; ``finish`` the rest, the answer apart."""

    def __init__(self, start, result_text, max_chars):
        self.start = start
        self.result_text = result_text
        self.max_args = self.max_result = self.max_thinking = max_chars
        if max_chars is None:
            self.max_args, self.max_result, self.max_thinking = MAX_ARGS, MAX_RESULT, \
                MAX_THINKING
        self.handed_on = False  # whether a piece was handed on
        self.pieces = deque()  # [kind, value, size]; a PROSE value: [message key, [texts]]
        self.kept = 0  # about how many characters the pieces hold
        self.calls = 0
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        # The prompts that came before any other piece (the Prompt section); a later
        # one is a piece in its place.
        self.prompt_texts = []

    def prompt(self, prompt):
        if not self.pieces and not self.calls and not self.handed_on:
            self.prompt_texts.append(Bounded(prompt.text))
        else:
            self._add(PROMPT, Bounded(prompt.text), len(prompt.text))

    def text(self, piece):
        pieces, text = self.pieces, piece.text
        last = pieces[-1] if pieces else None
        if last is not None and last[0] is PROSE and last[1][0] == piece.message:
            last[1][1].append(text)
            last[2] += len(text)
            self.kept += len(text)
        else:
            self._add(PROSE, [piece.message, [text]], len(text))

    def thinking(self, thinking):
        self._add(THINKING, Bounded(thinking.text, self.max_thinking),
                  min(len(thinking.text), self.max_thinking))

    def call_started(self, start, parent):
        """The Call of a ToolStart; ``parent``: the open Call it belongs to, or None."""
        self.calls += 1
        call = Call(self.calls, start, self.max_args, self.max_result)
        if parent is not None and not parent.ended:
            parent.children.append(call)
            self.kept += call.size()
        else:
            self._add(CALL, call, call.size())
        return call

    def call_ended(self, call, end):
        """A call ended; ``call``: its Call, or None when its start was not seen."""
        if call is None:
            call = self.call_started(end, None)
        before = call.size()
        call.end(end, self.result_text)
        if not call.shown:
            self.kept += call.size() - before

    def blocking(self):
        """The call still open at the front, which the complete pieces behind it wait
        for, or None."""
        if not self.pieces:
            return None
        kind, value, _ = self.pieces[0]
        return value if kind is CALL and not value.ended else None

    def _add(self, kind, value, size):
        self.pieces.append([kind, value, size])
        self.kept += size

    def ready(self, everything=False):
        """The complete pieces at the front, handed on (all of them when
        ``everything``, or only once they hold more than KEEP_CHARS)."""
        if not everything and self.kept <= KEEP_CHARS:
            return []
        found = []
        pieces = self.pieces
        while len(pieces) > 1 or (pieces and pieces[0][0] is not PROSE):
            kind, value, size = pieces[0]
            if kind is CALL and not value.ended:
                break
            pieces.popleft()
            self.handed_on = True
            # A call's size grew at its end: what it holds now is let go.
            self.kept -= value.held() if kind is CALL else size
            found.append(self._hand_on(kind, value))
        if not pieces:
            self.kept = 0
        return found

    def _hand_on(self, kind, value):
        """(kind, value) of a piece handed on: a message's text joined."""
        if kind is CALL:
            self._count(value)
        elif kind is PROSE:
            value = "".join(value[1])
        return kind, value

    def _count(self, call):
        call.shown = True
        self.outcomes[call.outcome] = self.outcomes.get(call.outcome, 0) + 1
        for child in call.children:
            self._count(child)

    def finish(self, end, pending):
        """The pieces left, in order, and the answer (its text) or None: the last
        message of a run that ended ok, taken out of the transcript."""
        outcomes = end.outcomes or {}
        for call in pending:
            call.outcome = "pending"
        answer = None
        pieces = list(self.pieces)
        self.pieces.clear()
        self.kept = 0
        for kind, value, _ in pieces:
            if kind is CALL:
                _final_outcomes(value, outcomes)
        if end.ok and pieces and pieces[-1][0] is PROSE:
            answer = "".join(pieces.pop()[1][1])
        return [self._hand_on(kind, value) for kind, value, _ in pieces], answer

    def calls_said(self):
        """'3: 2 success, 1 failure' (outcomes in the model's order, zeros left out)."""
        said = [f"{count} {outcome}" for outcome, count in self.outcomes.items() if count]
        total = sum(self.outcomes.values())
        return f"{total:,}: " + ", ".join(said) if said else "0"


def _final_outcomes(call, outcomes):
    """The outcome only the run's end tells (a call denied by a permission rule)."""
    final = outcomes.get(call.call_id) if call.call_id is not None else None
    if final is not None:
        call.outcome = final
    for child in call.children:
        _final_outcomes(child, outcomes)


def call_size(call):
    """What keeping a Call costs, for the frame's pairer."""
    return json_size(call.args.head if call.args is not None else None) + 400


# The header of a run.

def outcome_word(end):
    """ok, failed or cut off; the CSS class suffix of each is ok, failed, cutoff."""
    if end.cutoff:
        return "cut off"
    return "ok" if end.ok else "failed"


def header_fields(start, end, pieces, agent_title):
    """[(name, value, is_code)] of a run's header, each only when known: the values
    are spelt out (one-line fields) or ndagent's own figures."""
    fields = []
    version = f" {field(start.version)}" if start.version else ""
    fields.append(("Agent", f"{agent_title}{version}", False))
    model = end.model or start.model
    if model:
        fields.append(("Model", field(model), True))
    if start.session_id:
        fields.append(("Session", field(start.session_id), True))
    fields.append(("Source", f"{field(start.source)}:{start.line}", True))
    if start.time_ms.__class__ is int and 0 <= start.time_ms < 253402300800000:
        when = datetime.fromtimestamp(start.time_ms / 1000, timezone.utc)
        fields.append(("Started", when.isoformat(timespec="milliseconds")
                       .replace("+00:00", "Z"), False))
    fields.append(("Outcome", outcome_word(end), False))
    if end.duration_ms.__class__ in (int, float) and end.duration_ms >= 0:
        fields.append(("Duration", duration_text(end.duration_ms), False))
    tokens = tokens_said(end.usage)
    fields.append(("Tokens", tokens or "not reported", False))
    cost = end.cost_usd
    fields.append(("Cost", f"${cost:,.4f}" if cost.__class__ in (int, float)
                   else "not reported", False))
    fields.append(("Tool calls", pieces.calls_said(), False))
    return fields


_TOKEN_WORDS = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
                ("cacheWrite", "cache write"))


def tokens_said(usage):
    """'input 8, output 61, cache read 32,151, cache write 2,029', or None."""
    if usage.__class__ is not dict:
        return None
    said = [f"{word} {usage[name]:,}" for name, word in _TOKEN_WORDS
            if usage.get(name).__class__ is int]
    return ", ".join(said) or None


def ending_text(end):
    """What ends a failed run's transcript: its failure text (a Bounded)."""
    failure = end.failure
    return Bounded(failure if failure.__class__ is str else
                   "the run reported failure" if failure is None else str(failure))


class TranscriptCommand(Command):
    """What ``markdown`` and ``html`` share: the runs' pieces in order, written aside
    as they complete (or out at once, on a live stream) and each run with its header
    when it ends; a subclass says how each part is written (``head``, ``run_top``,
    ``run_fields``, ``prompts``, ``piece``, ``ending``, ``tail``, ``note_text``).

    What only the order of the document knows is written as the output's marks
    (ndagent.output.Marks): each run's number, and where a piece has a lean form,
    both, the output writing the lean one past --max-bytes.  So the inputs may be read
    in shares, each by a command that does not know what the ones before it wrote."""

    # "whole_text": a message is written once whole, so its text may come whole too
    # (where an agent streams it as deltas and then whole, the deltas are passed over).
    needs = frozenset({"text", "tools", "ends", "transcript", "whole_text"})
    per_input = True  # each FILE is a stream of its own (FILE: no run)
    splits_files = True

    @classmethod
    def add_options(cls, parser):
        parser.add_argument(
            "--title", default="Agent transcript", metavar="TEXT",
            help="the document's title (default: Agent transcript)",
        ).brief = "the document's title"
        parser.add_argument(
            "--max-chars", type=positive_number, metavar="N",
            help=f"show at most N characters of each call's arguments and result and of "
                 f"each thinking (default: {MAX_ARGS:,}, {MAX_RESULT:,} and "
                 f"{MAX_THINKING:,}): the first three quarters and the last quarter, the "
                 "characters left out said between them",
        ).brief = "bound each argument, result and thinking to N characters"
        parser.add_argument(
            "--max-bytes", type=byte_size, default=MAX_BYTES, metavar="SIZE",
            help="past SIZE bytes written (default: 64M), every later call is its summary "
                 "line only, thinking is left out and texts are cut to "
                 f"{LEAN_CHARS:,} characters; headers, outcomes and answers stay",
        ).brief = "keep the document near SIZE bytes (default: 64M)"
        parser.add_argument(
            "--no-thinking", action="store_true",
            help="leave the model's thinking out",
        ).brief = "leave the thinking out"
        parser.add_argument(
            "--split", metavar="DIR",
            help=f"write each run to a file of its own in the directory DIR, named "
                 f"run-NUMBER-SESSION.{cls.SUFFIX} (the session id with any character but "
                 "letters, digits, '.', '_' and '-' made '_'), and each file's path on "
                 "standard output",
        ).brief = "a file per run in DIR"

    @classmethod
    def check_options(cls, parser, args):
        super().check_options(parser, args)
        if args.split is not None and not os.path.isdir(args.split):
            parser.error(f"--split {args.split}: no such directory")

    # The file name suffix of a document (--split).
    SUFFIX = None

    def __init__(self, args, prog, out):
        super().__init__(args, prog, out)
        self.split = args.split  # the directory of a file per run, or None
        self.target = None  # under --split, the file of the run in hand
        self.target_path = None  # and its path
        self.number = 0  # the runs so far, across inputs (--split: in file names)
        # What the run in hand's number is written as: first, then again (the output's
        # marks; under --split, the number).
        self.marks = None
        self.pieces = None  # the RunPieces of the run in hand
        self.live = False  # whether the run in hand is written as it comes
        self.aside = None  # where a run's pieces wait for its header (a temporary file)
        self.begun = False  # whether the run in hand's transcript section is begun
        self.runs = []  # (agent, outcome word, source, line) of each run, in order
        self.empty = []  # the inputs with no run
        self.lean_note = self.note_text(LEAN_NOTE.format(args.max_bytes))

    def read(self, inputs):
        """Under --split, in this process: each run's file is named after its number."""
        if self.split is None:
            super().read(inputs)
        else:
            read_here(self, inputs)

    def sources(self):
        """The inputs, as the user named them."""
        return [field(source_name(name)) for name in self.args.files] or [field(STDIN)]

    def begin_output(self):
        if self.split is None:
            self.out.marked = Marks(self.args.max_bytes)
            self.emit(self.head(self.args.title, self.sources()))

    def begin_run(self, start):
        self.number += 1
        self.marks = (NEXT_NUMBER, SAME_NUMBER) if self.split is None else \
            (str(self.number),) * 2
        self.pieces = RunPieces(start, self.format.result_text, self.args.max_chars)
        self.begun = False
        self.live = _live(start.source)
        if self.split is not None:
            self.open_target(start)
        if self.live:
            self.emit(self.run_top(self.marks, self.format, start, None))
        else:
            # Closed when the run ends (end_run), having been copied out.
            self.aside = SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115

    def prompt(self, prompt):
        self.pieces.prompt(prompt)
        self.write_ready()

    def text(self, piece):
        pieces = self.pieces
        pieces.text(piece)
        # Inline: this runs for each piece of text (a Claude stream's every delta).
        if self.live or pieces.kept > KEEP_CHARS:
            self.write_ready()

    def thinking(self, thinking):
        if not self.args.no_thinking:
            self.pieces.thinking(thinking)
            self.write_ready()

    def keep(self, start):
        parent = None
        if start.parent is not None:
            parent = self.pairer.get(start.parent)
        call = self.pieces.call_started(start, parent)
        return call, call_size(call)

    def call_ended(self, kept, end):
        self.pieces.call_ended(kept, end)
        self.write_ready()

    def call_again(self, kept, start):
        kept.ended = True  # its end can no longer be told from the new call's

    def calls_dropped(self, dropped, start, why):
        for call in dropped:
            call.ended = True
        self.warn(start, why + ": the oldest are shown pending", once="calls-dropped")

    def write_ready(self):
        pieces = self.pieces
        for piece in pieces.ready(everything=self.live):
            self.put(piece)
        # Memory stays flat behind a call left open: it is shown as it stands.
        while pieces.kept > OPEN_CALL_CHARS:
            call = pieces.blocking()
            if call is None:
                break
            call.ended = True
            self.warn(call, OPEN_CALL_SHOWN.format(OPEN_CALL_CHARS), once="open-call-shown")
            for piece in pieces.ready(everything=self.live):
                self.put(piece)

    def put(self, piece):
        """Write one piece of the run in hand, its transcript section begun first."""
        if not self.begun:
            self.begun = True
            self.write_run(self.prompts(self.pieces.prompt_texts))
        kind, value = piece
        if kind is PROSE:
            text = self.shortened(value, lambda shown: self.piece(PROSE, shown))
        elif kind is CALL:
            text = self.alternatives(self.piece(CALL, value), self.piece(CALL, value, True))
        elif kind is THINKING:
            text = self.alternatives(self.piece(THINKING, value), "")
        else:
            text = self.piece(kind, value)
        self.write_run(text)

    def shortened(self, text, written):
        """``written(Bounded)`` of a message's text, and past --max-bytes of the text cut
        to LEAN_CHARS where it is longer."""
        full = written(Bounded(text))
        if len(text) <= LEAN_CHARS:
            return full
        return self.alternatives(full, written(Bounded(text, LEAN_CHARS)))

    def alternatives(self, full, lean):
        """``full``, or past --max-bytes ``lean``, the first one after the note that
        says so (the output's marks)."""
        return f"{FULL}{full}{LEAN}{ONCE_BEGIN}{self.lean_note}{ONCE_END}{lean}{END}"

    def write_run(self, text):
        """Write text of the run in hand: out at once when live, else aside."""
        data = text.encode("utf-8", "backslashreplace")
        if self.live:
            self.put_out(data)
        else:
            self.aside.write(data)

    def emit(self, text):
        self.put_out(text.encode("utf-8", "backslashreplace"))

    def partial(self):
        return [self.runs, self.empty]

    def merge(self, partials):
        for runs, empty in partials:
            self.runs.extend(runs)
            self.empty.extend(empty)

    def put_out(self, data):
        """Bytes of the document: to standard output, or the run's file (--split)."""
        if self.target is None:
            self.out.write(data)
        else:
            self.target.write(data)

    def end_run(self, end, pending):
        pieces, answer = self.pieces.finish(end, pending)
        for piece in pieces:
            self.put(piece)
        if not self.begun:
            self.put_nothing()
        if answer is None:
            ending = self.ending(end, None)
        else:
            ending = self.shortened(answer, lambda shown: self.ending(end, shown))
        if self.live:
            self.write_run(ending)
            self.emit(self.run_fields(self.format, end.start, end, self.pieces))
        else:
            self.emit(self.run_top(self.marks, self.format, end.start, end, self.pieces))
            aside, self.aside = self.aside, None
            aside.seek(0)
            while True:
                chunk = aside.read(1 << 16)
                if not chunk:
                    break
                self.put_out(chunk)
            aside.close()
            self.emit(ending)
        self.runs.append((self.format.name, outcome_word(end),
                          field(end.start.source), end.start.line))
        self.pieces = None
        if self.target is not None:
            self.close_target()
        super().end_run(end, pending)

    def put_nothing(self):
        """Begin the transcript section of a run with no piece."""
        self.begun = True
        self.write_run(self.prompts(self.pieces.prompt_texts))

    def no_run(self, source):
        self.empty.append(field(source))
        super().no_run(source)

    def not_read(self, where, message):
        self.empty.append(field(where.source))
        super().not_read(where, message)

    def end_output(self):
        if self.split is None:  # the runs numbered here, in order, as the marks were
            runs = [(number, *run) for number, run in enumerate(self.runs, 1)]
            self.emit(self.tail(runs, self.empty))

    def open_target(self, start):
        """Begin the file of a run (--split), a document of its own: its name is made
        of the run's number and its session id kept to safe characters, so that no
        stream value chooses where it goes; a symbolic link in its place is refused."""
        path = os.path.join(self.split, run_file_name(self.number, start.session_id,
                                                      self.SUFFIX))
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                             | getattr(os, "O_BINARY", 0), 0o666)
        self.target = Output(descriptor)
        self.target.marked = Marks(self.args.max_bytes)  # a document, bounded alone
        self.target_path = path
        self.emit(self.head(self.args.title, [field(start.source)]))

    def close_target(self):
        self.emit(self.tail([(self.number, *self.runs[-1])], []))
        target, self.target = self.target, None
        target.flush()
        os.close(target.fd)
        self.out.write(self.target_path.encode("utf-8", "backslashreplace") + b"\n")


# What a session id keeps in a file name (--split); at most this many characters.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
MAX_NAME = 80


def run_file_name(number, session_id, suffix):
    """run-NUMBER-SESSION.SUFFIX, the session id's characters other than letters,
    digits, '.', '_' and '-' made '_' (no separator, no '..' alone, nothing hidden);
    run-NUMBER.SUFFIX without one."""
    safe = _UNSAFE.sub("_", session_id)[:MAX_NAME] if session_id.__class__ is str else ""
    return f"run-{number}-{safe}.{suffix}" if safe else f"run-{number}.{suffix}"


def _live(source):
    """Whether an input is read as it is written: standard input that is no regular
    file (a pipe from the agent), whose runs are written piece by piece."""
    if source != STDIN:
        return False
    try:
        return not S_ISREG(os.fstat(0).st_mode)
    except OSError:
        return False
