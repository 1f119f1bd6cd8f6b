"""Options: the parser every command is made with, the options all verbs share, and
the exit statuses their --help and man pages list."""

import argparse
import os
import re
import stat
import sys
import time

from ndagent import __version__
from ndagent.decoder import MAX_LINE
from ndagent.figures import date_of, zone_of
from ndagent.formats import (
    DETECT_OBJECTS,
    a_or_an,
    agents,
    all_formats,
    fallback,
    leaner,
    sharing_envelope,
)
from ndagent.model import epoch_ms
from ndagent.output import die_of_sigpipe, write_all, write_message
from ndagent.sources import DOCUMENT_BYTES, STDIN, STREAM_FILES
from ndagent.terminal import escape_controls

# Without -j, the FILEs of a verb that reads each on its own are shared among
# processes when they add up to this many bytes: below, the processes would cost more
# than they save.
SHARE_FROM = 8 << 20

# The exit statuses every command shares, (status, meaning), and a note after them: the
# one source of the "exit status:" part of --help and of the man pages' EXIT STATUS.
EXIT_STATUSES = (
    ("0", "success"),
    ("1", "the stream is bad or incomplete: no event at all, a run without a result\n"
          "event, a failed run, a warning under --strict"),
    ("2", "usage error, a FILE that cannot be read or that is the output file,\n"
          "output that cannot be written, or no memory for a line (--max-line)"),
    ("130", "interrupted (Ctrl-C)"),
)
EXIT_STATUS_NOTE = """\
When the reader of standard output goes away (as in '| head -1'), the command
stops quietly, as cat does."""


# What the commands that print JSON say in --help about a terminal (ndagent.terminal).
JSON_ON_A_TERMINAL = """\
JSON output on a terminal: DEL, the C1 control characters and the characters that
reorder or hide text (bidirectional controls, zero-width and tag characters) are
written as \\u escapes (\\u009b, \\udb40\\udc01): the same JSON values, harmless to
show. Through a pipe or to a file, the bytes are as orjson writes them."""


def format_exit_status(statuses=EXIT_STATUSES, note=EXIT_STATUS_NOTE):
    """The "exit status:" part of --help."""
    lines = [f"  {status:<5}" + meaning.replace("\n", "\n       ")
             for status, meaning in statuses]
    if note:
        lines.append("  " + note.replace("\n", "\n  "))
    return "exit status:\n" + "\n".join(lines)


EXIT_STATUS = format_exit_status()

