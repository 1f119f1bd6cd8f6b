"""Claude Code streams through the verbs, where AGENTS.md decides more than the goldens
show: a call still open at a result that says ok, calls the result lists as denied."""

import orjson
from conftest import run_of, tool_event
from test_format_claude import assistant, init, result, text, tool_result, tool_use, user

from ndagent.cmd_tools import main as tools_main
from ndagent.cmd_validate import main as validate_main


def lines(*objects):
    return [orjson.dumps(data) for data in objects]


def test_a_call_open_at_an_ok_result_is_a_warning_for_claude(call, write):
    path = write(lines(init(), assistant("msg_1", tool_use("toolu_1", "Bash", command="ls")),
                       assistant("msg_2", text("Done.")), result()))
    status, out, _ = call(validate_main, path)
    assert (status, out.decode().splitlines()) == (0, [
        f'{path}:2: warning: call "toolu_1" was started and never completed: still open at '
        "the run's end (line 4) [call-open]",
        f"{path}: 4 events, 1 runs, 0 errors, 1 warnings"])


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
