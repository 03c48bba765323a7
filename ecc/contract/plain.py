"""Dataclasses for the hot path, defined without importing :mod:`dataclasses`.

Importing ``dataclasses`` brings ``inspect`` (with ``ast``, ``dis`` and ``tokenize``): about
10 ms of an ``ecc hook`` that runs before every tool call and needs none of it. :func:`plain`
gives a class the methods ``@dataclass`` would (``__init__``, ``__repr__``, ``__eq__``, and for
a frozen class ``__setattr__``, ``__delattr__`` and ``__hash__``), behaving as they do for the
class's annotated fields and defaults, and ``__dataclass_fields__`` and ``__dataclass_params__``
computed by ``dataclasses`` itself on first use: so ``dataclasses.is_dataclass``, ``fields``,
``asdict`` and ``replace`` work on these classes exactly as on any dataclass.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


class _Factory:
    """A field whose default is made fresh for each instance (``field(default_factory=...)``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def factory(make: Callable[[], T]) -> T:
    """``reasons: list[str] = factory(list)``: the default ``field(default_factory=list)``."""
    return _Factory(make)  # type: ignore[return-value]  # the decorator replaces it


class _Metadata:
    """``__dataclass_fields__`` / ``__dataclass_params__``, computed by ``dataclasses`` when
    first read; the class then holds the real values (this descriptor is replaced)."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: object, owner: type) -> Any:
        _materialize(owner)
        return owner.__dict__[self.attribute]


def _materialize(cls: type) -> None:
    import dataclasses

    namespace: dict[str, Any] = {
        "__annotations__": dict(cls.__annotations__),
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    }
    for name, default in cls.__plain_defaults__.items():  # type: ignore[attr-defined]
        if isinstance(default, _Factory):
            namespace[name] = dataclasses.field(default_factory=default.make)
        else:
            namespace[name] = default
    frozen = cls.__plain_spec__.frozen  # type: ignore[attr-defined]
    twin: Any = dataclasses.dataclass(frozen=frozen)(type(cls.__name__, (), namespace))
    type.__setattr__(cls, "__dataclass_fields__", twin.__dataclass_fields__)
    type.__setattr__(cls, "__dataclass_params__", twin.__dataclass_params__)


def _frozen_error(self: object, name: str, *args: object) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


_REQUIRED = object()  # a template's value for a field without a default


class _Spec:
    """What the shared methods need to know about one class's fields."""

    __slots__ = ("count", "factories", "frozen", "names", "required", "template")

    def __init__(self, names: tuple[str, ...], defaults: dict[str, Any], frozen: bool) -> None:
        self.names = names
        self.count = len(names)
        # every field in order with its default: an instance's __dict__ starts as a copy
        self.template = {name: defaults.get(name, _REQUIRED) for name in names}
        self.factories = tuple(
            (name, default) for name, default in defaults.items() if isinstance(default, _Factory)
        )
        self.required = tuple(name for name in names if name not in defaults)
        self.frozen = frozen


def _refuse(cls: type, spec: _Spec, given: dict[str, Any]) -> None:
    """Raise the TypeError a generated ``__init__`` would for these arguments."""
    name = f"{cls.__qualname__}.__init__()"
    unknown = sorted(set(given) - set(spec.names))
    if unknown:
        raise TypeError(f"{name} got an unexpected keyword argument {unknown[0]!r}")
    listed = ", ".join(repr(n) for n in spec.names if n in spec.required and n not in given)
    raise TypeError(f"{name} missing required argument(s): {listed}")


def _positional(cls: type, spec: _Spec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict:
    """``kwargs`` with the positional ``args`` named, refused as a generated ``__init__``."""
    name = f"{cls.__qualname__}.__init__()"
    if len(args) > spec.count:
        raise TypeError(
            f"{name} takes {spec.count + 1} positional arguments but {len(args) + 1} were given"
        )
    given = dict(zip(spec.names, args, strict=False))
    twice = given.keys() & kwargs.keys()
    if twice:
        raise TypeError(f"{name} got multiple values for argument {min(twice)!r}")
    given.update(kwargs)
    return given


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    spec = cls.__plain_spec__
    given = _positional(cls, spec, args, kwargs) if args else kwargs
    values = spec.template.copy()  # in field order, as a generated __init__ assigns them
    values.update(given)
    if len(values) != spec.count:
        _refuse(cls, spec, given)  # an unknown keyword
    for field_name in spec.required:
        if values[field_name] is _REQUIRED:
            _refuse(cls, spec, given)
    for field_name, default in spec.factories:
        if values[field_name] is default:
            values[field_name] = default.make()
    object.__setattr__(self, "__dict__", values)  # also past a frozen class's __setattr__


def _values(self: Any) -> tuple[Any, ...]:
    return tuple([getattr(self, name) for name in type(self).__plain_spec__.names])


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__plain_spec__.names)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_values(self))


def _plain(frozen: bool = False) -> Callable[[type[T]], type[T]]:
    """``@plain()`` / ``@plain(frozen=True)``: ``@dataclass`` for a class of plain fields.

    The methods are shared functions reading the class's field list rather than code
    generated for each class: compiling that code would cost the hook a millisecond a class.
    """

    def define(cls: type[T]) -> type[T]:
        # the class's own annotations (inspect.get_annotations would import inspect)
        names = tuple(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063
        defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
        for name, default in defaults.items():
            if isinstance(default, _Factory):
                delattr(cls, name)  # as @dataclass does for a default_factory field
        methods: dict[str, Any] = {"__init__": _init, "__repr__": _repr, "__eq__": _eq}
        if frozen:
            methods.update(__hash__=_hash, __setattr__=_frozen_error, __delattr__=_frozen_error)
        else:
            methods["__hash__"] = None  # unhashable, as @dataclass(eq=True)
        methods.update(
            __match_args__=names,
            __plain_spec__=_Spec(names, defaults, frozen),
            __plain_defaults__=defaults,
            __dataclass_fields__=_Metadata("__dataclass_fields__"),
            __dataclass_params__=_Metadata("__dataclass_params__"),
        )
        for attribute, value in methods.items():
            setattr(cls, attribute, value)
        return cls

    return define


if TYPE_CHECKING:  # type checkers read these classes as the dataclasses they behave as
    from dataclasses import dataclass as plain
else:
    plain = _plain
