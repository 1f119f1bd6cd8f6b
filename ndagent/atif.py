"""A run as an ATIF trajectory (the Agent Trajectory Interchange Format of Harbor, RFC
0001), version 1.7, the version Harbor's own converters of these agents write: a user
step for each prompt the stream holds, agent steps made of the assistant's messages,
with their thinking as reasoning and the tool calls they asked for, each call's result
(as its agent's format shows it) as an observation, a subagent's calls as an embedded
trajectory, the run's own tokens and cost as final metrics.  What the stream does not
tell is left out (or, where the format requires a value, ``"unknown"``), never made up:
no step gets a made-up time.
Pure data: the verb (ndagent.cmd_atif) reads the stream and writes the lines."""

from ndagent import __version__
from ndagent.figures import figure
from ndagent.formats import get
from ndagent.markup import json_field, json_prose, json_value
from ndagent.otlp import CUTOFF_TEXT

SCHEMA_VERSION = "ATIF-v1.7"
# agent.version when the stream does not tell it (as Harbor's converters write).
UNKNOWN = "unknown"
# Between the thinking stretches of one step.
THINKING_SEPARATOR = "\n\n"


class _Step:
    __slots__ = ("source", "key", "line", "texts", "thoughts", "calls", "first_end")

    def __init__(self, key, line, source="agent"):
        self.source = source  # "agent", or "user" for a prompt
        self.key = key  # the message key (Claude's message id, Cursor's model call id)
        self.line = line
        self.texts = []
        self.thoughts = []
        self.calls = []
        self.first_end = None  # the line of the first end of its calls, if one ended

    def add(self, call):
        self.calls.append(call)
        end = call.end_line
        if end is not None and (self.first_end is None or end < self.first_end):
            self.first_end = end


def _arguments(args, limit):
    if args.__class__ is dict:
        return json_value(args, limit)
    return {} if args is None else {"value": json_value(args, limit)}


def _steps(items):
    """The steps of a stream of items in order: ("prompt", None, text, line), ("text",
    key, text, line), ("thought", key, text, line) and ("call", Call).  A prompt is a
    user step.  Thinking goes to the step of its message key, else to the next step
    opened (at the end, a step of its own).  A call joins the step of its message key;
    a call with no key (the agent gives none), the last step, the message before it,
    while none of its calls has ended before it began (parallel calls) and no thinking
    came after it; else a new step."""
    steps = []
    by_key = {}
    thinking = []  # thinking of no step yet

    def opened(key, line, source="agent"):
        step = _Step(key, line, source)
        if source == "agent":
            step.thoughts, thinking[:] = thinking[:], []
        steps.append(step)
        if key is not None:
            by_key[key] = step
        return step

    for item in items:
        kind = item[0]
        if kind == "prompt":
            opened(None, item[3], "user").texts.append(item[2])
        elif kind == "thought":
            step = by_key.get(item[1]) if item[1] is not None else None
            (step.thoughts if step is not None else thinking).append(item[2])
        elif kind == "text":
            _, key, text, line = item
            last = steps[-1] if steps else None
            if (last is None or last.source != "agent" or last.key != key
                    or (key is None and (last.calls or thinking))):
                last = opened(key, line)
            last.texts.append(text)
        else:
            _join(item[1], steps, by_key, thinking, opened)
    if thinking:
        opened(None, None)
    return steps


def _join(call, steps, by_key, thinking, opened):
    """Put ``call`` in its step (``_steps``)."""
    key = call.model_call_id
    step = by_key.get(key) if key is not None else None
    if step is None and key is None and not thinking and steps and (
            steps[-1].source == "agent") and not _ended_before(steps[-1], call):
        step = steps[-1]
    if step is None:
        step = opened(key, call.start_line or call.end_line)
    step.add(call)


def _ended_before(step, call):
    """Whether one of the step's calls ended before ``call`` began (its first end is
    kept: a test of each call was quadratic on many calls open at once)."""
    began = call.start_line if call.start_line is not None else call.end_line
    return step.first_end is not None and began is not None and step.first_end < began


