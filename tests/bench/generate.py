"""A realistic synthetic agent stream of a chosen size, the same for a given seed.

Each run has what real Cursor Agent CLI runs have: init, the prompt, bursts of thinking
deltas, many short assistant deltas, tool calls (reads with large file contents, shell
commands with output, edits, searches, some in parallel, some failing), and a result
with usage.  One run in four is made with --stream-partial-output.

Claude Code, Codex CLI, Gemini CLI, OpenCode, Qwen Code, Amp, Antigravity CLI and
GitHub Copilot CLI streams (--agent) have those agents' shapes: messages, reads and
commands with large outputs, the end of a run with usage.

    python tests/bench/generate.py OUT.ndjson --mb 100 --seed 1 [--agent claude]
"""

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but",
    "have", "an", "they", "you", "were", "her", "she", "there", "been", "one", "all", "we",
    "their", "function", "return", "value", "import", "class", "def", "self", "test",
    "error", "file", "path", "line", "data", "config", "stream", "event", "parse",
    "result", "call", "tool", "shell", "output", "assert", "module",
)


def sentence(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def code(rng, lines):
    out = []
    for _ in range(lines):
        indent = "    " * rng.randint(0, 3)
        out.append(indent + rng.choice(["def ", "return ", "if ", "x = ", "# ", ""])
                   + sentence(rng, rng.randint(2, 10)) + rng.choice([":", "", "()", " \\"]))
    return "\n".join(out) + "\n"


def dump(event):
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def run_lines(rng, number, steps=None):
    """The lines of one run, of ``steps`` model calls (by default 8 to 24)."""
    session = f"{rng.getrandbits(32):08x}-0000-4000-8000-{number:012x}"
    request = f"{rng.getrandbits(32):08x}-1111-4111-8111-{number:012x}"
    partial = number % 4 == 3
    clock = 1770900000000 + number * 100000
    lines, answer = [], []

    def emit(event):
        event["session_id"] = session
        lines.append(dump(event))

    emit({"type": "system", "subtype": "init", "apiKeySource": "login",
          "cwd": "/home/user/project", "model": "Auto", "permissionMode": "default"})
    emit({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": sentence(rng, 30)}]}})
    for step in range(rng.randint(8, 24) if steps is None else steps):
        for _ in range(rng.randint(20, 120)):
            clock += rng.randint(1, 30)
            emit({"type": "thinking", "subtype": "delta",
                  "text": " " + rng.choice(WORDS), "timestamp_ms": clock})
        emit({"type": "thinking", "subtype": "completed", "timestamp_ms": clock})
        model_call = f"{request}-{step}-{rng.getrandbits(16):04x}"
        segment = []
        for _ in range(rng.randint(5, 60)):
            text = " " + sentence(rng, rng.randint(1, 4))
            segment.append(text)
            if partial:
                clock += rng.randint(1, 30)
                emit({"type": "assistant", "message": {"role": "assistant", "content": [
                    {"type": "text", "text": text}]}, "timestamp_ms": clock})
        if partial:
            emit({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "".join(segment)}]}, "model_call_id": model_call})
        else:
            for text in segment:
                emit({"type": "assistant", "message": {"role": "assistant", "content": [
                    {"type": "text", "text": text}]}})
        answer.extend(segment)
        calls = [tool_call(rng, step, k) for k in range(rng.choice([1, 1, 1, 2, 3]))]
        for call_id, args, _ in calls:
            clock += 5
            emit({"type": "tool_call", "subtype": "started", "call_id": call_id,
                  "tool_call": args, "model_call_id": model_call, "timestamp_ms": clock})
        for call_id, _, done in rng.sample(calls, len(calls)):
            clock += rng.randint(20, 3000)
            emit({"type": "tool_call", "subtype": "completed", "call_id": call_id,
                  "tool_call": done, "model_call_id": model_call, "timestamp_ms": clock})
    final = "\n\n" + sentence(rng, 40) + "\n"
    if partial:  # the deltas, then the same text again as a flush with neither field
        for piece in (final[:20], final[20:]):
            emit({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": piece}]}, "timestamp_ms": clock})
    emit({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": final}]}})
    answer.append(final)
    emit({"type": "result", "subtype": "success", "duration_ms": clock % 100000,
          "duration_api_ms": clock % 100000, "is_error": False, "result": "".join(answer),
          "request_id": request, "usage": {"inputTokens": rng.randint(1000, 90000),
                                           "outputTokens": rng.randint(100, 9000),
                                           "cacheReadTokens": 0, "cacheWriteTokens": 0}})
    return lines


def tool_call(rng, step, k):
    """(call_id, started tool_call object, completed tool_call object)."""
    call_id = f"call_{rng.getrandbits(64):016x}\nfc_{step:04d}{k}"
    kind = rng.choice(["read", "read", "shell", "shell", "edit", "grep", "glob"])
    if kind == "read":
        path = f"src/{sentence(rng, 1)}_{k}.py"
        content = code(rng, rng.randint(40, 400))
        args = {"path": path}
        result = {"success": {"content": content, "isEmpty": False, "exceededLimit": False,
                              "totalLines": content.count("\n"), "fileSize": len(content),
                              "path": "/home/user/project/" + path}}
    elif kind == "shell":
        command = rng.choice(["pytest -q", "make test", "git status", "ls -la src"])
        args = {"command": command, "workingDirectory": "", "timeout": 30000}
        stdout = code(rng, rng.randint(5, 200))
        outcome = "failure" if rng.random() < 0.2 else "success"
        result = {outcome: {"command": command, "exitCode": 0 if outcome == "success" else 1,
                            "signal": "", "stdout": stdout, "stderr": "",
                            "executionTime": rng.randint(10, 9000)}, "isBackground": False}
    elif kind == "edit":
        path = f"src/{sentence(rng, 1)}.py"
        new = code(rng, rng.randint(5, 60))
        args = {"path": path, "streamContent": new}
        result = {"success": {"path": "/home/user/project/" + path, "linesAdded": 3,
                              "linesRemoved": 1, "diffString": "+" + new.replace("\n", "\n+")}}
    elif kind == "grep":
        args = {"pattern": rng.choice(WORDS), "path": "src", "outputMode": "content"}
        result = {"success": {"matches": [{"file": f"src/{w}.py", "line": i, "text": sentence(
            rng, 8)} for i, w in enumerate(rng.sample(WORDS, 10))]}}
    else:
        args = {"globPattern": "**/*.py", "targetDirectory": "/home/user/project"}
        result = {"success": {"files": [f"src/{w}.py" for w in rng.sample(WORDS, 20)]}}
    key = kind + "ToolCall"
    return call_id, {key: {"args": args}}, {key: {"args": args, "result": result}}


def tool_work(rng):
    """(kind, arguments, output text) of a call of another agent: reads and commands."""
    if rng.random() < 0.5:
        return "read", f"src/{sentence(rng, 1)}.py", code(rng, rng.randint(40, 400))
    return "shell", rng.choice(["pytest -q", "make test", "git status"]), code(
        rng, rng.randint(5, 200))


def claude_run_lines(rng, number):
    """One Claude Code run (stream-json --verbose --include-partial-messages): each
    message as text deltas, then one line per content block, tool results in user
    lines, a result with modelUsage."""
    session = f"{rng.getrandbits(32):08x}-0000-4000-8000-{number:012x}"
    lines = []

    def emit(event):
        event.update(parent_tool_use_id=None, session_id=session,
                     uuid=f"{rng.getrandbits(64):016x}")
        lines.append(dump(event))

    usage = {"input_tokens": 4, "cache_creation_input_tokens": 1200,
             "cache_read_input_tokens": 15000, "output_tokens": 2}
    lines.append(dump({"type": "system", "subtype": "init", "cwd": "/home/dev/project",
                       "session_id": session, "tools": ["Bash", "Read"], "mcp_servers": [],
                       "model": "claude-sonnet-4-5", "permissionMode": "default",
                       "apiKeySource": "none", "claude_code_version": "2.0.31"}))
    text = ""
    for step in range(rng.randint(6, 20)):
        message = f"msg_{rng.getrandbits(64):016x}{number:06d}{step:03d}"
        text = " ".join(sentence(rng, rng.randint(1, 4)) for _ in range(rng.randint(5, 40)))
        # As the API starts a message: its model, and its usage so far.
        emit({"type": "stream_event", "event": {"type": "message_start", "message": {
            "model": "claude-sonnet-4-5", "id": message, "type": "message",
            "role": "assistant", "content": [], "stop_reason": None,
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 1}}}})
        for start in range(0, len(text), 12):
            emit({"type": "stream_event", "event": {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text[start:start + 12]}}})
        body = {"model": "claude-sonnet-4-5", "id": message, "type": "message",
                "role": "assistant", "stop_reason": None, "usage": usage}
        emit({"type": "assistant", "message": {**body, "content": [
            {"type": "text", "text": text}]}})
        if step < 5 or rng.random() < 0.8:
            kind, target, output = tool_work(rng)
            call = f"toolu_{rng.getrandbits(64):016x}{step:03d}"
            name, key = ("Read", "file_path") if kind == "read" else ("Bash", "command")
            emit({"type": "assistant", "message": {**body, "content": [
                {"type": "tool_use", "id": call, "name": name, "input": {key: target}}]}})
            emit({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": call, "type": "tool_result", "content": output,
                 "is_error": rng.random() < 0.1}]}})
    lines.append(dump({"type": "result", "subtype": "success", "is_error": False,
                       "duration_ms": rng.randint(1000, 90000), "duration_api_ms": 900,
                       "num_turns": 7, "result": text, "session_id": session,
                       "total_cost_usd": 0.0123, "usage": usage, "modelUsage": {
                           "claude-sonnet-4-5": {"inputTokens": 8, "outputTokens": 61,
                                                 "cacheReadInputTokens": 32151,
                                                 "cacheCreationInputTokens": 2029,
                                                 "costUSD": 0.0123}},
                       "permission_denials": []}))
    return lines


