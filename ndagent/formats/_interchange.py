"""How the interchange outputs (``ndagent otel``, ``ndagent atif``) name each agent:
the name Harbor's trajectory format gives it (its ``AgentName`` values, also the
OpenTelemetry ``gen_ai.agent.name`` and ``service.name``), and the GenAI provider of
the models it calls (OpenTelemetry's well-known ``gen_ai.provider.name`` values, or a
custom one where the CLI routes to several providers).  Kept apart from the agent
modules until each module declares its own (then this table goes)."""

# agent -> (interchange name, provider)
NAMES = {
    "claude": ("claude-code", "anthropic"),
    "codex": ("codex", "openai"),
    # The CLI may use AI Studio or Vertex: the value for an unknown Google backend.
    "gemini": ("gemini-cli", "gcp.gen_ai"),
    "antigravity": ("antigravity-cli", "gcp.gen_ai"),
    # Custom values: these CLIs route to several providers.
    "cursor": ("cursor-cli", "cursor"),
    "copilot": ("copilot-cli", "github_copilot"),
    "opencode": ("opencode", "opencode"),
}


def interchange_name(agent):
    """The agent's name in OTel and ATIF output; ndagent's own for one not listed."""
    return NAMES.get(agent, (agent, agent))[0]


def provider(agent):
    """The GenAI provider name of the agent's model calls."""
    return NAMES.get(agent, (agent, agent))[1]
