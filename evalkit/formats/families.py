"""One tool-family scheme for every agent (issue 23): the `tool_family` of a tool call.

The families, in the order tables print them::

    tool_under_test  the tool profile's tools (the profile's label names which: codegraph, …)
    read             Read, NotebookRead, read_file, view_image
    search           Grep, Glob, grep_files, list_dir
    bash             Bash, BashOutput, shell, exec_command, command_execution, …
    edit             Edit, Write, MultiEdit, NotebookEdit, apply_patch, file_change, …
    plan             TodoWrite, update_plan, todo_list
    subagent         Task, Agent, spawn_agent, …
    web              WebSearch, WebFetch, web_search, …
    mcp_other        any other MCP tool (mcp__<server>__<tool>)
    other            everything else (ToolSearch, ExitPlanMode, …)

The tool under test is asked of the profile first, so a profile applies to every agent; the
built-in names are the agent-neutral table of `evalkit.formats.common.tool_family` (Claude Code,
Codex and Inspect names), renamed into this scheme by `_RENAME` below. This scheme is evalkit's
own: the reference's occupancy families (`evalkit.metrics.occupancy.FAMILIES`: the tool under
test, read, search, bash, other) are what the reference-exact outputs and the `family` and
`residual_<family>` columns keep; the `tool_family` column of the tool_calls frame carries this
one. `evalkit columns families` lists it.
"""

from __future__ import annotations

from evalkit.formats.common import mcp_server
from evalkit.formats.common import tool_family as neutral_family
from evalkit.formats.profiles import ToolProfile

__all__ = ["TOOL_FAMILIES", "FAMILY_MEANINGS", "family_of"]

# (family, what it holds), in print order: the one declaration of the scheme.
FAMILY_MEANINGS: tuple[tuple[str, str], ...] = (
    ("tool_under_test", "the tool profile's tools (the sessions frame's tool_under_test names it)"),
    ("read", "reading one file: Read, NotebookRead, read_file, view_image"),
    ("search", "searching files: Grep, Glob, grep_files, list_dir"),
    ("bash", "running a command: Bash, BashOutput, shell, exec_command, command_execution"),
    (
        "edit",
        "changing files: Edit, Write, MultiEdit, NotebookEdit, apply_patch, file_change, "
        "text_editor",
    ),
    ("plan", "keeping a plan: TodoWrite, update_plan, todo_list"),
    ("subagent", "delegating to a subagent: Task, Agent, spawn_agent and its companions"),
    ("web", "the web: WebSearch, WebFetch, web_search, web_browser"),
    ("mcp_other", "an MCP tool (mcp__<server>__<tool>) that is not the tool under test"),
    ("other", "everything else (ToolSearch, ExitPlanMode, a tool no table names)"),
)
TOOL_FAMILIES: tuple[str, ...] = tuple(f for f, _ in FAMILY_MEANINGS)

# The agent-neutral family → this scheme (a neutral family not named here keeps its name).
_RENAME = {"agent": "subagent", "tool_search": "other"}


def family_of(name: str, profile: ToolProfile) -> str:
    """The cross-agent family of a tool name under `profile` (one of `TOOL_FAMILIES`)."""
    if not isinstance(name, str):
        return "other"
    if profile.is_tool_under_test(name):
        return "tool_under_test"
    fam = neutral_family(name)
    fam = _RENAME.get(fam, fam)
    if fam in TOOL_FAMILIES:
        return fam
    # `neutral_family` names an MCP tool by its server (and any codegraph tool `codegraph`):
    # under a profile whose tool it is not, that is another MCP tool, or other.
    return "mcp_other" if mcp_server(name) is not None else "other"