def codex_run_lines(rng, number):
    """One Codex CLI turn (codex exec --json): reasoning, commands started and completed,
    interim and final agent messages, usage."""
    lines = [dump({"type": "thread.started", "thread_id": f"019b{number:028x}"}),
             dump({"type": "turn.started"})]
    item = 0
    for _ in range(rng.randint(6, 20)):
        for kind in ("reasoning", "agent_message"):
            lines.append(dump({"type": "item.completed", "item": {
                "id": f"item_{item}", "type": kind, "text": sentence(rng, 30)}}))
            item += 1
        _, _, output = tool_work(rng)
        command = {"id": f"item_{item}", "type": "command_execution",
                   "command": "bash -lc 'cat src/a.py'", "aggregated_output": "",
                   "exit_code": None, "status": "in_progress"}
        lines.append(dump({"type": "item.started", "item": command}))
        lines.append(dump({"type": "item.completed", "item": {
            **command, "aggregated_output": output, "exit_code": 0, "status": "completed"}}))
        item += 1
    lines.append(dump({"type": "turn.completed", "usage": {
        "input_tokens": 8214, "cached_input_tokens": 6912, "output_tokens": 187}}))
    return lines


def gemini_run_lines(rng, number):
    """One Gemini CLI run (--output-format stream-json): the prompt, assistant deltas,
    tool uses and results, a result with stats."""
    clock = f"2026-05-11T08:{number % 60:02d}:00.000Z"
    lines = [dump({"type": "init", "timestamp": clock, "session_id": f"{number:032x}",
                   "model": "auto-gemini-3"}),
             dump({"type": "message", "timestamp": clock, "role": "user",
                   "content": sentence(rng, 20)})]
    for step in range(rng.randint(6, 20)):
        for _ in range(rng.randint(5, 40)):
            lines.append(dump({"type": "message", "timestamp": clock, "role": "assistant",
                               "content": " " + sentence(rng, 3), "delta": True}))
        kind, target, output = tool_work(rng)
        name, key = ("read_file", "file_path") if kind == "read" else (
            "run_shell_command", "command")
        tool = f"{name}-{step}-{rng.getrandbits(48):012x}"
        lines.append(dump({"type": "tool_use", "timestamp": clock, "tool_name": name,
                           "tool_id": tool, "parameters": {key: target}}))
        lines.append(dump({"type": "tool_result", "timestamp": clock, "tool_id": tool,
                           "status": "success", "output": output}))
    lines.append(dump({"type": "result", "timestamp": clock, "status": "success",
                       "stats": {"total_tokens": 21904, "input_tokens": 21611,
                                 "output_tokens": 58, "cached": 12288, "input": 9323,
                                 "duration_ms": 3921, "tool_calls": 6}}))
    return lines


