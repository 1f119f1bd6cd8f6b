"""The figures of ``stats`` as text for people and as TSV rows: a group's block of
lines, a run's line, a group's columns."""

from ndagent.figures import TOKENS, duration_text, plural
from ndagent.model import OUTCOMES, UNFINISHED
from ndagent.terminal import quote

_TOKEN_LABELS = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
                 ("cacheWrite", "cache write"))
_RUN_TOKEN_LABELS = (("input", "in"), ("output", "out"), ("cacheRead", "cache read"),
                     ("cacheWrite", "cache write"))


def text_block(record):
    """The lines of a group's figures, for people."""
    runs = record["runs"]
    lines = [f"runs         {runs['total']}: {runs['ok']} ok, {runs['failed']} failed, "
             f"{runs['cutoff']} cut off"
             + "".join(f", {runs[name]} {name}" for name in UNFINISHED if name in runs)]
    if record["inputs_without_run"]:
        lines.append(f"no run       {plural(record['inputs_without_run'], 'input')}")
    duration = record["duration_ms"]
    if duration["runs"]:
        lines.append(f"duration     total {duration_text(duration['total'])}, median "
                     f"{duration_text(duration['median'])}, 95th percentile "
                     f"{duration_text(duration['p95'])} ({plural(duration['runs'], 'run')})")
    else:
        lines.append("duration     not reported")
    tokens = record["tokens"]
    if tokens["runs"]:
        said = [f"{label} {tokens[name]:,}" for name, label in _TOKEN_LABELS
                if tokens[name] is not None]
        lines.append(f"tokens       {', '.join(said)} ({plural(tokens['runs'], 'run')})")
    else:
        lines.append("tokens       not reported")
    cost = record["cost_usd"]
    lines.append(f"cost         ${cost['total']:,.4f} ({plural(cost['runs'], 'run')})"
                 if cost["runs"] else "cost         not reported")
    for name, found in record.get("extra", {}).items():
        lines.append(f"{name:<12} {found['total']:,} ({plural(found['runs'], 'run')})")
    estimate = record.get("cost_estimated_usd")
    if estimate is not None:
        lines.append(f"cost (est.)  ${estimate['total']:,.4f} estimated from the price table "
                     f"({plural(estimate['runs'], 'run')})" if estimate["runs"]
                     else "cost (est.)  no run priced by the price table")
    lines.append(f"tool calls   {record['tool_calls']}")
    for kind, outcomes in record["tools"].items():
        lines.append(f"  {kind:<12} {sum(outcomes.values())}: "
                     + ", ".join(f"{count} {outcome}" for outcome, count in outcomes.items()))
    if record["failed_commands"]:
        lines.append("failed commands, most frequent first")
        lines.extend(f"  {item['count']:>9}  {quote(item['command'])}"
                     for item in record["failed_commands"])
    return lines


def run_line(record):
    """One run's line, for people: where it began, its agent, model and outcome, then
    what it reports."""
    said = [f"{record['source']}:{record['line']}: {record['agent']} "
            f"{record['model'] or '-'} {record['outcome']}"]
    if record["duration_ms"] is not None:
        said.append(duration_text(record["duration_ms"]))
    tokens = record["tokens"]
    if tokens is not None:
        said.append(" / ".join(f"{tokens[name]:,} {label}" for name, label in _RUN_TOKEN_LABELS
                               if tokens[name] is not None) + " tokens")
    if record["cost_usd"] is not None:
        said.append(f"${record['cost_usd']:,.4f}")
    said.extend(f"{name} {value:,}" for name, value in record.get("extra", {}).items())
    if record.get("cost_estimated_usd") is not None:
        said.append(f"${record['cost_estimated_usd']:,.4f} estimated")
    calls = plural(record["tool_calls"], "tool call")
    failing = [f"{count} {outcome}" for outcome, count in
               zip(OUTCOMES, by_outcome(record["tools"])) if count and outcome != "success"]
    said.append(calls + (f" ({', '.join(failing)})" if failing else ""))
    return ", ".join(said)


def group_row(record):
    """A group's TSV columns after its key (GROUP_TSV)."""
    runs, duration, tokens = record["runs"], record["duration_ms"], record["tokens"]
    return [runs["total"], runs["ok"], runs["failed"], runs["cutoff"],
            record["inputs_without_run"], duration["runs"], duration["total"],
            duration["median"], duration["p95"], tokens["runs"],
            *(tokens[name] for name in TOKENS), record["cost_usd"]["runs"],
            record["cost_usd"]["total"], record["tool_calls"],
            *by_outcome(record["tools"])]



def by_outcome(tools):
    """The calls of each status of OUTCOMES, of {kind: {status: n}}."""
    return [sum(outcomes.get(outcome, 0) for outcomes in tools.values())
            for outcome in OUTCOMES]
