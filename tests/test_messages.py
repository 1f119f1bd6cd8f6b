"""The Message events of Claude's envelope (docs/model.md#messages): one per main-thread
assistant message, its usage counted once, made only for the need "messages"."""

import orjson
from conftest import examples, model_events
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.formats import amp, claude, qwen
from ndagent.model import Message, RunEnd

SID = "5b0e6f1a-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
MODEL = "claude-sonnet-4-5-20250929"
NEEDS = frozenset({"text", "ends", "messages"})


def stream(*lines):
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def init():
    return {"type": "system", "subtype": "init", "session_id": SID, "model": MODEL,
            "tools": ["Bash"], "claude_code_version": "2.1.120", "uuid": "i-1"}


def usage(input_tokens=3, cache_write=200, cache_read=5000, output=1):
    return {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read, "output_tokens": output}


def assistant(key, block, parent=None, figures=None):
    return {"type": "assistant", "parent_tool_use_id": parent, "session_id": SID,
            "uuid": "a-" + key,
            "message": {"id": key, "model": MODEL, "role": "assistant", "content": [block],
                        "stop_reason": None, "usage": figures or usage()}}


def partial(inner, parent=None):
    return {"type": "stream_event", "event": inner, "session_id": SID,
            "parent_tool_use_id": parent, "uuid": "s-1"}


def result():
    return {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 10,
            "num_turns": 1, "result": "Done.", "session_id": SID, "total_cost_usd": 0.01,
            "usage": usage(), "uuid": "r-1"}


def tool_use(call_id):
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}


def text(words):
    return {"type": "text", "text": words}


def tool_result(call_id):
    return {"type": "user", "parent_tool_use_id": None, "session_id": SID, "uuid": "u-1",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]}}


def read(data, needs=NEEDS, module=claude):
    return model_events(module, data, needs=needs)


def of(events, kind):
    return [event for event in events if event.__class__ is kind]


def test_one_message_per_key_its_usage_once_handed_on_at_its_first_line():
    events = read(stream(init(), assistant("msg_1", text("Looking.")),
                         assistant("msg_1", tool_use("t1")), assistant("msg_1", tool_use("t2")),
                         tool_result("t1"), tool_result("t2"),
                         assistant("msg_2", text("Done."), figures=usage(5, 10, 5200)),
                         result()), NEEDS | {"tools"})
    found = of(events, Message)
    assert [(each.key, each.model, each.line) for each in found] == [
        ("msg_1", MODEL, 2), ("msg_2", MODEL, 7)]
    assert found[0].usage == {"input": 3, "cacheRead": 5000, "cacheWrite": 200,
                              "output": None}
    assert found[1].usage == {"input": 5, "cacheRead": 5200, "cacheWrite": 10,
                              "output": None}
    # Handed on with the line that carries its usage, before that line's tool call.
    assert events.index(found[0]) < next(
        index for index, event in enumerate(events) if getattr(event, "call_id", 0) == "t1")


def test_with_partial_messages_a_message_ends_at_its_message_delta_with_the_output():
    events = read(stream(
        init(),
        partial({"type": "message_start", "message": {
            "id": "msg_1", "model": MODEL, "role": "assistant", "content": [],
            "usage": usage(output=1)}}),
        partial({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}}),
        partial({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "Done."}}),
        partial({"type": "content_block_stop", "index": 0}),
        assistant("msg_1", text("Done.")),
        partial({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                 "usage": {"output_tokens": 61}}),
        partial({"type": "message_stop"}),
        result()))
    [message] = of(events, Message)
    assert (message.key, message.first_line, message.last_line, message.line) == (
        "msg_1", 2, 7, 7)
    assert message.usage == {"input": 3, "cacheRead": 5000, "cacheWrite": 200, "output": 61}


def test_a_message_in_hand_is_handed_on_before_its_run_ends_or_is_cut_off():
    start = partial({"type": "message_start", "message": {
        "id": "msg_1", "model": MODEL, "content": [], "usage": usage()}})
    for tail in ((result(),), ()):
        events = read(stream(init(), start, assistant("msg_1", text("Hi.")), *tail))
        kinds = [event.__class__ for event in events]
        assert kinds.index(Message) == kinds.index(RunEnd) - 1
        assert of(events, Message)[0].usage["output"] is None