def opencode_run_lines(rng, number):
    """One OpenCode run (opencode run --format json): steps of text and tool parts, each
    ended by a step_finish with its tokens; the last one ends for "stop"."""
    session = f"ses_{number:012x}{rng.getrandbits(32):08x}Zq"
    clock = 1789912440000 + number * 100000
    lines = []

    def emit(kind, part):
        nonlocal clock
        clock += rng.randint(1, 400)
        part.update(sessionID=session, messageID=message, id=f"prt_{rng.getrandbits(64):016x}")
        lines.append(dump({"type": kind, "timestamp": clock, "sessionID": session,
                           "part": part}))

    steps = rng.randint(6, 20)
    for step in range(steps):
        message = f"msg_{number:08x}{step:04x}{rng.getrandbits(32):08x}"
        emit("step_start", {"type": "step-start"})
        emit("text", {"type": "text", "text": sentence(rng, rng.randint(10, 80)),
                      "time": {"start": clock, "end": clock + 5}})
        last = step == steps - 1
        if not last:
            kind, target, output = tool_work(rng)
            name, key = ("read", "filePath") if kind == "read" else ("bash", "command")
            emit("tool_use", {"type": "tool", "tool": name,
                              "callID": f"call_{rng.getrandbits(64):016x}",
                              "state": {"status": "completed", "input": {key: target},
                                        "output": output, "metadata": {"exit": 0},
                                        "title": target, "time": {"start": clock,
                                                                  "end": clock + 300}}})
        emit("step_finish", {"type": "step-finish", "reason": "stop" if last else "tool-calls",
                             "tokens": {"total": 8212, "input": 7990, "output": 41,
                                        "reasoning": 181, "cache": {"write": 0, "read": 0}},
                             "cost": 0.00317})
    return lines