def _items(calls, prompts=(), thinking=(), texts=()):
    """Prompts ((text, line)), thinking and text pieces ((key, text, line)) and calls in
    stream order (by line; on one line, in that order)."""
    items = [(line or 0, 0, index, ("prompt", None, text, line))
             for index, (text, line) in enumerate(prompts)]
    items += [(line or 0, 1, index, ("thought", key, text, line))
              for index, (key, text, line) in enumerate(thinking)]
    items += [(line or 0, 2, index, ("text", key, text, line))
              for index, (key, text, line) in enumerate(texts)]
    items += [(call.start_line or call.end_line or 0, 3, index, ("call", call))
              for index, call in enumerate(calls)]
    return [item[3] for item in sorted(items, key=lambda item: item[:3])]


def _step_json(number, step, timeline, model_name, limit, subagents, messages=None):
    """A step as ATIF writes it; ``model_name``: the run's model as written (or None);
    ``messages``: the run's Message events by key, whose figures are their agent steps'
    ``metrics``."""
    found = {"step_id": number}
    stamp = timeline.times.get(step.line)
    if stamp is not None:
        found["timestamp"] = _iso(stamp)
    found["source"] = step.source
    if model_name is not None and step.source == "agent":
        found["model_name"] = model_name
    found["message"] = json_prose("".join(step.texts))
    if step.thoughts:
        found["reasoning_content"] = json_prose(THINKING_SEPARATOR.join(step.thoughts))
    if step.calls:
        found["tool_calls"] = [_tool_call(call, timeline, limit) for call in step.calls]
        found["observation"] = {"results": [_result(call, limit, subagents)
                                            for call in step.calls]}
    message = None if messages is None or step.source != "agent" else messages.get(step.key)
    if message is not None and message.usage is not None:
        found["metrics"] = _step_metrics(message.usage)
    extra = {} if step.line is None else {"ndagent_line": step.line}
    if step.key is not None:
        extra = {"ndagent_message_id": json_field(str(step.key)), **extra}
    if extra:
        found["extra"] = extra
    return found


def _step_metrics(usage):
    """A message's figures as a step's ``metrics``: its prompt is what it read, cached or
    not; completion tokens only where the stream gave the final count."""
    read, cached, written = (usage.get(name) or 0 for name in ("input", "cacheRead",
                                                                "cacheWrite"))
    found = {"prompt_tokens": read + cached + written, "cached_tokens": cached}
    if usage.get("output") is not None:
        found["completion_tokens"] = usage["output"]
    found["extra"] = {"cache_creation_input_tokens": written}
    return found


def _call_id(call):
    if call.call_id is not None:
        return json_field(str(call.call_id))
    return f"line:{call.start_line or call.end_line}"


def _tool_call(call, timeline, limit):
    extra = {"ndagent_kind": None if call.kind is None else json_field(str(call.kind)),
             "ndagent_line": call.start_line or call.end_line}
    began = timeline.times.get(call.start_line)
    ended = timeline.times.get(call.end_line)
    if began is not None and ended is not None and ended >= began:
        extra["ndagent_duration_ms"] = ended - began
    name = call.name if call.name is not None else call.kind
    return {"tool_call_id": _call_id(call),
            "function_name": json_field(str(name)) if name is not None else UNKNOWN,
            "arguments": _arguments(call.args, limit), "extra": extra}


def _result(call, limit, subagents):
    found = {"source_call_id": _call_id(call)}
    if call.outcome != "pending" and call.result is not None:
        found["content"] = json_prose(call.result)  # cut to --max-chars when kept
    if call.call_id in subagents:
        found["subagent_trajectory_ref"] = [{"trajectory_id": _call_id(call)}]
    found["extra"] = {"ndagent_outcome": call.outcome}
    return found


