"""One walk over a session's events, and what every metric reads from it (issue 26).

Each metric used to walk the whole event list again, asking every event and every content block
for its type, message, content, id and name. `index_events` asks once and keeps the answers in
stream order: the assistant events with their messages, the tool_use blocks (`Use`) with their
ids, names and inputs, the tool_result blocks (`Result`) with the use they answer, their text and
its length, the result and system events, the compaction boundaries, and the events the
occupancy timeline walks. The metrics (`evalkit.metrics`) keep their own rules and read these
lists instead of the events.

The walk is `tool_results` (§1.5) plus bookkeeping, and it is careful to change no number and no
error:

* the values are the raw JSON values, so each metric still applies its own conversion (a
  non-string id or name keeps the rule of the metric that reads it, §10.6);
* it never raises: the first input the reference crashes on that `tool_results` would have
  raised for (a null block in an assistant or user message's content, a null element in a
  tool_result's content array, §9.1 case 2) is kept in `error`, the walk goes on, and a result
  whose text could not be made has `text` None, so a metric that needs that text raises its own
  error where it always did;
* a result is matched to the use whose id was seen last before it, as the reference's `Map` of
  names is (§9.1: a result before its tool_use has no name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.ecma import js_string, js_truthy, utf16_len
from evalkit.errors import TranscriptError
from evalkit.formats.claude_code.events import at_event
from evalkit.formats.claude_code.transcripts import id_key, message_key, result_text

__all__ = ["ABSENT", "Use", "Result", "Event", "SessionIndex", "index_events"]


class _Absent:
    """ECMAScript `undefined`: a field the block does not have (a tool_use without a `name`)."""

    def __repr__(self) -> str:
        return "UNDEFINED"


ABSENT: Any = _Absent()

_COMPACTION = ("compact_boundary", "compaction")


@dataclass(slots=True)
class Use:
    """One tool_use block of an assistant event whose message is an object with array content.

    Attributes:
        event: Index of the assistant event in the event list.
        parent: The event's raw `parent_tool_use_id` (None for the main thread, §1.8).
        message: The assistant message (an object).
        block: The block itself.
        id: `block.id`, raw.
        name: `block.name`, raw; `ABSENT` when the block has none.
        input: `block.input`, raw (None when absent).
    """

    event: int
    parent: Any
    message: dict[str, Any]
    block: dict[str, Any]
    id: Any
    name: Any
    input: Any

    @property
    def thread(self) -> Any:
        """The raw thread id (`thread_id`, §1.8): `main` or the parent id."""
        return "main" if self.parent is None else self.parent


@dataclass(slots=True)
class Result:
    """One tool_result block of a user event whose message is an object with array content.

    Attributes:
        event: Index of the user event.
        pos: Position of the block in the message's content.
        block: The block itself.
        id: `block.tool_use_id`, raw.
        use: The use its id names, as seen so far in the stream (`id_key` equality), or None.
        is_error: ECMAScript truthiness of `is_error`.
        text: `result_text` of its content; None when that raises, with the error in `error`
            (the metric that needs the text raises it, in its own turn).
        error: Why `text` could not be made, tagged with the event, else None.
    """

    event: int
    pos: int
    block: dict[str, Any]
    id: Any
    use: Use | None
    is_error: bool
    text: str | None
    error: TranscriptError | None = None
    _chars: int = -1

    @property
    def chars(self) -> int:
        """`utf16_len(text)`, measured once."""
        if self._chars < 0:
            self._chars = utf16_len(self.text)  # type: ignore[arg-type]
        return self._chars

    @property
    def raw_name(self) -> Any:
        """The name of the use it answers as a name map holds it (`block.get("name")`): None
        when no use was seen or the use has no name."""
        use = self.use
        if use is None:
            return None
        name = use.name
        return None if name is ABSENT else name

    @property
    def name(self) -> str:
        """The tool's name as `ToolResult.name` has it: `""` with no use, else as text."""
        use = self.use
        if use is None:
            return ""
        name = use.name
        if type(name) is str:
            return name
        return js_string(None if name is ABSENT else name)


@dataclass(slots=True)
class Event:
    """An assistant, user, system or result event, with its fields taken once.

    Attributes:
        index: Position in the event list.
        type: `event.type`.
        event: The event.
        message: `event.message`, raw (None when absent; always None for system and result).
        content: `message.content` when the message is an object, else None.
        parent: `event.parent_tool_use_id`, raw (None for system and result events).
        uses: An assistant event's tool_use blocks, in order.
        results: A user event's tool_result blocks, in order.
        null: The error for the first null block of an array content, else None (§9.1 case 2).
        null_pos: Its position in the content (-1 without one).
        msg_id: An assistant event's raw `message.id` (None when absent or not an object).
        key: Its request key (`message_key`, §1.11, §6.2): None for no request.
        first: This is the first assistant event with that key, the one whose usage counts
            (a message is written once per content block, each with the same id and usage).
    """

    index: int
    type: str
    event: dict[str, Any]
    message: Any = None
    content: Any = None
    parent: Any = None
    # Empty tuples until a block is found: most events hold none, and a list each would cost.
    uses: list[Use] | tuple[()] = ()
    results: list[Result] | tuple[()] = ()
    null: TranscriptError | None = None
    null_pos: int = -1
    msg_id: Any = None
    key: Any = None
    first: bool = False

    @property
    def thread(self) -> Any:
        """The raw thread id (`thread_id`, §1.8)."""
        return "main" if self.parent is None else self.parent


