"""Claude Code streams through the verbs, where docs/agents.md decides more than the
goldens show: a call still open at a result that says ok (docs/agents.md#validate), calls
the result lists as denied (docs/model.md#outcomes-per-agent)."""

import orjson
from conftest import model_events, run_of, tool_event
from test_format_claude import assistant, init, result, text, tool_result, tool_use, user

from ndagent.cmd_text import main as text_main
from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main
from ndagent.formats import claude
from ndagent.model import RunEnd


def lines(*objects):
    return [orjson.dumps(data) for data in objects]


def test_a_call_open_at_an_ok_result_is_a_warning_for_claude(call, write):
    path = write(lines(init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="ls")),
                       assistant("msg_2", text("Done.")), result()))
    status, out, _ = call(validate_main, path)
    assert (status, out.decode().splitlines()) == (0, [
        f'{path}:2: warning: call "toolu_1" was started and never completed: still open at '
        "the run's end (line 4) [call-open]",
        f"{path}: 4 events, 1 run, 0 errors, 1 warning"])


def test_a_call_open_when_a_claude_run_fails_or_is_cut_off_is_an_error(call, write):
    opened = [init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="ls"))]
    for end in ([result(is_error=True, subtype="error_max_turns")], []):
        path = write(lines(*opened, *end))
        status, out, _ = call(validate_main, path)
        assert status == 1
        assert f'{path}:2: error: call "toolu_1" was started and never completed ' \
               "[call-unfinished]" in out.decode().splitlines()


def test_a_call_open_at_an_ok_result_is_still_an_error_for_cursor(call, write):
    path = write(run_of(tool_event("started", "c1", "shellToolCall", {"command": "ls"})))
    status, out, _ = call(validate_main, path)
    assert status == 1
    assert f'{path}:2: error: call "c1" was started and never completed ' \
           "[call-unfinished]" in out.decode().splitlines()


HOOK_DENIAL = "PreToolUse:Bash hook error: [./guard.sh]: rm is not allowed here"


def denied_by_the_result():
    """A run of four calls: one whose error the result lists as denied, one that
    succeeded though listed, one listed and never answered, one failed unlisted."""
    calls = [tool_use("toolu_hook", "Bash", command="rm -rf build"),
             tool_use("toolu_ok", "Read", file_path="a.txt"),
             tool_use("toolu_open", "Write", file_path="b.txt", content="b"),
             tool_use("toolu_exit", "Bash", command="false")]
    denials = [{"tool_name": use["name"], "tool_use_id": use["id"], "tool_input": use["input"]}
               for use in calls[:3]]
    return lines(init(), *(assistant("msg_1", use) for use in calls),
                 user(tool_result("toolu_hook", HOOK_DENIAL, is_error=True)),
                 user(tool_result("toolu_ok", "a")),
                 user(tool_result("toolu_exit", "Exit code 1", is_error=True)),
                 assistant("msg_2", text("Done.")), result(permission_denials=denials))


def test_the_result_s_permission_denials_are_the_final_outcome_of_its_calls():
    ends = [event for event in model_events(claude, b"\n".join(denied_by_the_result()) + b"\n")
            if event.__class__ is RunEnd]
    # Listed, and ended with an error or never: denied.  Listed but a success: a success.
    assert ends[0].outcomes == {"toolu_hook": "permissionDenied",
                                "toolu_open": "permissionDenied"}


def test_the_live_verbs_print_what_they_know_when_they_print(call, write):
    path = write(denied_by_the_result())
    status, out, err = call(tools_main, path)
    assert (status, err) == (0, "")
    # A call printed when it ended stays as printed; one still open at the result is
    # printed then, with what the result says of it.
    assert [(record["call_id"], record["status"]) for record in map(
        orjson.loads, out.splitlines())] == [
        ("toolu_hook", "error"), ("toolu_ok", "success"), ("toolu_exit", "failure"),
        ("toolu_open", "permissionDenied")]
    assert call(text_main, path)[1] == (b"Ran terminal command (error)\nRead file\n"
                                        b"Ran terminal command (failed)\n")


def test_a_call_listed_as_denied_in_a_run_cut_off_or_another_run_stays_as_it_was():
    events = model_events(claude, b"\n".join(lines(
        init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="ls")),
        user(tool_result("toolu_1", HOOK_DENIAL, is_error=True)),
        result(), init(),
        result(permission_denials=[{"tool_name": "Bash", "tool_use_id": "toolu_1"}]),
        init(), assistant("msg_3", tool_use("toolu_3", "Bash", command="ls")))) + b"\n")
    assert [end.outcomes for end in events if end.__class__ is RunEnd] == [None, None, None]


# A run that ends on an API error failed, whatever the result says (docs/formats.md,
# "Claude Code": older CLIs write is_error false; the CLI's message of the error is the
# run's last one).

API_ERROR = ('API Error: 529 {"type":"error","error":{"type":"overloaded_error",'
             '"message":"Overloaded"}}')


def synthetic(words, **fields):
    """The message the CLI makes of an API error."""
    return {"type": "assistant",
            "message": {"model": "<synthetic>", "id": "synthetic-1", "type": "message",
                        "role": "assistant", "content": [text(words)]},
            "parent_tool_use_id": None, "session_id": init()["session_id"],
            "uuid": "a-synthetic", **fields}


API_ENDINGS = {
    "an older CLI's error message": [synthetic(API_ERROR, error="server_error"),
                                     result(API_ERROR)],
    "a message marked as one": [synthetic(API_ERROR, is_api_error_message=True),
                                result(API_ERROR)],
    "api_error_status": [assistant("msg_1", text("x")), result(API_ERROR, api_error_status=529)],
    "terminal_reason": [assistant("msg_1", text("x")),
                        result(API_ERROR, terminal_reason="api_error")],
}


def test_a_run_that_ends_on_an_api_error_failed_in_the_model():
    for name, ending in API_ENDINGS.items():
        (end,) = [event for event in model_events(claude, b"\n".join(lines(init(), *ending)))
                  if isinstance(event, RunEnd)]
        assert (end.ok, end.answer) == (False, None), name
        assert "API Error: 529" in end.failure, name


def test_an_api_error_prints_no_answer_and_fails_every_verb(call, write):
    from ndagent.cmd_json import main as json_main
    from ndagent.cmd_result import main as result_main

    for name, ending in API_ENDINGS.items():
        path = write(lines(init(), *ending))
        status, out, err = call(result_main, path)
        assert (status, out) == (1, b""), name
        assert ": error: run failed: " in err and err.count("\n") == 1, name
        assert call(text_main, "--final", path)[:2] == (1, b""), name
        assert call(validate_main, path)[0] == 1, name
        assert call(json_main, path)[0] == 1, name


def test_an_api_error_the_cli_got_past_is_no_failure():
    events = model_events(claude, b"\n".join(lines(
        init(), synthetic(API_ERROR, error="rate_limit"), assistant("msg_2", text("Done.")),
        result())))
    (end,) = [event for event in events if isinstance(event, RunEnd)]
    assert (end.ok, end.answer) == (True, "Done.")
