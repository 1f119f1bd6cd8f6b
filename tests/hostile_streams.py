"""Hostile streams made to exhaust memory, written to standard output as they are made,
so that a test (or a person measuring) can pipe hundreds of megabytes into a command
without a file:

  python tests/hostile_streams.py open-args COUNT SIZE   # COUNT calls started, never
                                                         # completed, SIZE-character args
  python tests/hostile_streams.py open-ids COUNT SIZE    # the same, SIZE-character call_ids
  python tests/hostile_streams.py open-wide COUNT SIZE   # SIZE-character args with an emoji
  python tests/hostile_streams.py shapes MEGABYTES       # events of many long, distinct keys
  python tests/hostile_streams.py gemini-open COUNT N    # Gemini calls never answered, with
                                                         # parameters of N empty objects
  python tests/hostile_streams.py codex-items COUNT N    # one Codex turn of COUNT items of N
                                                         # empty objects each
  python tests/hostile_streams.py claude-open COUNT SIZE # Claude calls never answered, with
                                                         # an id and a name of SIZE characters
  python tests/hostile_streams.py codex-open COUNT SIZE  # Codex items started, never completed,
                                                         # with an id and a type of SIZE
  python tests/hostile_streams.py dense MEGABYTES        # a Claude result line of empty objects
"""

import sys

INIT = b'{"type":"system","subtype":"init","session_id":"s-1"}\n'
CLAUDE_INIT = b'{"type":"system","subtype":"init","session_id":"s-1","tools":[],"model":"m"}\n'


def open_calls(count, size, long_ids=False, wide=False):
    """Lines of ``count`` read calls started and never completed, each with a path (or,
    ``long_ids``, a call_id) of about ``size`` characters; ``wide``: ending in an emoji,
    so that Python keeps the path at 4 bytes a character."""
    filler = "x" * size + ("\\ud83d\\ude00" if wide else "")
    for number in range(count):
        call_id = f"{filler}{number}" if long_ids else f"call_{number}"
        path = "/p" if long_ids else f"/{filler}{number}"
        yield (f'{{"type":"tool_call","subtype":"started","call_id":"{call_id}",'
               f'"tool_call":{{"readToolCall":{{"args":{{"path":"{path}"}}}}}},'
               f'"session_id":"s-1"}}\n').encode()


def shapes(megabytes):
    """Assistant events of about 100 KB, each with 100 keys of its own, of 1000
    characters and an emoji each (so that Python keeps 4 bytes a character)."""
    filler = "k" * 1000 + "\\ud83d\\ude00"
    total = 0
    number = 0
    while total < megabytes * 1_000_000:
        keys = ",".join(f'"{number}.{key}{filler}":0' for key in range(100))
        line = ('{"type":"assistant","message":{"role":"assistant","content":'
                '[{"type":"text","text":"x"}]},"session_id":"s-1",' + keys + "}\n").encode()
        total += len(line)
        number += 1
        yield line


def gemini_open(count, empty):
    """Gemini tool_use events never answered, each with ``empty`` empty objects."""
    params = ",".join(["{}"] * empty)
    yield b'{"type":"init","session_id":"s","model":"m"}\n'
    for number in range(count):
        yield (f'{{"type":"tool_use","tool_name":"read_file","tool_id":"t{number}",'
               f'"parameters":{{"a":[{params}]}}}}\n').encode()


def codex_items(count, empty):
    """One Codex turn of ``count`` completed items of ``empty`` empty objects each."""
    params = ",".join(["{}"] * empty)
    yield b'{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
    for number in range(count):
        yield (f'{{"type":"item.completed","item":{{"id":"i{number}","type":"reasoning",'
               f'"text":"","a":[{params}]}}}}\n').encode()
    yield (b'{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,'
           b'"output_tokens":1}}\n')


def claude_open(count, size):
    """Claude tool_use blocks never answered, each with an id and a name of ``size``."""
    filler = "x" * size
    yield CLAUDE_INIT
    for number in range(count):
        yield (f'{{"type":"assistant","message":{{"id":"m","role":"assistant","content":'
               f'[{{"type":"tool_use","id":"{number}{filler}","name":"{number}{filler}",'
               f'"input":{{}}}}]}},"session_id":"s-1"}}\n').encode()


def codex_open(count, size):
    """Codex items started and never completed, with an id and a type of ``size``."""
    filler = "x" * size
    yield b'{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
    for number in range(count):
        yield (f'{{"type":"item.started","item":{{"id":"{number}{filler}",'
               f'"type":"mcp_tool_call{filler}","server":"s","tool":"t","arguments":{{}},'
               f'"status":"in_progress"}}}}\n').encode()


def dense(megabytes):
    """A Claude result of one line holding empty objects, about ``megabytes`` MB."""
    yield CLAUDE_INIT
    yield (b'{"type":"result","subtype":"success","is_error":false,"duration_ms":1,'
           b'"num_turns":1,"result":"","session_id":"s-1","x":[{}')
    piece = b",{}" * 100_000
    for _ in range(megabytes * 1_000_000 // len(piece)):
        yield piece
    yield b"]}\n"


def claude_deltas(megabytes):
    """A Claude message streamed as tool-input deltas of some 1 KB, about ``megabytes``
    MB, whose whole line never comes: what a transcript holds of them, to read only
    if no whole line follows, is bounded."""
    yield CLAUDE_INIT
    yield (b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m",'
           b'"role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}},'
           b'"session_id":"s-1"}\n')
    line = (b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
            b'"delta":{"type":"input_json_delta","partial_json":"' + b"x" * 1000
            + b'"}},"session_id":"s-1"}\n')
    for _ in range(megabytes * 1_000_000 // len(line)):
        yield line


def claude_task(megabytes):
    """A Claude Task call left open while its subagent makes calls of 8 KB results,
    about ``megabytes`` MB: what a transcript holds behind the open call is bounded."""
    yield CLAUDE_INIT
    yield (b'{"type":"assistant","message":{"id":"m0","role":"assistant","content":[{"type":'
           b'"tool_use","id":"task","name":"Task","input":{"prompt":"p"}}]},'
           b'"parent_tool_use_id":null,"session_id":"s-1"}\n')
    result = b"r" * 8000
    for index in range(megabytes * 1_000_000 // 8400):
        call = b"c%d" % index
        yield (b'{"type":"assistant","message":{"id":"m%d","role":"assistant","content":'
               b'[{"type":"tool_use","id":"%s","name":"Bash","input":{"command":"ls"}}]},'
               b'"parent_tool_use_id":"task","session_id":"s-1"}\n' % (index + 1, call))
        yield (b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result",'
               b'"tool_use_id":"%s","content":"%s"}]},"parent_tool_use_id":"task",'
               b'"session_id":"s-1"}\n' % (call, result))


KINDS = {"shapes": shapes, "gemini-open": gemini_open, "codex-items": codex_items,
         "claude-open": claude_open, "codex-open": codex_open, "dense": dense,
         "claude-deltas": claude_deltas, "claude-task": claude_task}


def main(argv):
    kind, *numbers = argv
    numbers = [int(number) for number in numbers]
    if kind in KINDS:
        lines = KINDS[kind](*numbers)
    else:
        lines = open_calls(*numbers, long_ids=kind == "open-ids", wide=kind == "open-wide")
    out = sys.stdout.buffer
    if kind == "shapes" or kind.startswith("open-"):
        out.write(INIT)
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) == 64:
            out.write(b"".join(batch))
            batch.clear()
    out.write(b"".join(batch))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BrokenPipeError:  # the command stopped reading: that is for the test to judge
        sys.exit(0)