def _iso(milliseconds):
    seconds, millis = divmod(milliseconds, 1000)
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    from_epoch = _date(days)
    return f"{from_epoch}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def _date(days):
    """The civil date ``days`` after 1970-01-01 (Howard Hinnant's algorithm)."""
    days += 719468
    era, day_of_era = divmod(days, 146097)
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524
                   - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_part = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_part + 2) // 5 + 1
    month = month_part + 3 if month_part < 10 else month_part - 9
    year = year_of_era + era * 400 + (month <= 2)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _final_metrics(end, steps):
    found = {}
    usage = None if end.cutoff else end.usage
    if usage.__class__ is dict:
        tokens = {name: figure(usage.get(name)) for name in ("input", "output", "cacheRead",
                                                             "cacheWrite")}
        given = [tokens[name] for name in ("input", "cacheRead", "cacheWrite")
                 if tokens[name] is not None]
        if given:
            found["total_prompt_tokens"] = int(sum(given))
        if tokens["output"] is not None:
            found["total_completion_tokens"] = int(tokens["output"])
        if tokens["cacheRead"] is not None:
            found["total_cached_tokens"] = int(tokens["cacheRead"])
    cost = None if end.cutoff else figure(end.cost_usd)
    if cost is not None:
        found["total_cost_usd"] = cost
    found["total_steps"] = steps
    if usage.__class__ is dict and figure(usage.get("cacheWrite")) is not None:
        found["extra"] = {"total_cache_creation_input_tokens": int(usage["cacheWrite"])}
    return found


def trajectory(run, end, limit=None):
    """The trajectory of a run (a recorder.Run and its RunEnd), as a dict in ATIF's
    key order; ``limit``: --max-chars for arguments and results (None: whole)."""
    start = run.start
    model = end.model if end.model is not None else start.model
    # Escaped once: each agent step repeats it.
    model_name = None if model is None else json_field(str(model))
    main = [call for call in run.calls if call.parent is None]
    children = {}
    for call in run.calls:
        if call.parent is not None:
            children.setdefault(call.parent, []).append(call)
    known = {call.call_id for call in run.calls if call.call_id is not None}
    subagents = {parent for parent in children if parent in known}
    orphans = [call for parent, calls in children.items() if parent not in subagents
               for call in calls]  # a parent never seen: kept with the main steps
    steps = _steps(_items(sorted(main + orphans, key=_line), run.prompts, run.thinking,
                          run.texts))
    outcome = "cutoff" if end.cutoff else "ok" if end.ok else "failed"
    failure = None if end.ok or end.cutoff or end.failure is None else json_prose(
        str(end.failure))
    messages = {message.key: message for message in run.messages}
    steps_json = [_step_json(number, step, run.timeline, model_name, limit, subagents,
                             messages)
                  for number, step in enumerate(steps, 1)]
    if not steps_json:
        steps_json = [{"step_id": 1, "source": "system",
                       "message": failure or (CUTOFF_TEXT if end.cutoff else "no steps")}]
    agent = start.agent
    version = start.version
    found = {"schema_version": SCHEMA_VERSION}
    if start.session_id is not None:
        found["session_id"] = json_field(str(start.session_id))
    agent_json = {"name": get(agent).interchange[0],
                  "version": UNKNOWN if version is None else json_field(str(version))}
    if model_name is not None:
        agent_json["model_name"] = model_name
    agent_json["extra"] = {"ndagent_agent": agent,
                           **({} if start.cwd is None else {"cwd": json_field(str(start.cwd))})}
    found["agent"] = agent_json
    found["steps"] = steps_json
    if end.cutoff:
        found["notes"] = f"cut off: {CUTOFF_TEXT}"
    elif not end.ok:
        found["notes"] = f"failed: {failure or 'the run reported failure'}"
    found["final_metrics"] = _final_metrics(end, len(steps_json))
    if subagents:
        found["subagent_trajectories"] = [
            _subagent(parent, children[parent], run.timeline, found["agent"], limit)
            for parent in sorted(subagents, key=lambda parent: _line(children[parent][0]))]
    duration = None if end.cutoff else figure(end.duration_ms)
    answer = end.answer if end.answer.__class__ is str and not end.cutoff else None
    ndagent = {"version": __version__, "source": json_field(str(start.source)),
               "line": start.line, "outcome": outcome, "failure": failure,
               "duration_ms": duration,
               "answer": None if answer is None else json_prose(answer)}
    found["extra"] = {"ndagent": {key: item for key, item in ndagent.items()
                                  if item is not None}}
    return found


def _line(call):
    return call.start_line or call.end_line or 0


def _subagent(parent, calls, timeline, agent, limit):
    steps = _steps(_items(calls))
    return {"schema_version": SCHEMA_VERSION, "trajectory_id": json_field(str(parent)),
            "agent": agent,
            "steps": [_step_json(number, step, timeline, None, limit, set())
                      for number, step in enumerate(steps, 1)]}
