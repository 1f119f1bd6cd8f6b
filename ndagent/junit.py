"""JUnit XML, the Ant/Surefire dialect that CI services read: one ``<testsuite>`` per
FILE, one ``<testcase>`` per run.  Pure data: the verbs (validate, stats) say what a
FILE's cases are; this module writes them, every stream string escaped
(``ndagent.markup``), in a shape valid against both the strict Ant schema (every
element and attribute it requires, in its order) and the lenient Jenkins one."""

import time
from collections import deque

from ndagent import __version__
from ndagent.markup import FIELD_LIMIT, cut, cut_of, xml_attribute, xml_text
from ndagent.terminal import shortened

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n'
TAIL = "</testsuites>\n"

# A suite's <system-out> is cut to this many characters (GitLab reads reports of up to
# 30 MB a file), a failure's message to one line of MESSAGE_LIMIT, a failure's text to
# TEXT_LINES lines.
SYSTEM_OUT_LIMIT = 1 << 20
MESSAGE_LIMIT = 1000
TEXT_LINES = 100


class Case:
    """One test case: ``name``, its ``duration_ms`` (or None), and, for one that did
    not pass, ``result``: (element, type, message, text), element ``failure`` or
    ``error``."""

    __slots__ = ("name", "duration_ms", "result")

    def __init__(self, name, duration_ms=None, result=None):
        self.name = name
        self.duration_ms = duration_ms
        self.result = result


def case_name(number, line, agent, model):
    """'run N (line L): AGENT MODEL': unique in its FILE (GitLab keeps one case of a
    name), and what a reader of the report looks for."""
    return f"run {number} (line {line}): {agent} {shortened(model, FIELD_LIMIT) if model else '-'}"


class SystemOut:
    """What a suite's ``<system-out>`` holds, added a piece at a time and kept as ``cut``
    cuts it at ``limit``: its first ``limit`` characters, its last quarter of them and
    its length, however many runs a FILE holds."""

    def __init__(self, limit=SYSTEM_OUT_LIMIT):
        self.limit = limit
        self.head, self.head_size = [], 0
        self.tail, self.tail_size = deque(), 0
        self.length = 0

    def add(self, text):
        self.length += len(text)
        if self.head_size < self.limit:
            self.head.append(text)
            self.head_size += len(text)
        tail = self.tail
        tail.append(text)
        self.tail_size += len(text)
        while len(tail) > 1 and self.tail_size - len(tail[0]) >= self.limit // 4:
            self.tail_size -= len(tail.popleft())

    def text(self):
        head = "".join(self.head)
        if self.length <= self.limit:
            return head
        return cut_of(head, "".join(self.tail), self.length, self.limit)


def lines_text(lines, more):
    """A failure's text: its first lines, then how many more there were."""
    text = "".join(line + "\n" for line in lines)
    return text + (f"… {more} more\n" if more else "")


def _seconds(duration_ms):
    return "0" if duration_ms is None else f"{duration_ms / 1000:.3f}"


def suite(source, index, cases, timestamp_ms, system_out):
    """The ``<testsuite>`` of the FILE ``source``, the ``index``th (0-based) of the
    document: its ``cases``, the time of its first event (epoch milliseconds), and what
    ``<system-out>`` holds (a SystemOut, or a text cut to SYSTEM_OUT_LIMIT)."""
    name = xml_attribute(source)
    failures = sum(1 for case in cases if case.result and case.result[0] == "failure")
    errors = sum(1 for case in cases if case.result and case.result[0] == "error")
    total = sum(case.duration_ms or 0 for case in cases)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp_ms // 1000))
    lines = [f'  <testsuite name="{name}" package="{name}" id="{index}" tests="{len(cases)}" '
             f'failures="{failures}" errors="{errors}" skipped="0" time="{total / 1000:.3f}" '
             f'timestamp="{stamp}" hostname="localhost">',
             "    <properties>",
             f'      <property name="ndagent.version" value="{__version__}"/>',
             "    </properties>"]
    lines += [_case(case, name) for case in cases]
    shown = system_out.text() if system_out.__class__ is SystemOut else cut(
        system_out, SYSTEM_OUT_LIMIT)
    lines.append(f"    <system-out>{xml_text(shown)}</system-out>")
    lines += ["    <system-err></system-err>", "  </testsuite>"]
    return "\n".join(lines) + "\n"


def _case(case, classname):
    head = (f'    <testcase name="{xml_attribute(case.name)}" classname="{classname}" '
            f'time="{_seconds(case.duration_ms)}"')
    if case.result is None:
        return head + "/>"
    element, kind, message, text = case.result
    message = xml_attribute(cut(message, MESSAGE_LIMIT))
    return (f'{head}>\n      <{element} type="{kind}" message="{message}">{xml_text(text)}'
            f"</{element}>\n    </testcase>")