EXIT_OK, EXIT_BAD_STREAM, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Help(argparse._HelpAction):
    """``-h``: the usage, each option in one line and one example; ``--help``: all of it
    (as ripgrep's)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string == "-h":
            parser._print_message(parser.format_short_help(), sys.stdout)
        else:
            parser.print_help()
        parser.exit()


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, as every other message; ``-h`` short, ``--help`` long."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, add_help=False, **kwargs)
        self.add_argument("-h", "--help", action=_Help,
                          help="-h: the usage and the options in short; --help: all of this"
                          ).brief = "-h: this summary; --help: all of it"

    # The width of a formatter made for anything but help: argparse makes one for
    # each option added (to check its metavar), which would import shutil to ask the
    # terminal's width each time a command starts.
    formatter_width = 80

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=self.formatter_width)

    # The verb whose help this is (None: ndagent's own), and whether its description
    # ends with what the agents' formats say of that verb and of every command, added
    # when help is shown (made from every format's declaration).
    verb = None
    agents_paragraph = False
    # The man page -h points to (None: the one named after the program).
    man_page = None

    def agents_paragraphs(self):
        """The paragraphs that end the description (for --help and the man pages): for
        ndagent itself, how an input's agent is detected; for a verb, what the agents'
        formats say of it, and where the former is."""
        if self.verb is None:
            return agents_help()
        return "\n\n".join(filter(None, (agents_prose(self.verb), agents_listing())))

    def format_short_help(self):
        """What ``-h`` prints: the usage in a line, the summary, each option in one line,
        one example, and where the rest is."""
        parts = self.help_parts
        # The verb's own options first, then those every command has, help last.
        listed = sorted(self._actions, key=lambda action: (
            bool(action.option_strings), action.dest in _COMMON or isinstance(action, _Help),
            isinstance(action, _Help)))
        lines = [f"usage: {self.short_usage()}", f"{parts['summary']}.", ""]
        # An option that goes with another (``short_with``: its dest) shares its line.
        joined = {}
        for action in listed:
            if getattr(action, "short_with", None) is not None:
                joined.setdefault(action.short_with, []).append(_short_name(action))
        lines += [f"  {', '.join([_short_name(action), *joined.get(action.dest, ())]):<21} "
                  f"{_brief(action)}" for action in listed
                  if getattr(action, "short_with", None) is None]
        if parts.get("commands"):
            lines += ["", "commands:", parts["commands"]]
        lines += ["", "example:", *first_example(parts["examples"]),
                  f"More: --help, 'man {self.man_page or self.prog.replace(' ', '-')}'"
                  + ("." if self.verb is None else "; how an agent is detected: 'man ndagent'.")]
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def short_usage(self):
        """The usage in one line: the options as ``[OPTION ...]``, then the arguments."""
        if self.usage:
            return self.usage % {"prog": self.prog}
        arguments = [_usage_word(action) for action in self._actions
                     if not action.option_strings]
        return " ".join([self.prog, "[OPTION ...]", *arguments])

    def format_help(self):
        self.formatter_width = None  # the terminal's
        if self.agents_paragraph:
            self.agents_paragraph = False
            self.description = f"{self.description}\n\n{self.agents_paragraphs()}"
        return super().format_help()

    def format_usage(self):
        self.formatter_width = None
        return super().format_usage()

    def error(self, message):
        # The message may quote an argument: a file name can hold escape sequences.
        self.exit(EXIT_USAGE, f"{self.prog}: {escape_controls(message)} "
                              f"(see '{self.prog} --help')\n")

    def parse_known_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(_attach_optional_values(self, args), namespace)

    def _print_message(self, message, file=None):
        """Help, version and usage, written as every other output: argparse ignores
        write errors ('--help > /dev/full' said nothing, status 0)."""
        if not message:
            return
        data = message.encode("utf-8", "replace")
        if file is not sys.stdout:
            write_message(data)
            return
        try:
            write_all(1, data)
        except BrokenPipeError:
            sys.exit(die_of_sigpipe())
        except OSError as error:
            write_message(f"{self.prog}: write error: {error.strerror or error}\n".encode())
            sys.exit(EXIT_USAGE)


def _attach_optional_values(parser, args):
    """An option whose value is optional (``nargs="?"``, as --color) takes the next
    word as its value only when it is one of its choices (``--color never FILE``), or
    one that its ``takes`` test takes (``--sessions`` a list of agents), or an attached
    value (``--color=never``); else a bare ``--color`` means its ``const``
    and the word after it stays an argument (a FILE): argparse alone took any word
    after it for the option's value."""
    optional = {name: action for action in parser._actions
                if action.nargs == "?" and action.option_strings
                for name in action.option_strings}
    if not optional:
        return args
    names = [name for name in parser._option_string_actions if name.startswith("--")]
    given = []
    words = iter(enumerate(args))
    for index, arg in words:
        if arg == "--":
            return given + args[index:]
        name = _full_name(arg, names)
        action = optional.get(name)
        if action is None:
            given.append(arg)
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        takes = getattr(action, "takes", None)
        if following is not None and (action.choices and following in action.choices
                                      or takes is not None and takes(following)):
            next(words)
            given.append(f"{name}={following}")
        else:
            given.append(f"{name}={action.const}")
    return given


def _full_name(arg, names):
    """The long option ``arg`` names, where it is a unique abbreviation of one of
    ``names`` (as argparse allows); else ``arg`` (an attached value: no option here)."""
    if not arg.startswith("--") or "=" in arg or arg in names:
        return arg
    found = [option for option in names if option.startswith(arg)]
    return found[0] if len(found) == 1 else arg


