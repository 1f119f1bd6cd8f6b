"""``make bench``: ndagent against jq on the same synthetic stream, in one run.

For each command, the command and its jq equivalent run one after the other, a few
rounds; the table shows the best time of each, the throughput, the median over the
rounds of the ratio jq time / ndagent time, its target and whether it is met, how much
faster two cores make it than one (``taskset``, where there is one), and the peak
memory (max RSS).  Then the same verbs over 2 000 small files, the other agents'
streams against the Cursor one's ratios, each agent's transcripts against ``text -v``,
``stats``, and start-up on a tiny stream against ``python -c 'import orjson'``.
Ratios, not seconds, are what compare across machines.
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from shlex import quote

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from generate import generate, generated_folder, small_files  # noqa: E402 - beside
from sessions import session_archive_bench  # noqa: E402 - beside this file

# command: (ndagent arguments, equivalent jq program, target ratio on a file)
CASES = {
    "json": (["json"], ["-c", 'select(.type=="result")'], 8),
    "result": (["result"], ["-j", 'select(.type=="assistant") | .message.content[].text'], 3),
    "text": (["text"], ["-r", 'select(.type=="tool_call" and .subtype=="completed") '
                              "| .tool_call | keys[0]"], 6),
    "tools": (["tools"], ["-c", 'select(.type=="tool_call")'], 6),
    "validate": (["validate", "-q"], ["empty"], 2),
}
# The other agents' ratios, at least this part of the Cursor stream's for the same verb.
OF_CURSOR = 0.8
# Start-up: at most this many times that of python -c 'import orjson'.
STARTUP = 1.15


# The other agents' streams: (agent, ndagent arguments, the jq recipe its users write).
# For json, the recipe prints the events the agent's json object is made of, as the
# Cursor and Claude ones print their result line: Codex's holds every completed item and
# the usage, Gemini's the session, the answer's deltas and the result's stats.
AGENT_CASES = (
    ("claude", ["result"], ["-rj", 'select(.type == "stream_event" and '
                                   '.event.delta.type? == "text_delta") | .event.delta.text']),
    ("claude", ["json"], ["-c", 'select(.type=="result")']),
    ("claude", ["text"], ["-r", 'select(.type=="assistant") | .message.content[] '
                                '| select(.type=="tool_use") | .name']),
    ("codex", ["result"], ["-r", '.item | select(.type=="agent_message") | .text']),
    ("codex", ["json"], ["-c", 'select(.type=="item.completed" or .type=="turn.completed")']),
    ("gemini", ["result"], ["-j", 'select(.type=="message" and .role=="assistant") '
                                  "| .content"]),
    ("gemini", ["json"], ["-c", 'select(.type=="init" or .type=="result" '
                                'or (.type=="message" and .role=="assistant"))']),
    # The agents measured against the Claude stream's ratios (CLAUDE_TARGETS): OpenCode's
    # object is made of the text parts and the step_finish lines, Antigravity's is the
    # result's object, Copilot's, Qwen Code's and Amp's the result line.
    ("opencode", ["result"], ["-rj", 'select(.type=="text") | .part.text']),
    ("opencode", ["json"], ["-c", 'select(.type=="text" or .type=="step_finish" '
                                  'or .type=="error")']),
    ("opencode", ["text"], ["-r", 'select(.type=="tool_use") | .part.tool']),
    ("qwen", ["result"], ["-rj", 'select(.type == "stream_event" and '
                                 '.event.delta.type? == "text_delta") | .event.delta.text']),
    ("qwen", ["json"], ["-c", 'select(.type=="result")']),
    ("qwen", ["text"], ["-r", 'select(.type=="assistant") | .message.content[] '
                              '| select(.type=="tool_use") | .name']),
    ("amp", ["result"], ["-r", 'select(.type=="result") | .result']),
    ("amp", ["json"], ["-c", 'select(.type=="result")']),
    ("amp", ["text"], ["-r", 'select(.type=="assistant") | .message.content[] '
                             '| select(.type=="tool_use") | .name']),
    ("antigravity", ["result"], ["-rj", 'select(.event=="step_update") '
                                        '| .step_update.text_delta // empty']),
    ("antigravity", ["json"], ["-c", 'select(.event=="result") | .result']),
    ("antigravity", ["text"], ["-r", 'select(.event=="step_update" and .step_update.step_type'
                                     '=="tool" and .step_update.state!="ACTIVE") '
                                     "| .step_update.tool_name"]),
    ("copilot", ["result"], ["-rj", 'select(.type=="assistant.message_delta") '
                                    "| .data.deltaContent"]),
    ("copilot", ["json"], ["-c", 'select(.type=="result")']),
    ("copilot", ["text"], ["-r", 'select(.type=="tool.execution_start") | .data.toolName']),
)
# The agents whose target is the Claude stream's ratio for the same verb, within as
# much as OF_CURSOR allows, rather than the Cursor stream's.
CLAUDE_TARGETS = frozenset({"opencode", "qwen", "amp", "antigravity", "copilot"})
# The agents whose files the stats and -j benchmarks read in turn (the first four: the
# figures stay comparable from one version to the next).
STATS_AGENTS = ["claude", "codex", "cursor", "gemini"]


def timed(argv, stdin_path=None, one_core=False):
    """(seconds, max RSS in MB) of one run, stdout to /dev/null; on one core with
    ``one_core`` (taskset)."""
    if one_core:
        argv = ["taskset", "-c", "0", *argv]
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        if stdin_path is None:
            process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
        else:  # through a pipe: cat FILE | command
            cat = subprocess.Popen(["cat", str(stdin_path)], stdout=subprocess.PIPE)
            process = subprocess.Popen(argv, stdin=cat.stdout, stdout=sink,
                                       stderr=subprocess.DEVNULL)
            cat.stdout.close()
            _, status, usage = os.wait4(process.pid, 0)
            cat.wait()
        seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        sys.exit(f"bench: {argv[0]} failed with status {process.returncode}")
    return seconds, usage.ru_maxrss / 1024


def compare(ours, theirs, rounds, stdin_path=None, one_core=(False, False)):
    """Best times, the median of the rounds' ratios, and our peak memory.  Each round
    runs the two one after the other, so a slow spell of the machine slows both: the
    ratio of a round is steadier than either time.  ``one_core``: whether each of the
    two runs on one core."""
    return compare_together([(ours, theirs)], rounds, stdin_path, one_core)[0]


def compare_together(pairs, rounds, stdin_path=None, one_core=(False, False)):
    """``compare`` of each (ours, theirs) of ``pairs``, every pair once in each round:
    figures that are compared with each other (an agent's ratio with Claude's) are then
    measured over the same spells of the machine, not minutes apart."""
    times = [([], [], []) for _ in pairs]
    memory = [0.0] * len(pairs)
    for _ in range(rounds):
        for index, (ours, theirs) in enumerate(pairs):
            seconds, rss = timed(ours, stdin_path, one_core[0])
            their_seconds = timed(theirs, stdin_path, one_core[1])[0]
            our_times, their_times, ratios = times[index]
            our_times.append(seconds)
            their_times.append(their_seconds)
            ratios.append(their_seconds / seconds)
            memory[index] = max(memory[index], rss)
    return [(min(our_times), min(their_times), statistics.median(ratios), rss)
            for (our_times, their_times, ratios), rss in zip(times, memory)]


def verdict(ratio, target):
    return "yes" if ratio >= target else "**no**"


def has_taskset():
    import shutil

    return platform.system() == "Linux" and shutil.which("taskset") is not None


def ndagent(verb):
    """``ndagent-VERB`` of this checkout (not of whatever is installed: a copy of the
    tree can be measured while the tree changes)."""
    return checkout_command(ROOT, verb)


def checkout_command(folder, verb):
    """``ndagent-VERB`` of the checkout ``folder``, run with this Python: the way an
    earlier version runs, and this one beside it, so that both start alike."""
    return [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
            f"from ndagent.cmd_{verb} import main; sys.exit(main())", str(folder)]


def before_bench(data, stream, before, rounds):
    """This version against an earlier one (a checkout at ``before``), both run with this
    Python, in the same rounds (this one, then that one, so that a slow spell of the
    machine slows both): each Cursor verb on the stream, each other agent's case, stats
    and validate over 2 000 files with -j 2, and start-up.  The figure is the median of
    the rounds' ratios of that version's time to this one's: above 1, this one is
    faster."""
    print(f"\nAgainst the version in {before}, in the same rounds (median of that "
          "version's time / this one's; above 1: this one is faster):\n")
    print("| command | input | this version | that version | that / this |")
    print("|---|---|---|---|---|")
    cases = [(ours, [str(stream)], "Cursor stream") for ours, _, _ in CASES.values()]
    for agent, ours, _ in AGENT_CASES:
        cases.append((ours, [str(data / f"stream-{stream.stem.split('-')[1]}-seed1-{agent}"
                                       ".ndjson")], f"{agent} stream"))
    paths = [str(path) for path in small_files(data / "stats-2000", STATS_AGENTS)]
    cases += [(["stats", "-j", "2"], paths, "2 000 files"),
              (["validate", "-q", "-j", "2"], paths, "2 000 files"),
              (["json"], [str(ROOT / "tests" / "fixtures" / "vendor-example.ndjson")],
               "start-up: a tiny stream")]
    for ours, inputs, what in cases:
        if status_of([*checkout_command(before, ours[0]), *ours[1:], *inputs]) != status_of(
                [*checkout_command(ROOT, ours[0]), *ours[1:], *inputs]):
            print(f"| `{' '.join(ours)}` | {what} | | that version cannot read it | |")
            continue
        new, old, ratios = [], [], []
        for _ in range(rounds if what != cases[-1][2] else max(10, rounds * 8)):
            new.append(timed([*checkout_command(ROOT, ours[0]), *ours[1:], *inputs])[0])
            old.append(timed([*checkout_command(before, ours[0]), *ours[1:], *inputs])[0])
            ratios.append(old[-1] / new[-1])
        print(f"| `{' '.join(ours)}` | {what} | {min(new):.3f} s | {min(old):.3f} s "
              f"| {statistics.median(ratios):.3f} |", flush=True)


def status_of(argv):
    """The exit status of ``argv``, its output unread."""
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def jobs_bench(data, rounds, target=1.6):
    """validate over 2 000 files of about 40 KB: -j 2 against -j 1."""
    paths = [str(path) for path in small_files(data / "stats-2000", STATS_AGENTS)]
    validate = ndagent("validate")
    our_s, their_s, ratio, rss = compare([*validate, "-q", "-j", "2", *paths],
                                         [*validate, "-q", "-j", "1", *paths], rounds)
    print(f"| `validate -q -j 2` | {our_s:.2f} s | `validate -q -j 1` | {their_s:.2f} s "
          f"| {ratio:.2f}x | {target}x | {verdict(ratio, target)} | {rss:.0f} MB |", flush=True)
    return [] if ratio >= target else ["validate -j 2"]


def startup(rounds):
    """The medians of start-up times, the two commands run in turn (as ``compare``)."""
    tiny = ROOT / "tests" / "fixtures" / "vendor-example.ndjson"
    ours, base = [], []
    for _ in range(rounds):
        ours.append(timed([*ndagent("json"), str(tiny)])[0])
        base.append(timed([sys.executable, "-c", "import orjson"])[0])
    return statistics.median(ours), statistics.median(base)


# A busy loop of about a tenth of a second.
SPIN = "total = 0\nfor number in range(3_000_000):\n    total += number"


def two_at_once(rounds):
    """The work two busy processes get done at once against one alone (at most 2): the
    ceiling of every "-j 2 against -j 1" figure on the machine as it is when measured
    (its two cores may be one core's two threads, or shared with other machines)."""
    spin = [sys.executable, "-c", SPIN]
    alone, together = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(spin, check=True)
        alone.append(time.perf_counter() - start)
        start = time.perf_counter()
        both = [subprocess.Popen(spin) for _ in range(2)]
        for each in both:
            each.wait()
        together.append(time.perf_counter() - start)
    return 2 * statistics.median(alone) / statistics.median(together)


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import orjson

    jq = subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, orjson {orjson.__version__}, {jq}")


# The transcripts: each at most this many times `text -v` on the same stream, and peak
# memory under TRANSCRIPT_MEMORY megabytes.
TRANSCRIPT = 2
TRANSCRIPT_MEMORY = 100


def transcripts_bench(streams, rounds):
    """``markdown`` and ``html`` on each agent's stream (``streams``: [(agent, path)])
    against ``text -v`` on it, run in turn as ``compare`` runs them: the ratio is the
    median of the rounds' transcript time over ``text -v``'s."""
    print("\nThe transcripts of each agent's stream against `text -v` on it (ratio: the "
          f"transcript's time / `text -v`'s; target: under {TRANSCRIPT}x, peak memory "
          f"under {TRANSCRIPT_MEMORY} MB):\n")
    print("| agent | command | ndagent | `text -v` | ratio | target | met | peak memory |")
    print("|---|---|---|---|---|---|---|---|")
    missed = []
    for agent, path in streams:
        text = [*ndagent("text"), "-v", str(path)]
        for verb in ("markdown", "html"):
            our_s, text_s, ratio, rss = compare([*ndagent(verb), str(path)], text, rounds)
            met = 1 / ratio < TRANSCRIPT and rss < TRANSCRIPT_MEMORY
            if not met:
                missed.append(f"{agent} {verb}")
            print(f"| {agent} | `{verb}` | {our_s:.2f} s | {text_s:.2f} s | {1 / ratio:.2f}x "
                  f"| under {TRANSCRIPT}x | {'yes' if met else '**no**'} | {rss:.0f} MB |",
                  flush=True)
    return missed


def many_files_bench(data, rounds, single):
    """Each verb over 2 000 Cursor files, a whole run each, against jq over the same
    files: the target is the verb's ratio on the single 100 MB file (``single``)."""
    paths = [str(path) for path in small_files(data / "cursor-runs-2000", ["cursor"],
                                                size=None)]
    megabytes = sum(os.path.getsize(path) for path in paths) / 1e6
    print(f"\nThe same verbs over {len(paths)} Cursor files, a whole run each "
          f"({megabytes:.0f} MB), against jq over the same files; the target is the verb's "
          "ratio on the one file:\n")
    print("| command | ndagent | jq | ratio | target | met | ndagent peak memory |")
    print("|---|---|---|---|---|---|---|")
    missed = []
    for verb, (ours, program, _) in CASES.items():
        our_s, jq_s, ratio, rss = compare([*ndagent(ours[0]), *ours[1:], *paths],
                                          ["jq", *program, *paths], rounds)
        target = single[verb]
        if ratio < target:
            missed.append(f"{verb} (2 000 files)")
        print(f"| `{verb}` | {our_s:.2f} s | {jq_s:.2f} s | {ratio:.2f}x | {target:.2f}x "
              f"| {verdict(ratio, target)} | {rss:.0f} MB |", flush=True)
    return missed


def stats_bench(data, rounds, target=1.6):
    """``stats`` over 2 000 files of about 40 KB, the four agents in turn: -j 2 against
    -j 1, and the default against the jq recipe it replaces (``ndagent json ... | jq
    -s``)."""
    paths = [str(path) for path in small_files(data / "stats-2000", STATS_AGENTS)]
    megabytes = sum(os.path.getsize(path) for path in paths) / 1e6
    stats = ndagent("stats")
    json = " ".join(map(quote, ndagent("json")))
    recipe = ["bash", "-c", f'{json} "$@" | jq -s "{{runs: length, '
                            'duration_ms: (map(.duration_ms // 0) | add)}" >/dev/null', "-"]
    print(f"\n`stats` over {len(paths)} files of about 40 KB ({megabytes:.0f} MB, the four "
          "agents in turn):\n")
    print("| command | time | against | its time | ratio | target | met | peak memory |")
    print("|---|---|---|---|---|---|---|---|")
    missed = []
    for ours, theirs, name, goal in (
            (["-j", "2"], [*stats, "-j", "1", *paths], "`stats -j 1`", target),
            ([], [*recipe, *paths], "`json \\| jq -s`", 1)):
        our_s, their_s, ratio, rss = compare([*stats, *ours, *paths], theirs, rounds)
        if ratio < goal:
            missed.append(f"{' '.join(['stats', *ours])}")
        print(f"| `{' '.join(['stats', *ours])}` | {our_s:.2f} s | {name} | {their_s:.2f} s "
              f"| {ratio:.2f}x | {goal}x | {verdict(ratio, goal)} | {rss:.0f} MB |", flush=True)
    return missed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="stream size (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--data", default=str(ROOT / "bench-data"),
                        help="where the generated inputs are kept (in a folder named after "
                             "the generators' digest, so that a changed generator makes new "
                             "ones)")
    parser.add_argument("--sessions-mb", type=float, default=300,
                        help="the generated Claude session archive's size (default 300; "
                             "0: no session row)")
    parser.add_argument("--before", metavar="DIR",
                        help="also against the ndagent of the checkout DIR (git worktree "
                             "add DIR REV), in the same rounds")
    args = parser.parse_args()

    from ndagent.cli import COMMANDS

    data = generated_folder(Path(args.data))
    stream = data / f"stream-{args.mb:g}mb-seed1.ndjson"
    if not stream.exists():
        print(f"generating {stream} ...", file=sys.stderr)
        generate(stream, args.mb, seed=1)
    megabytes = stream.stat().st_size / 1e6
    with open(stream, "rb") as lines:
        count = sum(1 for _ in lines)

    print(f"Stream: {megabytes:.1f} MB, {count} lines "
          f"(tests/bench/generate.py, seed 1). Machine: {machine()}; two busy processes "
          f"at once do {two_at_once(max(5, args.rounds * 2)):.2f}x the work of one.\n")
    one_core = has_taskset()
    print("| command | input | ndagent | jq | ratio | target | met | 2 cores / 1 "
          "| ndagent peak memory |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed, single = [], {}
    verbs = [verb for verb, _ in COMMANDS if verb in CASES]
    for verb in verbs:
        ours, program, target = CASES[verb]
        inputs = [("file", None), ("pipe", stream)] if verb == "json" else [("file", None)]
        for kind, stdin_path in inputs:
            file_args = [] if stdin_path else [str(stream)]
            argv = [*ndagent(ours[0]), *ours[1:], *file_args]
            our_s, jq_s, ratio, rss = compare(argv, ["jq", *program, *file_args], args.rounds,
                                              stdin_path)
            scaling, goal, met = "", "", ""
            if kind == "file":
                single[verb] = ratio
                goal, met = f"{target}x", verdict(ratio, target)
                if ratio < target:
                    missed.append(f"{verb} (file)")
                if one_core:  # the same command on one core against on two
                    scaling = f"{compare(argv, argv, args.rounds, one_core=(False, True))[2]:.2f}x"
            print(f"| `{verb}` | {kind} | {our_s:.2f} s, {megabytes / our_s:.0f} MB/s "
                  f"| {jq_s:.2f} s, {megabytes / jq_s:.0f} MB/s | {ratio:.2f}x | {goal} | {met} "
                  f"| {scaling} | {rss:.0f} MB |", flush=True)
    missed += many_files_bench(data, args.rounds, single)
    print("\nThe other agents' streams (tests/bench/generate.py --agent, the same size), "
          "against the jq recipe their users write; the target is the Cursor stream's "
          f"ratio for the same verb, within {100 - OF_CURSOR * 100:.0f}% (for "
          f"{', '.join(sorted(CLAUDE_TARGETS))}: the Claude stream's); each round runs every "
          "row, so that rows compared with each other are measured in the same spells:\n")
    print("| agent | command | ndagent | jq | ratio | target | met | ndagent peak memory |")
    print("|---|---|---|---|---|---|---|---|")
    of_claude = {}
    streams = {"cursor": stream}
    pairs = []
    for agent, ours, program in AGENT_CASES:
        path = streams[agent] = data / f"stream-{args.mb:g}mb-seed1-{agent}.ndjson"
        if not path.exists():
            print(f"generating {path} ...", file=sys.stderr)
            generate(path, args.mb, seed=1, agent=agent)
        pairs.append(([*ndagent(ours[0]), *ours[1:], str(path)], ["jq", *program, str(path)]))
    for (agent, ours, _), (our_s, jq_s, ratio, rss) in zip(
            AGENT_CASES, compare_together(pairs, args.rounds)):
        size = streams[agent].stat().st_size / 1e6
        if agent == "claude":
            of_claude[ours[0]] = ratio
        target = OF_CURSOR * (of_claude if agent in CLAUDE_TARGETS else single)[ours[0]]
        if ratio < target:
            missed.append(f"{agent} {ours[0]}")
        print(f"| {agent} | `{' '.join(ours)}` | {our_s:.2f} s, {size / our_s:.0f} MB/s "
              f"| {jq_s:.2f} s, {size / jq_s:.0f} MB/s | {ratio:.2f}x | {target:.2f}x "
              f"| {verdict(ratio, target)} | {rss:.0f} MB |", flush=True)
    missed += transcripts_bench(streams.items(), args.rounds)
    missed += stats_bench(data, args.rounds)
    if args.sessions_mb:
        missed += session_archive_bench(data, args.rounds, args.sessions_mb, ndagent, compare)
    missed += jobs_bench(data, args.rounds)
    ours, base = startup(max(10, args.rounds * 8))
    if ours > STARTUP * base:
        missed.append("start-up")
    print(f"\nStart-up on a tiny stream (median): `ndagent json` {ours * 1000:.0f} ms, "
          f"`python -c 'import orjson'` {base * 1000:.0f} ms: {ours / base:.2f}x "
          f"(target at most {STARTUP}x: {verdict(STARTUP * base, ours)}).")
    if args.before:
        before_bench(data, stream, Path(args.before).resolve(), args.rounds)
    if missed:
        print("\nTargets missed: " + ", ".join(missed))


if __name__ == "__main__":
    main()