@dataclass(slots=True)
class SessionIndex:
    """What one walk over a session's events found, in stream order.

    Attributes:
        events: The event list walked.
        views: Every assistant, user, system and result event (`Event`), in order.
        assistants: The assistant events among them.
        timeline: The events the occupancy timeline reads (§6.2): compaction boundaries, and
            assistant and user events whose message is truthy.
        result_events: The result events.
        uses: Every tool_use block (`Use`) of assistant events.
        results: Every tool_result block (`Result`) of user events.
        plain_ids: Every use's and result's id is a string (then every id rule agrees).
        error: What `tool_results` would have raised first (§9.1 case 2), else None.
    """

    events: Sequence[dict[str, Any]]
    views: list[Event] = field(default_factory=list)
    assistants: list[Event] = field(default_factory=list)
    timeline: list[Event] = field(default_factory=list)
    result_events: list[Event] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    plain_ids: bool = True
    error: TranscriptError | None = None

    def explore_texts(self, is_explore: Any) -> list[str]:
        """The answered explore texts of §1.6 (`explore_texts`): non-error results of the tools
        `is_explore` accepts (given the name as text), any thread, in stream order."""
        return [r.text for r in self.results if not r.is_error and is_explore(r.name)]  # type: ignore[misc]


def index_events(events: Sequence[dict[str, Any]], *, path: str = "(transcript)") -> SessionIndex:
    """Walk `events` once and index what the metrics read (see the module docstring)."""
    index = SessionIndex(events)
    views, assistants, timeline = index.views, index.assistants, index.timeline
    uses, results = index.uses, index.results
    by_id: dict[Any, Use] = {}
    requests: set[Any] = set()  # the request keys seen so far
    plain = True
    error: TranscriptError | None = None
    for i, event in enumerate(events):
        etype = event.get("type")
        if etype == "assistant" or etype == "user":
            message = event.get("message")
            is_dict = type(message) is dict
            content = message.get("content") if is_dict else None
            view = Event(i, etype, event, message, content, event.get("parent_tool_use_id"))
            views.append(view)
            if is_dict or js_truthy(message):
                timeline.append(view)
            if etype == "assistant":
                assistants.append(view)
                if is_dict:
                    mid = view.msg_id = message.get("id")
                    key = view.key = (mid or None) if type(mid) is str else message_key(mid)
                    if key is not None and key not in requests:
                        requests.add(key)
                        view.first = True
            if type(content) is not list:
                continue
            pos = -1
            for block in content:
                pos += 1
                if type(block) is not dict:
                    if block is None and view.null is None:
                        view.null = _null_block(etype, path, i)
                        view.null_pos = pos
                        if error is None:
                            error = view.null
                    continue
                btype = block.get("type")
                if etype == "assistant":
                    if btype != "tool_use":
                        continue
                    bid = block.get("id")
                    use = Use(
                        i,
                        view.parent,
                        message,
                        block,
                        bid,
                        block.get("name", ABSENT),
                        block.get("input"),
                    )
                    uses.append(use)
                    if view.uses:
                        view.uses.append(use)  # type: ignore[union-attr]
                    else:
                        view.uses = [use]
                    if type(bid) is str:
                        by_id[bid] = use
                    else:
                        plain = False
                        by_id[id_key(bid)] = use
                elif btype == "tool_result":
                    tid = block.get("tool_use_id")
                    if type(tid) is not str:
                        plain = False
                    raw = block.get("content")
                    failed = None
                    if type(raw) is str:
                        text: str | None = raw
                    else:
                        try:
                            text = result_text(raw, path=path)
                        except TranscriptError as exc:
                            text, failed = None, at_event(exc, i)
                            if error is None:
                                error = failed
                    result = Result(
                        i,
                        pos,
                        block,
                        tid,
                        by_id.get(tid if type(tid) is str else id_key(tid)),
                        js_truthy(block.get("is_error")),
                        text,
                        failed,
                    )
                    results.append(result)
                    if view.results:
                        view.results.append(result)  # type: ignore[union-attr]
                    else:
                        view.results = [result]
        elif etype == "result":
            view = Event(i, etype, event)
            views.append(view)
            index.result_events.append(view)
        elif etype == "system":
            view = Event(i, etype, event)
            views.append(view)
            if event.get("subtype") in _COMPACTION:
                timeline.append(view)
    index.plain_ids = plain
    index.error = error
    return index


def _null_block(etype: str, path: str, i: int) -> TranscriptError:
    return at_event(
        TranscriptError(
            path,
            f"null block in {'an' if etype == 'assistant' else 'a'} {etype} message's content "
            "(the reference harness crashes here)",
        ),
        i,
    )