def split_command(argv, parsers):
    """``(options, command)`` of a command line that runs a COMMAND, as timeout, nice
    and env read theirs: the first word that is no option, nor an option's value,
    begins COMMAND, and all that follows is its arguments; '--' may end the options.
    ``parsers``: those whose options may come before COMMAND, which say which options
    take a value (a word of its own, unless attached: ``--save=FILE``, ``-kshell``)."""
    actions = {name: action for parser in parsers
               for name, action in parser._option_string_actions.items()}
    longs = [name for name in actions if name.startswith("--")]
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return argv[:index], argv[index + 1:]
        if not arg.startswith("-") or arg == "-":
            break
        index += 1 + _value_words(actions, longs, arg, argv[index + 1:])
    return argv[:index], argv[index:]


def _value_words(actions, longs, arg, rest):
    """How many words after the option ``arg`` are its value: 0 or 1.  ``actions``:
    {option string: action}; ``longs``: the long ones, for abbreviations."""
    if arg.startswith("--"):
        action = actions.get(_full_name(arg, longs))
        return 0 if action is None or "=" in arg else _takes(action, rest)
    for at, char in enumerate(arg[1:], 2):  # short options together: -vq, -vk NAME, -kNAME
        action = actions.get(f"-{char}")
        if action is None:
            return 0  # the parser reports it
        if action.nargs != 0:
            return 0 if at < len(arg) else _takes(action, rest)
    return 0


def _takes(action, rest):
    """Whether the option of ``action``, given without a value attached, takes the next
    word (``rest[0]``) as its value."""
    if action.nargs == 0:
        return 0
    if action.nargs == "?":
        return int(bool(rest) and bool(action.choices) and rest[0] in action.choices)
    return 1


# --color, in every command that colours its output: a bare --color is always, as in
# GNU grep and ls; auto colours on a terminal, unless NO_COLOR is set or TERM is dumb.
# WHEN is taken attached (--color=never) or as the next word (--color never), never a
# word that is not one of them (a FILE).
COLOR_CHOICES = ("auto", "always", "never")
COLOR_ENVIRONMENT = {
    "NO_COLOR": "when set and not empty, --color=auto does not colour (no-color.org)",
    "TERM": "when dumb, --color=auto does not colour",
}


def add_color_option(parser, what):
    """``--color[=WHEN]``; ``what``: what it colours, for --help."""
    parser.add_argument(
        "--color", nargs="?", choices=COLOR_CHOICES, const="always", default="auto",
        metavar="WHEN",
        help=f"colour {what}: WHEN is always (a bare --color too), never, or auto (the "
             "default): when standard output is a terminal, NO_COLOR is not set and TERM is "
             "not dumb; '--color never' and '--color=never' are the same")


# --format: the same value name for the same output in every verb (ndjson: one JSON
# object a line); an old name is still accepted, so that scripts keep working.
FORMAT_ALIASES = {"json": "ndjson"}


def add_format_option(parser, formats, default, default_help=None):
    """``--format NAME``; ``formats``: {name: what it prints}, for --help.  ``default``
    None: the command chooses, as ``default_help`` says."""
    aliases = [f"{old} for {new}" for old, new in FORMAT_ALIASES.items() if new in formats]
    action = parser.add_argument(
        "--format", choices=tuple(formats), default=default,
        type=lambda name: FORMAT_ALIASES.get(name, name),
        help="; ".join(f"{name}: {meaning}" for name, meaning in formats.items())
             + f" (default: {default_help or default})"
             + (f"; the old name {', '.join(aliases)} is accepted" if aliases else ""))
    *others, last = formats
    action.brief = f"{', '.join(others)} or {last}" + (f" (default: {default})" if default else "")
    return action


