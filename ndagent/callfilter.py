"""The filters of tool calls that ``tools`` and ``text`` share: ``-k KIND``, ``-t TOOL``
and ``-s STATUS``, in the common vocabulary of kinds and outcomes (``ndagent.model``).

A kind or a status is matched without regard to case, and a word outside the
vocabulary is a usage error that names the nearest known ones: a filter that silently
matches nothing (``-k Shell``, ``-k websearch``, ``-k bash``) is a trap.  The agent's
own tool name (``Bash``, ``run_shell_command``, a tool outside the vocabulary) is
matched with ``-t``.
"""

from argparse import ArgumentTypeError

from ndagent.model import KINDS, OUTCOME_SUFFIXES, OUTCOMES

# What each outcome means, for --help and the man page.
OUTCOME_MEANINGS = {
    "success": "the call succeeded",
    "failure": "a command ran and exited non-zero",
    "permissionDenied": "the call was denied (by the user, a setting or a policy)",
    "rejected": "the user rejected the call",
    "error": "the tool failed",
    "unknown": "the call ended, but how cannot be read",
    "pending": "the call never ended (its run ended first)",
}

# -s words: the outcome names, and the words 'text' prints for them ((failed), (denied)).
STATUS_WORDS = {
    **{outcome: outcome for outcome in OUTCOMES},
    **{suffix.strip(" ()"): outcome for outcome, suffix in OUTCOME_SUFFIXES.items()},
}


def _words(vocabulary, what, hint=""):
    """The type of a -k or -s value: comma-separated words of ``vocabulary`` ({word:
    name}), case-insensitive; the names."""
    by_case = {word.lower(): name for word, name in vocabulary.items()}

    def parse(text):
        words = [word for word in text.split(",") if word]
        if not words:
            raise ArgumentTypeError(f"no {what} in {text!r}")
        found = []
        for word in words:
            name = by_case.get(word.lower())
            if name is None:
                from difflib import get_close_matches  # lazy: for this message alone

                lower = word.lower()
                near = dict.fromkeys(by_case[known] for known in (
                    *(known for known in by_case if known.startswith(lower)),
                    *get_close_matches(lower, by_case)))
                listing = (f"nearest known ones: {', '.join(near)}" if near else
                           f"known ones: {', '.join(dict.fromkeys(vocabulary.values()))}")
                raise ArgumentTypeError(f"unknown {what} {word!r} ({listing}{hint})")
            found.append(name)
        return found

    return parse


def _tool_names(text):
    """A -t value: comma-separated tool names, compared without regard to case."""
    names = [name.lower() for name in text.split(",") if name]
    if not names:
        raise ArgumentTypeError(f"no tool name in {text!r}")
    return names


def add_call_options(parser):
    """-k, -t and -s; each action's ``words`` are what completion offers."""
    kind = parser.add_argument(
        "-k", "--kind", action="extend", metavar="KIND",
        type=_words({kind: kind for kind in KINDS}, "kind",
                    "; an agent's own tool name: -t NAME"),
        help=f"only calls of this kind: {', '.join(KINDS)} (case-insensitive); repeatable "
             "or comma-separated")
    kind.words = KINDS
    parser.add_argument(
        "-t", "--tool", action="extend", metavar="NAME", type=_tool_names,
        help="only calls of the agent's own tool NAME (case-insensitive): Bash, "
             "run_shell_command, command_execution, an MCP tool's name, a tool of no "
             "kind; with -k, the calls of either")
    status = parser.add_argument(
        "-s", "--status", action="extend", metavar="STATUS",
        type=_words(STATUS_WORDS, "status"),
        help=f"only calls with this outcome: {', '.join(OUTCOMES)}, or the word 'ndagent "
             "text' prints for it (failed, denied); case-insensitive; repeatable or "
             "comma-separated")
    status.words = tuple(STATUS_WORDS)


class CallFilter:
    """The calls the options select: by kind or tool name (``wants``, at a call's start
    or end) and by outcome (``shows``, when it is known)."""

    def __init__(self, args):
        self.kinds = frozenset(args.kind) if args.kind else None
        self.tools = frozenset(args.tool) if args.tool else None
        self.statuses = frozenset(args.status) if args.status else None

    def wants(self, call):
        """Whether the ToolStart or ToolEnd ``call`` is of a kind or tool selected."""
        if self.kinds is None and self.tools is None:
            return True
        if self.kinds is not None and call.kind in self.kinds:
            return True
        if self.tools is None:
            return False
        name = call.name if call.name is not None else call.kind
        return isinstance(name, str) and name.lower() in self.tools

    def shows(self, outcome):
        """Whether a call of ``outcome`` (one of OUTCOMES) is selected."""
        return self.statuses is None or outcome in self.statuses