def test_subagents_messages_and_other_needs_make_none():
    lines = stream(init(), assistant("msg_9", text("sub"), parent="t0"), result())
    assert of(read(lines), Message) == []
    lines = stream(init(), assistant("msg_1", text("Hi.")), result())
    for needs in (frozenset({"text", "ends"}), frozenset({"text", "tools", "ends", "transcript"}),
                  None):
        assert of(read(lines, needs), Message) == []


def test_qwen_code_message_start_without_usage_takes_its_assistant_line_s():
    key = "e0611a03-94c0-4e4b-a770-d9339d7e8087"
    line = assistant(key, text("Hi."), figures={"input_tokens": 7, "output_tokens": 2})
    line["uuid"] = key
    events = read(stream(
        {"type": "system", "subtype": "init", "session_id": SID, "model": "qwen-test",
         "qwen_code_version": "0.15.6", "uuid": "i-1"},
        partial({"type": "message_start", "message": {"id": key, "model": "qwen-test"}}),
        line, partial({"type": "message_stop"}),
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5,
         "num_turns": 1, "result": "Hi.", "session_id": SID, "uuid": "r-1"}), module=qwen)
    [message] = of(events, Message)
    assert (message.model, message.usage["input"], message.line) == ("qwen-test", 7, 4)


def test_amp_each_assistant_line_is_a_message():
    thread = "T-0a1b2c3d"

    def line(words):
        return {"type": "assistant", "session_id": thread, "parent_tool_use_id": None,
                "message": {"model": MODEL, "content": [text(words)],
                            "usage": usage(input_tokens=4)}}

    events = read(stream({"type": "system", "subtype": "init", "session_id": thread,
                          "tools": ["Bash"], "cwd": "/"}, line("a"), line("b")), module=amp)
    assert [each.usage["input"] for each in of(events, Message)] == [4, 4]


@settings(max_examples=examples(15, 60), deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 10**6)), min_size=1,
                max_size=6))
def test_every_message_s_input_is_counted_once_however_many_lines_carry_it(shape):
    lines = [init()]
    for number, (blocks, tokens) in enumerate(shape):
        for block in range(blocks):
            lines.append(assistant(f"msg_{number}", tool_use(f"t{number}-{block}"),
                                   figures=usage(input_tokens=tokens)))
        lines.extend(tool_result(f"t{number}-{block}") for block in range(blocks))
    lines.append(result())
    found = of(read(stream(*lines)), Message)
    assert [each.key for each in found] == [f"msg_{number}" for number in range(len(shape))]
    assert sum(each.usage["input"] for each in found) == sum(tokens for _, tokens in shape)


def spans_of(*paths):
    from conftest import run

    done = run("otel", "--time-origin", "2026-06-01T10:00:00Z", *paths)
    return [span for line in done.stdout.splitlines()
            for span in orjson.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]]


def attribute(span, key):
    for each in span["attributes"]:
        if each["key"] == key:
            return next(iter(each["value"].values()), None)
    return None


def test_otel_a_chat_span_per_message_the_tools_under_the_one_that_called_them(tmp_path):
    """One chat span per main-thread message (CLIENT, its usage once); each main-thread
    call under the chat span of its message, a subagent's under its Task call."""
    path = tmp_path / "stream.ndjson"
    path.write_bytes(stream(
        init(), assistant("msg_1", text("Looking.")), assistant("msg_1", tool_use("t1")),
        assistant("msg_9", tool_use("t9"), parent="t1"), tool_result("t9"),
        tool_result("t1"), assistant("msg_2", tool_use("t2"), figures=usage(5, 10, 5200)),
        tool_result("t2"), assistant("msg_3", text("Done.")), result()))
    spans = spans_of(path)
    chats = {attribute(span, "gen_ai.response.id"): span for span in spans
             if span["name"].startswith("chat")}
    assert list(chats) == ["msg_1", "msg_2", "msg_3"]
    assert {span["kind"] for span in chats.values()} == {3}
    assert attribute(chats["msg_1"], "gen_ai.usage.input_tokens") == str(3 + 200 + 5000)
    assert attribute(chats["msg_1"], "gen_ai.usage.output_tokens") is None
    tools = {attribute(span, "gen_ai.tool.call.id"): span for span in spans
             if span["name"].startswith("execute_tool")}
    assert tools["t1"]["parentSpanId"] == chats["msg_1"]["spanId"]
    assert tools["t2"]["parentSpanId"] == chats["msg_2"]["spanId"]
    assert tools["t9"]["parentSpanId"] == tools["t1"]["spanId"]