def use_color(choice, fd):
    """Whether to colour output on ``fd``, by ``--color``."""
    if choice != "auto":
        return choice == "always"
    return (os.isatty(fd) and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")


# How shells complete a FILE argument, for the completions generated by shtab (at
# development time: ndagent never imports it).
COMPLETE_FILES = {"bash": "_shtab_compgen_files", "zsh": "_files"}


# A space at which a paragraph of help is never broken (within an agent's command
# line), a plain one in the paragraph filled.
_NO_BREAK = "\xa0"


def _fill(text):
    """A paragraph of help, filled as the others are."""
    from textwrap import fill  # lazy: only --help needs it

    return fill(text, 86, break_on_hyphens=False,
                break_long_words=False).replace(_NO_BREAK, " ")


def _invocations():
    """The agents and the command lines that print their streams, for help."""
    listed = [f"{each.title} ('{each.invocation.replace(' ', _NO_BREAK)}')"
              for each in all_formats() if each.form == "stream"]
    return " or ".join([", ".join(listed[:-1]), listed[-1]] if len(listed) > 1 else listed)


def agents_listing():
    """What a verb's --help says of the agents: which, and where detection is told."""
    sessions = ", ".join(each.title for each in all_formats() if each.form == "session")
    return _fill(f"Agents: {_invocations()}; and the session files agents keep on disk: "
                 f"{sessions}. {SEE_DETECTION}")


def agents_help():
    """What every command's --help says of the agents it reads, from their formats."""
    formats = [each for each in all_formats() if each.form == "stream"]
    listing = _invocations()
    found = fallback()
    otherwise = (f"an input whose objects all have types {found.title} uses is "
                 f"{found.title}'s (so is one with no object); any other is reported"
                 if found is not None else "it is reported")
    other = f"{a_or_an(formats[-1].name)} event in {a_or_an(formats[0].name)} stream"
    return _fill(
        f"Agents: each FILE (and standard input) is read as the stream of the agent "
        f"detected from its first JSON objects, by their keys and values: {listing}; objects "
        f"before "
        f"the first decisive one are held and handled after it. With none in "
        f"{DETECT_OBJECTS} objects or in the whole input, {_envelope_rule()}"
        f"{otherwise}, 'not an agent "
        f"stream', and not read (status 1); so is an agent's json output rather than its "
        f"stream (an array of objects, or a lone '{{' or '[' line, and no decisive "
        f"object): 'json output, not stream-json'. --agent NAME names the agent instead: "
        f"an input of another agent is reported and not read (status 1). Once the agent "
        f"is detected, an object of another agent is a bad line, '{other}': skipped with a "
        f"warning (an error in validate), wherever a line is decoded: every line in "
        f"validate and under --strict, else the lines that may hold an event the command "
        f"needs. The session files agents keep on disk are told the same way, by their "
        f"content, never by their name; one that is a single JSON document (a pretty-printed "
        f"object) is read whole, up to {DOCUMENT_BYTES >> 20} MiB.")


def _envelope_rule():
    """What detection does with an input whose objects are all in an envelope that
    several agents write ("" when no format leans to one)."""
    found = leaner()
    if found is None:
        return ""
    sharing = [each.title for each in sharing_envelope(found)]
    titles = " and ".join([", ".join(sharing[:-1]), sharing[-1]]) if len(sharing) > 1 \
        else sharing[0]
    others = " or ".join(f"--agent {each.name}" for each in sharing_envelope(found)
                         if each is not found)
    choose = f" ({others} chooses)" if others else ""
    return (f"an input with an object in the envelope that {titles} write, none of whose "
            f"objects tells them apart, is {found.title}'s, and validate warns so{choose}; "
            f"otherwise ")


def agents_prose(verb):
    """What the agents' formats say of ``verb`` in its --help: a paragraph for each
    agent that says something, headed by its title ("" when none does)."""
    return "\n\n".join(_fill(f"{each.title}: {each.help[verb]}")
                        for each in all_formats() if each.help.get(verb))


# Where a verb's --help sends the reader for what every command shares.
SEE_DETECTION = ("How each input's agent is detected, and what --agent does: 'ndagent --help' "
                 "or 'man ndagent'.")


# The options every command has (command_parser), listed after a verb's own by -h.
_COMMON = ("agent", "max_line", "strict", "quiet", "version")


def _short_name(action):
    """An option as -h lists it: its names, and its value's."""
    names = ", ".join(action.option_strings) or action.metavar or action.dest
    if action.option_strings and action.nargs != 0:
        value = action.metavar or action.dest.upper()
        names += f" [{value}]" if action.nargs == "?" else f" {value}"
    return names


def _brief(action):
    """An option's help as -h gives it, in a line: its own ``brief``, else its help up
    to its first ';', ':' or '('."""
    brief = getattr(action, "brief", None)
    if brief is None:
        brief = re.split(r"; |: | \(", action.help or "", maxsplit=1)[0]
    return brief


def _usage_word(action):
    """An argument as the usage line shows it."""
    name = action.metavar or action.dest
    return {"*": f"[{name} ...]", "+": f"{name} [{name} ...]", "?": f"[{name}]",
            argparse.REMAINDER: f"[{name} ...]"}.get(action.nargs, name)


def first_example(examples):
    """The first command of an EXAMPLES text that fits in 80 columns (its continuation
    lines too), for -h."""
    lines = examples.split("\n")
    start = 0
    while start < len(lines):
        end = start + 1
        while end < len(lines) and lines[end - 1].rstrip().endswith(("\\", "|")):
            end += 1
        found = lines[start:end]
        if not found[0].lstrip().startswith("#") and max(map(len, found)) <= 80:
            return found
        start = end
    return lines[:1]


# Where an example shows an agent's command line, the verbs' EXAMPLES have this word:
# help shows the first agent's there (a verb names no agent).
AGENT = "<AGENT>"


def agent_examples(examples):
    """Examples as help shows them, the first agent's command line for AGENT."""
    return examples.replace(AGENT, next(each.invocation for each in all_formats()
                                        if each.form == "stream"))


# -q and --strict mean the same in every verb; each verb's --help says what else.
QUIET_HELP = "print no warnings, only errors"
STRICT_HELP = "make every warning an error (status 1)"


def command_parser(verb, summary, description, examples, converter=True,
                   exit_statuses=EXIT_STATUSES,
                   files_help="input streams, read in order as one; '-' or none: standard "
                              "input"):
    """The parser of ``ndagent-VERB`` with the options every command shares; ``converter``
    adds the bad-line policy options (``--strict``, ``-q``)."""
    examples = agent_examples(examples)
    parser = Parser(
        prog=f"ndagent-{verb}",
        description=f"{summary}.\n\n{description}",
        epilog=f"examples:\n{examples}\n\n{format_exit_status(exit_statuses)}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.verb, parser.agents_paragraph = verb, True
    keep_parts(parser, summary, description, examples, exit_statuses)
    if files_help is not None:  # None: a command that reads no FILE (run)
        files = parser.add_argument("files", nargs="*", metavar="FILE",
                                    help=f"{files_help}; gzip, bzip2 or xz: read "
                                         "decompressed; a directory: the stream files below "
                                         f"it ({STREAM_FILES}), in name order (FIFOs and "
                                         "devices passed over)")
        files.complete = COMPLETE_FILES
        sessions = parser.add_argument(
            "--sessions", nargs="?", const="all", default=False, type=_session_agents,
            metavar="AGENTS",
            help="read the session files that the agents keep in their default folders "
                 "(every agent's, or those of AGENTS, named as --agent names them and "
                 "comma-separated), "
                 "before any FILE: " + _stores_listing() + " (unless an agent's own "
                 "variable moves them: docs/agents.md#reading-the-agents-own-folders); a "
                 "file there that is no session is passed over",
        )
        sessions.brief = "read the agents' own session files (of AGENTS)"
        sessions.takes = _names_agents
        parser.add_argument(
            "--since", metavar="DATE",
            help="only the runs that began on DATE or later (YYYY-MM-DD, YYYYMMDD, today, "
                 "yesterday), in --tz's zone; a run with no time (as most streams' runs) "
                 "is left out",
        ).brief = "only the runs begun in that period"
        parser.add_argument(
            "--until", metavar="DATE", help="only the runs that began on DATE or before",
        ).short_with = "since"
        parser.add_argument(
            "--tz", default="local", metavar="ZONE", type=_zone,
            help="the time zone of days (--since, --until, stats --by day, week and "
                 "month): an IANA name (Europe/Paris) or UTC (default: the local zone)",
        ).short_with = "since"
    parser.add_argument(
        # AGENT rather than the choices in the usage: nine names do not fit a line.
        "--agent", choices=("auto", *agents()), default="auto", metavar="AGENT",
        help="the agent whose stream (or session file) each FILE is: auto (the default) "
             "detects it from the first objects of each FILE: " + ", ".join(agents())
    ).brief = "auto (the default), or an agent's name (--help: which)"
    parser.add_argument(
        "--max-line", type=byte_size, default=MAX_LINE, metavar="SIZE",
        help="the longest line read, in bytes (suffixes K, M, G: 1024s; default 64M): a "
             "longer line is reported and passed over without being held in memory")
    if converter:
        parser.add_argument(
            "--strict", action="store_true",
            help=f"{STRICT_HELP}; stop at the first line that is not a JSON object, or "
                 "another agent's event (by default skipped with a warning), and decode "
                 "every line in full")
        parser.add_argument(
            "-q", "--quiet", action="store_true",
            help=f"{QUIET_HELP}: no message marked 'warning:' on standard error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit").short_with = "help"
    return parser


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _zone(text):
    """--tz's value: a time zone (None: the local one)."""
    try:
        return zone_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def period(args):
    """(zone, first day, last day) of --since and --until (a day None: no bound), or
    None without either; ValueError for a DATE that is none."""
    since, until = getattr(args, "since", None), getattr(args, "until", None)
    if since is None and until is None:
        return None
    return args.tz, *(None if text is None else date_of(text, args.tz)
                      for text in (since, until))


def _names_agents(word):
    """Whether a word is a list of agents whose session files ndagent reads."""
    try:
        _session_agents(word)
    except argparse.ArgumentTypeError:
        return False
    return word != "all"


def _session_agents(text):
    """--sessions' value: the agents named (None: all of them)."""
    if text == "all":
        return None
    named = [each.strip() for each in text.split(",") if each.strip()]
    known = {each.agent for each in all_formats() if each.stores is not None}
    unknown = [each for each in named if each not in known]
    if unknown or not named:
        raise argparse.ArgumentTypeError(
            f"not agents whose session files ndagent reads ({', '.join(sorted(known))}): "
            f"{text!r}")
    return tuple(named)


def _stores_listing():
    """Where each agent's session files are, for --help."""
    home = "~"
    listed = []
    for each in all_formats():
        if each.stores is not None:
            found = ", ".join(each.stores({}, home))
            listed.append(f"{each.agent} {found}")
    return "; ".join(listed)


def byte_size(text):
    """A size option's value (--max-line, --max-bytes): a whole number of bytes, maybe
    with a suffix K, M or G."""
    digits, unit = text[:-1], text[-1:].upper()
    if unit not in _UNITS or unit == "":
        digits, unit = text, ""
    if not (digits.isascii() and digits.isdigit()) or int(digits) == 0:
        raise argparse.ArgumentTypeError(f"not a size in bytes such as 4096, 512K, 64M: {text!r}")
    return int(digits) * _UNITS[unit]


def whole_number(text):
    """An option's value: a whole number (stats --top, -j)."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return int(text)


def keep_parts(parser, summary, description, examples, exit_statuses):
    """Keep the texts --help is made of on the parser, for the man pages (man/generate.py)."""
    parser.man_short_description = summary  # argparse-manpage's NAME line
    parser.help_parts = {"summary": summary, "description": description,
                         "examples": examples, "exit_statuses": exit_statuses}


def add_filename_options(parser):
    """``-H``/``--with-filename`` and ``--no-filename``, as grep's: whether each line
    begins with the FILE it came from (``with_filename``: None until
    ``resolve_filename``)."""
    names = parser.add_mutually_exclusive_group()
    names.add_argument(
        "-H", "--with-filename", dest="with_filename", action="store_const", const=True,
        help="begin each line with the FILE it came from and a colon ('<stdin>' for "
             "standard input): the default with several FILEs or a directory")
    names.add_argument(
        "--no-filename", dest="with_filename", action="store_const", const=False,
        help="never begin a line with its FILE: the default with one FILE")


def resolve_filename(args):
    """Set ``args.with_filename`` where neither option says: on with several FILEs or a
    directory, as grep -r does."""
    if args.with_filename is None:
        files = args.files
        args.with_filename = len(files) > 1 or any(
            name != "-" and os.path.isdir(name) for name in files)


def add_keep_going_option(parser, what):
    """``--keep-going``, for a verb whose output adds up all its inputs (``what``): by
    default it prints nothing when an input could not be read, as figures without it
    would mislead."""
    parser.add_argument(
        "--keep-going", action="store_true",
        help=f"print {what} even when an input could not be read (status 2 still): by "
             "default they are not printed then, as they would leave it out silently",
    ).brief = f"print {what.split(' (')[0]} even when an input could not be read"


def add_jobs_option(parser):
    """``-j N``, for the verbs that read each FILE on its own (ndagent.shares)."""
    parser.add_argument(
        "-j", "--jobs", type=_positive, metavar="N",
        help="read the FILEs in N processes (default: one per core when they add up to "
             f"{SHARE_FROM >> 20} MB or more; 1: in this one); the output is the same")


def positive_number(text):
    """An option's value: a whole number above 0 (--max-chars)."""
    if whole_number(text) == 0:
        raise argparse.ArgumentTypeError("not a number above 0: '0'")
    return int(text)


def _positive(text):
    """A -j value: a whole number above 0."""
    if whole_number(text) == 0:
        raise argparse.ArgumentTypeError("0 processes: give 1 or more")
    return int(text)


def add_time_origin_option(parser):
    """``--time-origin TIME``: when a stream with no clock began (time_origin)."""
    parser.add_argument(
        "--time-origin", type=_time_origin, metavar="TIME",
        help="where a stream has no clock, the time it began: ISO 8601 with a zone "
             "(2026-06-01T10:00:00Z) or epoch milliseconds (default: SOURCE_DATE_EPOCH, "
             "else the FILE's modification time, else the time it is read); times made "
             "from it are marked synthetic"
    ).brief = "when a stream with no clock began"


# The last millisecond of the year 9999: the latest time the outputs can write.
MAX_TIME_MS = 253_402_300_799_999


def _time_origin(text):
    """A --time-origin value, in epoch milliseconds."""
    found = int(text) if text.isascii() and text.isdigit() else epoch_ms(text)
    if found is None or found > MAX_TIME_MS:
        raise argparse.ArgumentTypeError(
            f"not a time such as 2026-06-01T10:00:00Z or 1780308000000: {text!r}")
    return found


def time_origin(given, source):
    """The time origin of the input ``source`` (as messages name it), in epoch
    milliseconds, first found: ``given`` (--time-origin), SOURCE_DATE_EPOCH (seconds:
    the reproducible-builds convention), the modification time of a regular FILE, now
    (standard input, a pipe: its first line is being read)."""
    if given is not None:
        return given
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isascii() and epoch.isdigit() and int(epoch) * 1000 <= MAX_TIME_MS:
        return int(epoch) * 1000
    if source != STDIN:
        try:
            found = os.stat(source)
        except OSError:
            found = None
        if found is not None and stat.S_ISREG(found.st_mode):
            return found.st_mtime_ns // 1_000_000
    return time.time_ns() // 1_000_000