def qwen_run_lines(rng, number):
    """One Qwen Code run (stream-json --include-partial-messages): Claude's envelope with
    Qwen Code's ids (a message's id is its line's uuid) and tools, a result with no cost."""
    session = f"{rng.getrandbits(32):08x}-0000-4000-8000-{number:012x}"
    lines = []

    def emit(event, uuid=None):
        event.update(uuid=uuid or f"{rng.getrandbits(64):016x}", session_id=session,
                     parent_tool_use_id=None)
        lines.append(dump(event))

    emit({"type": "system", "subtype": "init", "cwd": "/home/dev/project",
          "tools": ["read_file", "run_shell_command"], "mcp_servers": [],
          "model": "qwen3-coder-plus", "permission_mode": "yolo",
          "qwen_code_version": "0.16.2"}, uuid=session)
    usage = {"input_tokens": 9124, "output_tokens": 37, "cache_read_input_tokens": 8704}
    text = ""
    steps = rng.randint(6, 20)
    for step in range(steps):
        message = f"{rng.getrandbits(32):08x}-{number:04x}-4{step:03x}-8000-000000000000"
        text = " ".join(sentence(rng, rng.randint(1, 4)) for _ in range(rng.randint(5, 40)))
        emit({"type": "stream_event", "event": {"type": "message_start", "message": {
            "id": message, "role": "assistant", "model": "qwen3-coder-plus", "content": []}}})
        for start in range(0, len(text), 12):
            emit({"type": "stream_event", "event": {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text[start:start + 12]}}})
        body = {"id": message, "type": "message", "role": "assistant",
                "model": "qwen3-coder-plus", "stop_reason": None, "usage": usage}
        emit({"type": "assistant", "message": {**body, "content": [
            {"type": "text", "text": text}]}}, uuid=message)
        if step < steps - 1 and (step < 5 or rng.random() < 0.8):  # the last: the answer
            kind, target, output = tool_work(rng)
            call = f"call_{rng.getrandbits(64):016x}"
            name, key = ("read_file", "file_path") if kind == "read" else (
                "run_shell_command", "command")
            tool_message = f"{message[:-12]}{step + 1:012x}"
            emit({"type": "assistant", "message": {**body, "id": tool_message, "content": [
                {"type": "tool_use", "id": call, "name": name, "input": {key: target}}]}},
                 uuid=tool_message)
            emit({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": call, "type": "tool_result", "content": output,
                 "is_error": rng.random() < 0.1}]}})
    emit({"type": "result", "subtype": "success", "is_error": False,
          "duration_ms": rng.randint(1000, 90000), "duration_api_ms": 900, "num_turns": 7,
          "result": text, "usage": usage, "permission_denials": []})
    return lines


