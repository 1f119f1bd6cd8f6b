"""The figures of ndagent stats as GitHub-flavoured Markdown, for a CI job's summary
(``$GITHUB_STEP_SUMMARY``): tables of the figures ``Figures.report`` gives, or one row
per run.  Pure text: numbers are ndagent's, stream strings (FILE:LINE, models, commands)
stand only in code spans with every '|' escaped (``markup.table_code``), and the whole
stays under a byte limit (GitHub refuses a summary over 1024k)."""

from ndagent.figures import duration_text
from ndagent.markup import table_code, table_row
from ndagent.model import OUTCOMES, UNFINISHED

# The default byte limit: under GitHub's 1024k, with room for other steps' lines in the
# same file.  A row is written only when it and ROOM more bytes still fit.
MAX_BYTES = 1_000_000
ROOM = 200

_TOKEN_LABELS = {"input": "Input tokens", "output": "Output tokens",
                 "cacheRead": "Cache read tokens", "cacheWrite": "Cache write tokens"}
_OUTCOMES = {"ok": "✅ ok", "failed": "❌ failed", "cutoff": "⏸ cut off",
             "interrupted": "⏹ interrupted", "open": "… open"}
_GROUPS = {"agent": "Agent", "model": "Model", "file": "File"}
RUN_COLUMNS = ("#", "Source", "Agent", "Model", "Outcome", "Duration", "Input", "Output",
               "Cache read", "Cache write", "Cost", "Tool calls")
_RUN_ALIGN = ("---:", "---", "---", "---", "---", "---:", "---:", "---:", "---:", "---:",
              "---:", "---")


def cost_text(cost):
    return f"${cost:,.4f}"


