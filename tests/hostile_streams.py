"""Hostile streams made to exhaust memory, written to standard output as they are made,
so that a test (or a person measuring) can pipe hundreds of megabytes into a command
without a file:

  python tests/hostile_streams.py open-args COUNT SIZE   # COUNT calls started, never
                                                         # completed, SIZE-character args
  python tests/hostile_streams.py open-ids COUNT SIZE    # the same, SIZE-character call_ids
  python tests/hostile_streams.py open-wide COUNT SIZE   # SIZE-character args with an emoji
  python tests/hostile_streams.py shapes MEGABYTES       # events of many long, distinct keys
"""

import sys

INIT = b'{"type":"system","subtype":"init","session_id":"s-1"}\n'


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


def main(argv):
    kind, *numbers = argv
    numbers = [int(number) for number in numbers]
    if kind == "shapes":
        lines = shapes(*numbers)
    else:
        lines = open_calls(*numbers, long_ids=kind == "open-ids", wide=kind == "open-wide")
    out = sys.stdout.buffer
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
