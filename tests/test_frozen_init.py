"""`quick_init`: frozen dataclasses built by storing into `__dict__`, same behaviour (issue 16)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import InitVar, dataclass, field

import pytest

from evalkit.formats import common
from evalkit.formats.claude_code.transcripts import SegmentRead, ToolResult, Transcript
from evalkit.formats.files import ReadLimits
from evalkit.formats.frozen import quick_init
from evalkit.metrics import (
    allocation,
    answer,
    envelope,
    occupancy,
    read_allocation,
    sufficiency,
    summary,
    tokens,
)
from evalkit.metrics.figures import RunFigures


def _twin(cls: type) -> type:
    """The same fields as `cls` under a plain `@dataclass(frozen=True)` (its generated init)."""
    spec = [
        (
            f.name,
            f.type,
            field(
                default=f.default,
                default_factory=f.default_factory,
                kw_only=f.kw_only,
                repr=f.repr,
                compare=f.compare,
            ),
        )
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, spec, frozen=True)


def _point() -> type:
    @quick_init
    @dataclass(frozen=True)
    class Point:
        x: int
        y: int = 2
        tags: list = field(default_factory=list)
        z: int = field(default=0, kw_only=True)

    return Point


def test_the_fast_init_fires_and_keeps_the_signature() -> None:
    Point = _point()
    assert Point.__init__.__qualname__.endswith("Point.__init__")
    assert (
        inspect.signature(Point.__init__).parameters.keys()
        == inspect.signature(_twin(Point).__init__).parameters.keys()
    )
    p = Point(1)
    assert (p.x, p.y, p.tags, p.z) == (1, 2, [], 0)
    assert Point(1).tags is not Point(1).tags  # a fresh default per instance, as the factory's
    assert Point(1, 3, [4], z=5) == Point(x=1, y=3, tags=[4], z=5)
    with pytest.raises(TypeError):
        Point(1, 2, [], 5)  # `z` stays keyword-only
    with pytest.raises(TypeError):
        Point()  # `x` stays required
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 9  # type: ignore[misc]
    assert dataclasses.replace(p, y=7) == Point(1, 7)
    assert repr(p) == f"{Point.__qualname__}(x=1, y=2, tags=[], z=0)"
    assert hash(Point(1, 2, (), z=3)) == hash(Point(1, 2, (), z=3))
    section = envelope.Section("a/b.py", 3, (envelope.Symbol("f", "function"),), 0, "")
    assert pickle.loads(pickle.dumps(section)) == section


@pytest.mark.parametrize(
    "cls",
    [
        envelope.Symbol,
        envelope.Section,
        envelope.Envelope,
        allocation.Citations,
        allocation.SectionVerdict,
        allocation.CallAllocation,
        allocation.PooledFile,
        allocation.Allocation,
        occupancy.Gap,
        occupancy.Occupancy,
        sufficiency.BashIntent,
        sufficiency.SufficiencyCall,
        sufficiency.Sufficiency,
        summary.ToolCall,
        summary.Summary,
        answer.FinalAnswer,
        SegmentRead,
        Transcript,
        ToolResult,
        RunFigures,
        read_allocation.ReadFile,
        read_allocation.ReadAllocation,
        tokens.ModelUsage,
        tokens.ClaudeCodeTokens,
        common.TokenLedger,
        common.AgentToolCall,
        common.Request,
        common.ContextItem,
        common.FileRead,
        ReadLimits,
    ],
)
def test_the_parse_classes_build_as_their_dataclass_would(cls: type) -> None:
    twin = _twin(cls)
    ours, theirs = inspect.signature(cls.__init__), inspect.signature(twin.__init__)
    assert [(p.name, p.kind) for p in ours.parameters.values()] == [
        (p.name, p.kind) for p in theirs.parameters.values()
    ]
    assert cls.__init__.__code__.co_filename == "<string>"  # the generated one, not dataclass's
    assert "__setattr__" not in cls.__init__.__code__.co_names
    values = {
        f.name: f"value-{i}" for i, f in enumerate(dataclasses.fields(cls))
    }  # any value: the constructor only stores
    a, b = cls(**values), twin(**values)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert all(getattr(a, f.name) == getattr(b, f.name) for f in dataclasses.fields(cls))
    assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(a, dataclasses.fields(cls)[0].name, None)


def test_it_steps_aside_where_it_cannot_be_exact() -> None:
    def generated(cls: type) -> bool:
        return cls.__init__.__code__.co_filename == "<string>" and "__dict__" in (
            cls.__init__.__code__.co_names
        )

    @dataclass(frozen=True)
    class Post:
        x: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class Init:
        x: int
        scale: InitVar[int] = 1

    @dataclass(frozen=True)
    class NoInit:
        x: int
        y: int = field(default=0, init=False)

    @dataclass(frozen=True, slots=True)
    class Base:
        x: int

    @dataclass(frozen=True)
    class OnASlot(Base):  # `x` lives in the base's slot, which `__dict__` would not reach
        y: int

    @dataclass(frozen=True)
    class Behind:
        x: int

    Behind.x = property(lambda self: 1, lambda self, v: None)  # type: ignore[assignment]

    @dataclass
    class Mutable:
        x: int

    @dataclass(frozen=True)
    class Shadow:
        _d: int

    for cls in (Post, Init, NoInit, OnASlot, Behind, Mutable, Shadow):
        before = cls.__init__
        assert quick_init(cls).__init__ is before, cls.__name__
    Point = _point()
    assert generated(Point)


def test_a_slotted_class_is_built_through_its_slots():
    @quick_init
    @dataclass(frozen=True, slots=True)
    class Slotted:
        x: int
        y: tuple = ()

    assert "_set_x" in Slotted.__init__.__code__.co_names
    s = Slotted(1)
    assert (s.x, s.y) == (1, ())
    assert not hasattr(s, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.x = 2  # type: ignore[misc]
    assert Slotted(1, (2,)) == Slotted(x=1, y=(2,)) != s
    figures = RunFigures.from_payload({f.name: 0 for f in dataclasses.fields(RunFigures)})
    assert pickle.loads(pickle.dumps(figures)) == figures