def amp_run_lines(rng, number):
    """One Amp run (amp -x --stream-json): the prompt back, one line per message (no id),
    tool results in user lines, usage on assistant lines only, a result."""
    thread = f"T-019f{number:04x}-{rng.getrandbits(16):04x}-7000-8000-{number:012x}"
    lines = []

    def emit(event):
        event.update(parent_tool_use_id=None, session_id=thread)
        lines.append(dump(event))

    lines.append(dump({"type": "system", "subtype": "init", "cwd": "/home/dev/project",
                       "session_id": thread, "tools": ["Bash", "Read"], "mcp_servers": []}))
    emit({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": sentence(rng, 20)}]}})
    usage = {"input_tokens": 5, "cache_creation_input_tokens": 1204,
             "cache_read_input_tokens": 13377, "output_tokens": 58, "max_tokens": 300000,
             "service_tier": "standard"}
    text = ""
    for step in range(rng.randint(6, 20)):
        text = " ".join(sentence(rng, rng.randint(1, 4)) for _ in range(rng.randint(5, 40)))
        content = [{"type": "text", "text": text}]
        call = None
        if step < 5 or rng.random() < 0.8:
            kind, target, output = tool_work(rng)
            call = f"toolu_{rng.getrandbits(64):016x}{step:03d}"
            name, key = ("Read", "path") if kind == "read" else ("Bash", "cmd")
            content.append({"type": "tool_use", "id": call, "name": name,
                            "input": {key: target}})
        emit({"type": "assistant", "message": {"type": "message", "role": "assistant",
                                               "content": content, "stop_reason": "end_turn",
                                               "usage": usage}})
        if call is not None:
            emit({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": output,
                 "is_error": rng.random() < 0.1}]}})
    lines.append(dump({"type": "result", "subtype": "success",
                       "duration_ms": rng.randint(1000, 90000), "is_error": False,
                       "num_turns": 7, "result": text, "session_id": thread}))
    return lines


def antigravity_run_lines(rng, number):
    """One Antigravity CLI run (agy --output-format stream-json): agent_response steps of
    text deltas, tool steps ACTIVE then DONE with their output, a result."""
    conversation = f"{rng.getrandbits(32):08x}-0000-4000-8000-{number:012x}"
    lines = [dump({"event": "init", "conversation_id": conversation, "init": {
        "cwd": "/home/dev/project", "tools": ["run_command", "view_file"],
        "permission_mode": "always-proceed", "model": "gemini-3-pro"}})]
    index, answer, steps = 0, [], 0

    def step(**fields):
        lines.append(dump({"event": "step_update", "step_update": {
            "conversation_id": conversation, "step_index": index, **fields}}))

    usage = {"input_tokens": 13082, "output_tokens": 273, "thinking_tokens": 179,
             "cache_read_tokens": 12172, "total_tokens": 13355}
    for _ in range(rng.randint(6, 20)):
        for _ in range(rng.randint(5, 40)):
            text = " " + sentence(rng, 3)
            answer.append(text)
            step(state="ACTIVE", step_type="agent_response", text_delta=text)
        step(state="DONE", step_type="agent_response", duration_seconds=1.2, usage=usage)
        steps += 1
        index += 1
        kind, target, output = tool_work(rng)
        name, key = ("view_file", "AbsolutePath") if kind == "read" else (
            "run_command", "CommandLine")
        info = {"name": name, "parameters": {key: target}}
        step(state="ACTIVE", step_type="tool", tool_name=name, tool_info=info)
        step(state="DONE", step_type="tool", tool_name=name, duration_seconds=0.3,
             tool_info={**info, "output": output})
        index += 1
    lines.append(dump({"event": "result", "result": {
        "conversation_id": conversation, "status": "SUCCESS", "response": "".join(answer),
        "duration_seconds": 42.5, "num_turns": 1,
        "usage": {name: value * steps for name, value in usage.items()}}}))
    return lines


