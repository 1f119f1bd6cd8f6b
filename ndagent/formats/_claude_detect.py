"""Which of the three agents that write Claude Code's stream envelope (Claude Code,
Qwen Code, Amp) wrote an object: each one's decisive test, and the envelope's own
(docs/agents.md#claude-compatible-agents)."""


# The types of the lines that carry Amp's thread id, and of those that may tell Qwen
# Code's stream from Claude's.
AMP_TYPES = frozenset({"system", "user", "assistant", "result"})
QWEN_TYPES = frozenset({"system", "user", "assistant", "result", "stream_event"})


def amp_decides(data):
    """Amp: a thread id (``T-...``) in ``session_id``, on every line of its envelope."""
    session = data.get("session_id")
    if session.__class__ is not str or not session.startswith("T-"):
        return False
    kind = data.get("type")
    return kind.__class__ is str and kind in AMP_TYPES


def qwen_decides(data):
    """Qwen Code: its version (every init), an assistant line whose uuid is its message's
    id, a result with no cost, a message_start with no usage; never with Amp's id."""
    kind = data.get("type")
    if kind.__class__ is not str or kind not in QWEN_TYPES:
        return False
    # The cheap tests first, Amp's last: after detection, this runs on every line of a
    # Claude stream, most of them deltas (formats.OtherAgents).
    if "qwen_code_version" in data:
        found = True
    elif kind == "stream_event":  # a message_start's message (no call: nearly every line)
        event = data.get("event")
        if event.__class__ is not dict or event.get("type") != "message_start":
            return False
        message = event.get("message")
        found = message.__class__ is dict and "id" in message and "usage" not in message
    elif kind == "assistant":
        message, uuid = data.get("message"), data.get("uuid")
        found = (uuid.__class__ is str and message.__class__ is dict
                 and message.get("id") == uuid)
    elif kind == "result":
        found = ("uuid" in data and "num_turns" in data and "total_cost_usd" not in data
                 and "modelUsage" not in data)
    else:
        return False
    return found and not amp_decides(data)


def claude_decides(data):
    """Claude Code: what neither Qwen Code nor Amp writes (its init's tools list or
    version, its own event types, a cost, ``msg_`` ids, a uuid that is not the message
    id, a user line's timestamp or structured tool output, a message_start with usage)."""
    if "sessionId" in data:  # a line of Claude Code's session files, never a stream's
        return False
    kind = data.get("type")
    # The most frequent types first, with no any(): after detection, this runs on every
    # assistant line of a Cursor stream (formats.OtherAgents).
    if kind == "assistant":
        message = data.get("message")
        if message.__class__ is not dict:
            return False
        key = message.get("id")
        if key.__class__ is not str:
            return False
        uuid = data.get("uuid")
        if not (key.startswith("msg_") or (uuid.__class__ is str and uuid != key)):
            return False
    elif kind == "user":
        if data.get("message").__class__ is not dict or (
                "tool_use_result" not in data and "timestamp" not in data):
            return False
    elif kind == "system":
        if data.get("subtype") != "init" or not (data.get("tools").__class__ is list
                                                 or "claude_code_version" in data):
            return False
    elif kind == "result":
        cost = data.get("total_cost_usd")
        if "modelUsage" not in data and not (
                (cost.__class__ is int or cost.__class__ is float) and cost > 0):
            return False
    elif kind == "stream_event":
        message = _message_start(data)
        if message is None or "usage" not in message:
            return False
    elif kind != "rate_limit_event" and kind != "conversation_reset":
        return False
    return not (amp_decides(data) or "qwen_code_version" in data or qwen_decides(data))


def claude_family(data):
    """Whether an object is in Claude's envelope, whichever of the three agents wrote it
    (what Claude's test was before Qwen Code and Amp were read): an input with no line
    that tells them apart is read as Claude's."""
    if "sessionId" in data:  # a line of Claude Code's session files, never a stream's
        return False
    kind = data.get("type")
    if kind == "assistant" or kind == "user":
        if "uuid" in data:
            return True
        message = data.get("message")
        if message.__class__ is not dict:
            return False
        if "id" in message:
            return True
        content = message.get("content")
        if content.__class__ is list:
            for block in content:
                if block.__class__ is dict and block.get("type") == "tool_result":
                    return True
        return False
    if kind == "system":
        subtype = data.get("subtype")
        if subtype == "init":
            return data.get("tools").__class__ is list or "claude_code_version" in data
        return subtype.__class__ is str
    if kind == "result":
        return "num_turns" in data or "total_cost_usd" in data or "modelUsage" in data
    return kind in ("stream_event", "rate_limit_event", "conversation_reset")


def _message_start(data):
    """The message of a stream_event ``message_start``, or None."""
    if data.get("type") != "stream_event":
        return None
    event = data.get("event")
    if event.__class__ is not dict or event.get("type") != "message_start":
        return None
    message = event.get("message")
    return message if message.__class__ is dict else None