class Writer:
    """Lines of Markdown within ``max_bytes``: ``row`` says whether a table's row was
    written; once one is not, nothing more is but the note that says so."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.lines = []
        self.size = 0
        self.full = False

    def line(self, text):
        if not self.full:
            self.lines.append(text)
            self.size += len(text.encode()) + 1

    def table(self, header, align, rows, total=None):
        """A table; ``total``: how many rows there are, when more than ``rows`` holds
        (the rest were never kept)."""
        if self.full:
            return
        self.line(table_row(header))
        self.line("|" + "|".join(align) + "|")
        shown = 0
        for cells in rows:
            row = table_row(cells)
            if self.size + len(row.encode()) + 1 + ROOM > self.max_bytes:
                break
            self.line(row)
            shown += 1
        left = (len(rows) if total is None else total) - shown
        if left:
            self.line("")
            self.line(f"*… {left:,} more rows not shown: the limit of {self.max_bytes:,} "
                      "bytes was reached.*")
            self.full = True
        else:
            self.line("")

    def text(self):
        return "".join(line + "\n" for line in self.lines).encode()


def groups_markdown(by, groups, max_bytes):
    """The summary of ``groups``, [(key, report)] (``Figures.report``), grouped ``by``
    (None, agent, model, file)."""
    out = Writer(max_bytes)
    out.line("### ndagent stats")
    out.line("")
    lead = [] if by is None else [_GROUPS.get(by, by.capitalize())]
    lead_align = [] if by is None else ["---"]

    def key_cells(key):
        if by is None:
            return []
        if key is None:
            return ["(none)"]
        return [key if by == "agent" else table_code(key)]

    # A session file's runs may also end interrupted or open: columns for those found.
    unfinished = [name for name in UNFINISHED
                  if any(name in report["runs"] for _, report in groups)]
    out.table([*lead, "Runs", "OK", "Failed", "Cut off",
               *(name.capitalize() for name in unfinished), "Inputs without run"],
              [*lead_align, *["---:"] * (5 + len(unfinished))],
              [[*key_cells(key), *_runs_cells(report, unfinished)] for key, report in groups])
    out.table([*lead, "Figure", "Value", "Runs reporting"], [*lead_align, "---", "---:", "---:"],
              [[*key_cells(key), *cells] for key, report in groups
               for cells in _figure_rows(report)])
    out.table([*lead, "Tool kind", "Calls", *OUTCOMES],
              [*lead_align, "---", *["---:"] * (1 + len(OUTCOMES))],
              [[*key_cells(key), *cells] for key, report in groups
               for cells in _tool_rows(report)])
    failed = [[*key_cells(key), f"{item['count']:,}", table_code(str(item["command"]))]
              for key, report in groups for item in report["failed_commands"]]
    if failed:
        out.table([*lead, "Count", "Command"], [*lead_align, "---:", "---"], failed)
    else:
        out.line("No failed shell commands.")
    return out.text()


def _runs_cells(report, unfinished):
    runs = report["runs"]
    return [f"{runs['total']:,}", f"{runs['ok']:,}", f"{runs['failed']:,}",
            f"{runs['cutoff']:,}", *(f"{runs.get(name, 0):,}" for name in unfinished),
            f"{report['inputs_without_run']:,}"]


def _figure_rows(report):
    duration, tokens, cost = report["duration_ms"], report["tokens"], report["cost_usd"]
    rows = []
    for label, name in (("total", "total"), ("median", "median"),
                        ("95th percentile", "p95")):
        value = duration[name]
        rows.append([f"Duration, {label}",
                     "not reported" if value is None else duration_text(value),
                     f"{duration['runs']:,}"])
    for name in ("input", "output", "cacheRead", "cacheWrite"):
        value = tokens[name]
        rows.append([_TOKEN_LABELS[name], "not reported" if value is None else f"{value:,}",
                     f"{tokens['runs']:,}"])
    rows.append(["Cost", "not reported" if cost["total"] is None else cost_text(cost["total"]),
                 f"{cost['runs']:,}"])
    rows.extend([name, f"{found['total']:,}", f"{found['runs']:,}"]
                for name, found in report.get("extra", {}).items())
    return rows


def _tool_rows(report):
    rows = []
    totals = dict.fromkeys(OUTCOMES, 0)
    for kind, outcomes in report["tools"].items():
        for outcome, count in outcomes.items():
            totals[outcome] += count
        rows.append([table_code(kind), f"{sum(outcomes.values()):,}",
                     *(f"{outcomes.get(outcome, 0):,}" for outcome in OUTCOMES)])
    rows.append(["**all**", f"**{report['tool_calls']:,}**",
                 *(f"**{totals[outcome]:,}**" for outcome in OUTCOMES)])
    return rows


def run_cells(number, record, by_outcome):
    """The cells of one run's row (a record of ``stats --by run``); ``by_outcome``: its
    calls of each status of OUTCOMES."""
    tokens = record["tokens"] or {}
    duration, cost = record["duration_ms"], record["cost_usd"]
    failing = [f"{count:,} {outcome}" for outcome, count in zip(OUTCOMES, by_outcome)
               if count and outcome != "success"]
    calls = f"{record['tool_calls']:,}" + (f" ({', '.join(failing)})" if failing else "")
    return [f"{number:,}", table_code(f"{record['source']}:{record['line']}"),
            record["agent"], table_code(record["model"] or ""),
            _OUTCOMES[record["outcome"]],
            "not reported" if duration is None else duration_text(duration),
            *("not reported" if tokens.get(name) is None else f"{tokens[name]:,}"
              for name in ("input", "output", "cacheRead", "cacheWrite")),
            "not reported" if cost is None else cost_text(cost), calls]


def runs_markdown(rows, total, max_bytes):
    """The table of runs: ``rows`` (cells of ``run_cells``) of ``total`` runs."""
    out = Writer(max_bytes)
    out.line(f"### ndagent stats: {total:,} runs")
    out.line("")
    out.table(RUN_COLUMNS, _RUN_ALIGN, rows, total)
    return out.text()