def copilot_run_lines(rng, number):
    """One GitHub Copilot CLI run (copilot -p --output-format json): start-up notices,
    the prompt, messages as deltas then whole, tool executions, per-call usage, the
    result line."""
    lines = []
    parent = [None]  # each event names the one before it; the session's first, none

    def emit(kind, **data):
        event_id = f"{rng.getrandbits(64):016x}"
        lines.append(dump({"type": kind, "data": data, "id": event_id,
                           "timestamp": f"2026-10-02T09:{number % 60:02d}:00.000Z",
                           "parentId": parent[0]}))
        parent[0] = event_id

    emit("session.tools_updated", model="claude-sonnet-4.6")
    emit("user.message", content=sentence(rng, 20))
    for step in range(rng.randint(6, 20)):
        message = f"{rng.getrandbits(64):016x}-{step}"
        pieces = [" " + sentence(rng, 3) for _ in range(rng.randint(5, 40))]
        for piece in pieces:
            emit("assistant.message_delta", messageId=message, deltaContent=piece)
        kind, target, output = tool_work(rng)
        call = f"toolu_{rng.getrandbits(64):016x}{step:03d}"
        name, key = ("view", "path") if kind == "read" else ("bash", "command")
        emit("assistant.message", messageId=message, content="".join(pieces),
             toolRequests=[{"toolCallId": call, "name": name, "arguments": {key: target}}],
             model="claude-sonnet-4.6")
        emit("assistant.usage", model="claude-sonnet-4.6", inputTokens=29900,
             outputTokens=120, cacheReadTokens=11000, cacheWriteTokens=0)
        emit("tool.execution_start", toolCallId=call, toolName=name,
             arguments={key: target})
        emit("tool.execution_complete", toolCallId=call, success=True,
             result={"content": output})
    lines.append(dump({"type": "result", "timestamp": "2026-10-02T09:59:00.000Z",
                       "sessionId": f"{number:032x}", "exitCode": 0, "usage": {
                           "premiumRequests": 1, "totalApiDurationMs": 31000,
                           "sessionDurationMs": 42000}}))
    return lines


AGENTS = {"cursor": run_lines, "claude": claude_run_lines, "codex": codex_run_lines,
          "gemini": gemini_run_lines, "opencode": opencode_run_lines,
          "qwen": qwen_run_lines, "amp": amp_run_lines,
          "antigravity": antigravity_run_lines, "copilot": copilot_run_lines}


def generate(path, megabytes, seed=1, agent="cursor"):
    """Write runs of ``agent`` to ``path`` until it holds at least ``megabytes`` MB."""
    rng = random.Random(seed)
    size, number = 0, 0
    runs = AGENTS[agent]
    with open(path, "w", encoding="utf-8") as out:
        while size < megabytes * 1_000_000:
            text = "".join(runs(rng, number))
            out.write(text)
            size += len(text.encode())
            number += 1
    return size


def small_files(folder, agents, count=2000, size=40_000):
    """``count`` files of about ``size`` bytes, each one run (the first lines of a
    generated run, and its end), of ``agents`` in turn; made once, kept.  With no
    ``size``, whole Cursor runs of one model call each (about 25 KB)."""
    folder.mkdir(exist_ok=True)
    paths = [folder / f"{number:05d}-{agents[number % len(agents)]}.ndjson"
             for number in range(count)]
    if all(path.exists() for path in paths):
        return paths
    print(f"generating {count} files in {folder} ...", file=sys.stderr)
    for number, path in enumerate(paths):
        if size is None:
            path.write_text("".join(run_lines(random.Random(number), number, steps=1)),
                            encoding="utf-8")
            continue
        lines = AGENTS[agents[number % len(agents)]](random.Random(number), number)
        kept, total = [], len(lines[-1])
        for line in lines[:-1]:
            total += len(line)
            if total > size:
                break
            kept.append(line)
        path.write_text("".join(kept) + lines[-1], encoding="utf-8")
    return paths


def generated_folder(root):
    """The folder under ``root`` for the inputs the generators make, named after their
    source (this file and sessions.py): inputs made by an earlier generator are never
    measured by mistake (they are kept until removed)."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("generate.py", "sessions.py"):
        digest.update((here / name).read_bytes())
    folder = root / f"gen-{digest.hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agent", choices=sorted(AGENTS), default="cursor")
    args = parser.parse_args()
    generate(args.out, args.mb, args.seed, args.agent)


if __name__ == "__main__":
    main()
