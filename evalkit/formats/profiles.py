"""Tool profiles: which tool names are the tool under test, and how the other families form.

This is the one place where tool names are turned into families (reference-metrics §1.4). Every
reader, metric and table asks a `ToolProfile`; none tests a tool name itself.

A profile is a small declaration, written as TOML (or the same shape as a dict)::

    name = "sourcegraph"
    description = "Sourcegraph MCP server (sg_* tools) under test"

    [tool_under_test]
    label = "sourcegraph"              # the family's name in tables
    tools = ["mcp__sourcegraph__*"]    # globs (fnmatch, case-sensitive)
    explore = []                       # codegraph-format explore tools (allocation, sufficiency)
    cli = ["src"]                      # programs whose use through Bash is contamination

    [families]                         # tested after the tool under test, in this order
    read = ["Read", "NotebookRead"]
    search = ["Grep", "Glob"]
    bash = ["Bash", "BashOutput"]

    [counts]                           # the behaviour counts `Read`, `Grep/Glob`, `Bash`
    read = ["Read"]
    search = ["Grep", "Glob"]
    bash = ["Bash"]

    [file_inputs]                      # tools whose input names one file: glob = input field
    "Read" = "file_path"
    "mcp__sourcegraph__sg_read_file" = "path"

Everything not matched is `other`. Two presets ship: `codegraph` (the default: exactly the
reference's rules, so every reference number is unchanged) and `sourcegraph`. Explore allocation
and explore sufficiency keep their codegraph definitions (they parse codegraph's response format)
and apply only to the tools `explore` declares; the sourcegraph preset declares none.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.ecma import NOT_WS, WS
from evalkit.errors import UsageError

__all__ = [
    "CODEGRAPH_EXPLORE",
    "PRESETS",
    "BUILTIN_FAMILIES",
    "ToolProfile",
    "Globs",
    "CODEGRAPH",
    "SOURCEGRAPH",
    "profile_from_dict",
    "load_profile",
    "preset",
    "ProfileChoice",
    "mcp_profile",
    "choose_profile",
]

# §1.4: the name the codegraph harness registers; any MCP server prefix works for `is_explore`.
CODEGRAPH_EXPLORE = "mcp__codegraph__codegraph_explore"
# The families after the tool under test, in the order they are tested and printed (§1.4).
BUILTIN_FAMILIES: tuple[str, ...] = ("read", "search", "bash", "other")
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_META = frozenset("*?[")
_LISTS_KEPT = 256  # `system/init` tool lists whose tools under test a profile remembers,
_LIST_CHARS = 16384  # each of at most this many characters of names
_MEMO = 4096  # tool names whose answers a glob set (or a profile's families) remembers
# Names longer than this are matched every time, not remembered: the memos stay small however
# long the names a log holds (a real tool name is a few dozen characters).
_MEMO_NAME = 256


class Globs:
    """A set of fnmatch globs compiled for speed: exact names, `*substring*`, else a regex.

    Picklable (sweep workers receive profiles), hashable and comparable by its globs.
    """

    __slots__ = ("globs", "_exact", "_contains", "_regex", "_memo")

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs: tuple[str, ...] = tuple(globs)
        exact: set[str] = set()
        contains: list[str] = []
        regex: list[str] = []
        for g in self.globs:
            if not _META & set(g):
                exact.add(g)
            elif (
                len(g) >= 2 and g[0] == "*" and g[-1] == "*" and not _META & set(g[1:-1])
            ):  # `*codegraph*`: the reference's substring test
                contains.append(g[1:-1])
            else:
                regex.append(fnmatch.translate(g))
        self._exact = frozenset(exact)
        self._contains = tuple(contains)
        self._regex = re.compile("|".join(regex)) if regex else None
        self._memo: dict[str, bool] = {}  # name → answer, a pure function of both

    def __call__(self, name: str) -> bool:
        found = self._memo.get(name)
        if found is None:
            found = self._match(name)
            if len(self._memo) < _MEMO and len(name) <= _MEMO_NAME:  # bounded (hostile logs)
                self._memo[name] = found
        return found

    def _match(self, name: str) -> bool:
        if name in self._exact:
            return True
        for part in self._contains:
            if part in name:
                return True
        return self._regex is not None and self._regex.match(name) is not None

    def __getstate__(self) -> tuple[str, ...]:
        return self.globs

    def __setstate__(self, state: tuple[str, ...]) -> None:
        self.__init__(state)  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Globs) and other.globs == self.globs

    def __hash__(self) -> int:
        return hash(self.globs)

    def __repr__(self) -> str:
        return f"Globs({list(self.globs)!r})"


_UNCOMPILED: Any = object()  # a profile's CLI pattern before its first use


def _cli_pattern(programs: Sequence[str]) -> re.Pattern[str] | None:
    """§1.11: a program invoked in some command position (after `;`, `&`, `|`, `(`, `&&`, `||`,
    `$(` or a backtick, past `VAR=value` assignments), with any path prefix."""
    if not programs:
        return None
    names = "|".join(re.escape(p) for p in programs)
    return re.compile(
        r"(^|[;&|(]|&&|\|\||\$\(|`)" + WS + r"*(?:[A-Za-z_]\w*=" + NOT_WS + "*" + WS + r"+)*"
        r"[\w./~-]*(?:" + names + ")(" + WS + r"|\Z)",
        re.ASCII,
    )


@dataclass(frozen=True)
class ToolProfile:
    """A declaration of the tool under test and of the other tool families.

    Attributes:
        name: The profile's name (`codegraph`, `sourcegraph`, or a user file's `name`).
        label: The tool under test's family name in tables (`codegraph`, `sourcegraph`).
        tools: Globs naming the tool under test's tools (tested first).
        explore: Globs naming codegraph-format explore tools; empty = no explore metrics.
        cli: Programs whose invocation through Bash means the tool leaked into the run.
        read, search, bash: Globs of the occupancy families, tested in that order after `tools`.
        count_read, count_search, count_bash: Exact-or-glob names behind the behaviour counts
            `Read`, `Grep/Glob` and `Bash` (the reference counts `Read` only, not NotebookRead).
        file_inputs: `(tool glob, input field)` pairs: tools whose input names one file.
        description: One line for people.
        source: `preset` or the file the profile was read from (its name only).
    """

    name: str
    label: str
    tools: Globs
    explore: Globs
    cli: tuple[str, ...]
    read: Globs
    search: Globs
    bash: Globs
    count_read: Globs
    count_search: Globs
    count_bash: Globs
    file_inputs: tuple[tuple[str, str], ...] = ()
    description: str = ""
    source: str = "preset"
    _file_globs: tuple[tuple[Globs, str], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        globs = tuple((Globs([g]), f) for g, f in self.file_inputs)
        object.__setattr__(self, "_file_globs", globs)
        object.__setattr__(self, "_cli", _UNCOMPILED)  # compiled on first use (`is_cli_call`)
        object.__setattr__(self, "_family_memo", {})  # name → family: a pure function of both
        object.__setattr__(self, "_listed_memo", {})  # init tool list → its tools under test

    # -- pickling: compiled parts are rebuilt --------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict() | {"source": self.source}

    def __setstate__(self, state: dict[str, Any]) -> None:
        other = profile_from_dict(state, source=state.get("source", "preset"))
        for k in other.__dataclass_fields__:
            object.__setattr__(self, k, getattr(other, k))
        object.__setattr__(self, "_cli", _UNCOMPILED)
        object.__setattr__(self, "_family_memo", {})
        object.__setattr__(self, "_listed_memo", {})

    # -- the rules -------------------------------------------------------------------------------
    @property
    def families(self) -> tuple[str, ...]:
        """The occupancy families in test and print order: the tool under test first (§1.4)."""
        return (self.label, *BUILTIN_FAMILIES)

    @property
    def is_default(self) -> bool:
        return self == CODEGRAPH

    def is_tool_under_test(self, name: str) -> bool:
        """The name is one of the tool under test's tools."""
        return self.tools(name)

    def tools_under_test(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """The names that are the tool under test's, in order (a `system/init` tool list).

        Every result event of a session repeats the same list, so the answer is remembered per
        list (a bounded number of lists, each of bounded length: hostile logs stay small)."""
        memo = self._listed_memo  # type: ignore[attr-defined]
        found = memo.get(names)
        if found is None:
            tools = self.tools
            found = tuple([t for t in names if tools(t)])
            if len(memo) < _LISTS_KEPT and sum(map(len, names)) <= _LIST_CHARS:
                memo[names] = found
        return found

    def is_explore(self, name: Any) -> bool:
        """A codegraph-format explore tool (codegraph: the name contains `codegraph_explore`)."""
        return isinstance(name, str) and self.explore(name)

    def family(self, name: str) -> str:
        """The occupancy family: the label, `read`, `search`, `bash` or `other`, in that order."""
        memo = self._family_memo  # type: ignore[attr-defined]
        found = memo.get(name)
        if found is None:
            found = self._family(name)
            if len(memo) < _MEMO and len(name) <= _MEMO_NAME:  # bounded (hostile logs)
                memo[name] = found
        return found

    def _family(self, name: str) -> str:
        if self.tools(name):
            return self.label
        if self.read(name):
            return "read"
        if self.search(name):
            return "search"
        if self.bash(name):
            return "bash"
        return "other"

    def is_cli_call(self, command: str) -> bool:
        """The Bash command runs one of `cli` in some command position (§1.11)."""
        pattern = self._cli  # type: ignore[attr-defined]
        if pattern is _UNCOMPILED:
            # Its character classes take milliseconds to compile, and a run that calls no
            # Bash (or the presets a session does not use) never needs the pattern.
            pattern = _cli_pattern(self.cli)
            object.__setattr__(self, "_cli", pattern)
        return pattern is not None and pattern.search(command) is not None

    def file_of(self, name: Any, tool_input: Any) -> str | None:
        """The one file a call's input names, when the profile declares its field; else None."""
        if not isinstance(name, str) or not isinstance(tool_input, dict):
            return None
        for globs, key in self._file_globs:
            if globs(name):
                value = tool_input.get(key)
                return value if isinstance(value, str) and value else None
        return None

    # -- describing ----------------------------------------------------------------------------
    def describe(self) -> str:
        """`codegraph (default)`, `sourcegraph (preset)`, `mine (from mine.toml)`: for tables."""
        if self.is_default:
            return f"{self.name} (default)"
        if self.source == "preset":
            return f"{self.name} (preset)"
        if self.source == "detected":
            return f"{self.name} (made for the MCP server the sessions call)"
        return f"{self.name} (from {self.source})"

    def to_dict(self) -> dict[str, Any]:
        """The declaration, in the TOML shape."""
        return {
            "name": self.name,
            "description": self.description,
            "tool_under_test": {
                "label": self.label,
                "tools": list(self.tools.globs),
                "explore": list(self.explore.globs),
                "cli": list(self.cli),
            },
            "families": {
                "read": list(self.read.globs),
                "search": list(self.search.globs),
                "bash": list(self.bash.globs),
            },
            "counts": {
                "read": list(self.count_read.globs),
                "search": list(self.count_search.globs),
                "bash": list(self.count_bash.globs),
            },
            "file_inputs": dict(self.file_inputs),
        }

    def fingerprint(self) -> str:
        """A digest of the rules (not the name or description): part of every sweep cache key."""
        rules = self.to_dict()
        rules.pop("name")
        rules.pop("description")
        text = json.dumps(rules, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


_SCHEMA: dict[str, Any] = {
    "name": str,
    "description": str,
    "tool_under_test": {"label": str, "tools": list, "explore": list, "cli": list},
    "families": {"read": list, "search": list, "bash": list},
    "counts": {"read": list, "search": list, "bash": list},
    "file_inputs": dict,
}


def _check(data: Mapping[str, Any], schema: Mapping[str, Any], where: str, origin: str) -> None:
    for key, value in data.items():
        if key not in schema:
            known = ", ".join(schema)
            raise UsageError(f"{origin}: unknown key {where}{key!r} (known: {known})")
        want = schema[key]
        if isinstance(want, dict):
            if not isinstance(value, dict):
                raise UsageError(f"{origin}: {where}{key} must be a table")
            _check(value, want, f"{where}{key}.", origin)
        elif not isinstance(value, want):
            kind = {str: "a string", list: "a list of strings", dict: "a table"}[want]
            raise UsageError(f"{origin}: {where}{key} must be {kind}")
        elif want is list and not all(isinstance(x, str) and x for x in value):
            raise UsageError(f"{origin}: {where}{key} must be a list of non-empty strings")
        elif want is dict and not all(isinstance(x, str) and x for x in value.values()):
            raise UsageError(f"{origin}: every {where}{key} entry must name an input field")


def profile_from_dict(data: Mapping[str, Any], *, source: str = "preset") -> ToolProfile:
    """Build a profile from its declaration (the TOML shape), filling omitted parts.

    Omitted: `label` = `name`; `explore`, `cli`, `file_inputs` = none; `families` = Claude
    Code's built-in tools (`Read`/`NotebookRead`, `Grep`/`Glob`, `Bash`/`BashOutput`); `counts`
    = `Read`, `Grep`+`Glob`, `Bash` as the reference counts them.

    Raises:
        UsageError: An unknown key, a value of the wrong type, a missing `name` or `tools`, or a
            label that clashes with a built-in family.
    """
    origin = f"tool profile {source}" if source != "preset" else "tool profile"
    data = dict(data)
    data.pop("source", None)
    _check(data, _SCHEMA, "", origin)
    name = data.get("name")
    if not name:
        raise UsageError(f"{origin}: needs a name")
    tut = data.get("tool_under_test", {})
    label = tut.get("label", name)
    if not _LABEL.match(label) or label in BUILTIN_FAMILIES:
        raise UsageError(
            f"{origin}: label {label!r} must be a word (letters, digits, '_', '-', '.') and not "
            f"one of {', '.join(BUILTIN_FAMILIES)}"
        )
    if not tut.get("tools"):
        raise UsageError(f"{origin}: tool_under_test.tools must name at least one tool glob")
    fam = {**_DEFAULT_FAMILIES, **data.get("families", {})}
    counts = {**_DEFAULT_COUNTS, **data.get("counts", {})}
    return ToolProfile(
        name=name,
        label=label,
        tools=Globs(tut["tools"]),
        explore=Globs(tut.get("explore", [])),
        cli=tuple(tut.get("cli", [])),
        read=Globs(fam["read"]),
        search=Globs(fam["search"]),
        bash=Globs(fam["bash"]),
        count_read=Globs(counts["read"]),
        count_search=Globs(counts["search"]),
        count_bash=Globs(counts["bash"]),
        file_inputs=tuple(data.get("file_inputs", {}).items()),
        description=data.get("description", ""),
        source=source,
    )


_DEFAULT_FAMILIES = {
    "read": ["Read", "NotebookRead"],
    "search": ["Grep", "Glob"],
    "bash": ["Bash", "BashOutput"],
}
_DEFAULT_COUNTS = {"read": ["Read"], "search": ["Grep", "Glob"], "bash": ["Bash"]}

PRESETS: dict[str, dict[str, Any]] = {
    # Exactly the reference's rules (§1.4, §1.11): a name containing `codegraph` is the tool
    # under test, one containing `codegraph_explore` an explore call.
    "codegraph": {
        "name": "codegraph",
        "description": "codegraph MCP server under test (the reference harness's rules)",
        "tool_under_test": {
            "label": "codegraph",
            "tools": ["*codegraph*"],
            "explore": ["*codegraph_explore*"],
            "cli": ["codegraph"],
        },
        "families": _DEFAULT_FAMILIES,
        "counts": _DEFAULT_COUNTS,
        "file_inputs": {"Read": "file_path", "NotebookRead": "notebook_path"},
    },
    "sourcegraph": {
        "name": "sourcegraph",
        "description": "Sourcegraph MCP server (sg_* tools) under test",
        "tool_under_test": {
            "label": "sourcegraph",
            "tools": ["mcp__sourcegraph__*"],
            "explore": [],
            "cli": ["src"],
        },
        "families": _DEFAULT_FAMILIES,
        "counts": _DEFAULT_COUNTS,
        "file_inputs": {
            "Read": "file_path",
            "NotebookRead": "notebook_path",
            "mcp__sourcegraph__sg_read_file": "path",
        },
    },
}

CODEGRAPH = profile_from_dict(PRESETS["codegraph"])
SOURCEGRAPH = profile_from_dict(PRESETS["sourcegraph"])
_BUILT = {"codegraph": CODEGRAPH, "sourcegraph": SOURCEGRAPH}


def preset(name: str) -> ToolProfile:
    """A shipped preset by name.

    Raises:
        UsageError: No preset has that name.
    """
    try:
        return _BUILT[name]
    except KeyError:
        raise UsageError(
            f"no tool profile preset {name!r} (presets: {', '.join(PRESETS)}; or give a .toml file)"
        ) from None


def load_profile(
    spec: str | os.PathLike[str] | ToolProfile | Mapping[str, Any] | None,
) -> ToolProfile:
    """The profile `spec` names: None = codegraph, a preset name, `mcp:<server>` (the generic
    profile of that MCP server, `mcp_profile`), a TOML file, or a dict.

    Raises:
        UsageError: No such preset or file, a file that is not TOML, or a bad declaration
            (the message names the file).
    """
    if spec is None:
        return CODEGRAPH
    if isinstance(spec, ToolProfile):
        return spec
    if isinstance(spec, Mapping):
        return profile_from_dict(spec, source="(dict)")
    text = os.fspath(spec)
    if text in _BUILT and not os.path.exists(text):
        return _BUILT[text]
    if text.startswith("mcp:") and len(text) > 4 and not os.path.exists(text):
        return mcp_profile(text[4:])  # the generic profile of one MCP server (issue 23)
    if not os.path.exists(text):
        if os.sep in text or text.endswith(".toml"):
            raise UsageError(f"{text}: no such tool profile file")
        return preset(text)
    import tomllib  # only a profile file needs it: a sweep with the default profile does not

    try:
        with open(text, "rb") as fh:
            data = tomllib.load(fh)
    except IsADirectoryError:
        raise UsageError(f"{text}: is a directory, not a tool profile file") from None
    except OSError as exc:
        raise UsageError(f"{text}: cannot read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{text}: not a valid TOML tool profile ({exc})") from None
    return profile_from_dict(data, source=os.path.basename(text))


# --- choosing a profile from the tools the sessions call (issue 23) ----------------------------

_MCP_NAME = re.compile(r"^mcp__(?P<server>.+?)__.+$")

# The declaration a profile for an MCP server no preset knows is made from: the server's tools
# are the tool under test, labelled by the server's name; everything else as the presets.
MCP_TEMPLATE: dict[str, Any] = {
    "description": "the {server} MCP server's tools (mcp__{server}__*) under test",
    "tool_under_test": {"tools": ["mcp__{server}__*"], "explore": [], "cli": []},
    "families": _DEFAULT_FAMILIES,
    "counts": _DEFAULT_COUNTS,
    "file_inputs": {"Read": "file_path", "NotebookRead": "notebook_path"},
}


def mcp_profile(server: str) -> ToolProfile:
    """The generic profile of an MCP server no preset names (`MCP_TEMPLATE` filled in): its
    label is the server's name (`mcp-<name>` when the name is not a usable label)."""
    label = server if _LABEL.match(server) and server not in BUILTIN_FAMILIES else None
    if label is None:
        label = "mcp-" + re.sub(r"[^A-Za-z0-9_.-]", "_", server)
    tut = MCP_TEMPLATE["tool_under_test"]
    glob = "mcp__" + "".join(f"[{c}]" if c in _META else c for c in server) + "__*"
    data = {
        "name": label,
        "description": MCP_TEMPLATE["description"].format(server=server),
        "tool_under_test": {**tut, "label": label, "tools": [glob]},
        "families": MCP_TEMPLATE["families"],
        "counts": MCP_TEMPLATE["counts"],
        "file_inputs": MCP_TEMPLATE["file_inputs"],
    }
    return profile_from_dict(data, source="detected")


@dataclass(frozen=True)
class ProfileChoice:
    """The tool profile chosen for a corpus when none was given, and why.

    Attributes:
        profile: The profile.
        reason: Why, in plain words (`3 of 6 sessions call mcp__sourcegraph__* tools`).
        detected: False when the profile was given (a flag or argument), not detected.
        flag: The `--profile` value that names the same profile (`sourcegraph`, `mcp:github`).
    """

    profile: ToolProfile
    reason: str
    detected: bool = True
    flag: str = "codegraph"

    def line(self) -> str:
        """The one line an output prints: which profile and why."""
        if not self.detected:
            return f"Tool under test: {self.profile.label} (profile {self.profile.describe()})"
        return (
            f"Tool under test: {self.profile.label} (profile detected: {self.reason}; "
            "--profile overrides)"
        )


def choose_profile(sessions: Sequence[Sequence[str]]) -> ProfileChoice:
    """The profile of a corpus from the tool names each session calls (or offers).

    Each name is asked of the presets in order (`PRESETS`: codegraph first), by each preset's
    own `tools` globs; a name no preset claims that is an MCP tool (`mcp__<server>__<tool>`)
    stands for that server's generic profile (`mcp_profile`). The profile claimed by the most
    sessions wins (ties: preset order, then the server's name); no claim at all gives the
    default (codegraph), so a corpus without MCP tools reads as the reference does.
    """
    claims: dict[str, int] = {}
    order: dict[str, tuple[int, str]] = {}
    for names in sessions:
        keys: set[str] = set()
        for name in set(names):
            if not isinstance(name, str):
                continue
            for i, (pname, prof) in enumerate(_BUILT.items()):
                if prof.is_tool_under_test(name):
                    keys.add(pname)
                    order[pname] = (i, pname)
                    break
            else:
                m = _MCP_NAME.match(name)
                if m:
                    key = "mcp:" + m["server"]
                    keys.add(key)
                    order[key] = (len(_BUILT), m["server"])
        for key in keys:
            claims[key] = claims.get(key, 0) + 1
    total = len(sessions)
    if not claims:
        return ProfileChoice(CODEGRAPH, "no session calls an MCP tool, so the default (codegraph)")
    best = min(claims, key=lambda k: (-claims[k], order[k]))
    n = claims[best]
    if best.startswith("mcp:"):
        server = best[4:]
        profile, flag = mcp_profile(server), f"mcp:{server}"
        what = f"mcp__{server}__* tools, which no preset names: a profile for that server"
    else:
        profile, flag = _BUILT[best], best
        what = f"{best}'s tools ({', '.join(profile.tools.globs)})"
    who = "the session calls" if total == 1 else f"{n} of {total} sessions call"
    return ProfileChoice(profile, f"{who} {what}", flag=flag)
