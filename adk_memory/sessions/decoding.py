"""Stored event JSON -> ADK `Event`, without pydantic's validation pass where it is a no-op.

Owns: building events straight from the JSON the codec stored, for the shapes where pydantic's
validation provably changes nothing: fields of plain JSON types (str, bool, int; int or float
for a float), `Any` and `dict[str, Any]` values, lists, enums by value, and nested models whose
validators are known no-ops on JSON input (google-genai's `_check_field_type_mismatches`, which
only warns about model instances of the wrong class, and ADK's `Event._accept_convenience_kwargs`,
which only acts on keys that are not fields). Such an event is built with the same field values,
defaults, set fields and `model_post_init` as `Event.model_validate_json` would give it, nearly
twice as fast: reading a session is mostly decoding its events, and nothing about a stored event
needs checking again (the codec wrote it from a validated `Event`). Also owns `copier`, how
the session codec's event cache copies an event built this way.

Anything else (a field with a constraint or a validator of its own, bytes, dates, sets, unions of
several types, an unknown key, a value of another type, a `null`) makes `decode` return None, and
the caller decodes that event with pydantic as before: the fast path never guesses.
`tests/test_event_decoding.py` checks both give equal events on every shape ADK and google-genai
produce. It never touches the database, and never changes a stored text.
"""

from __future__ import annotations

import copy
import enum
import functools
import json
import types
import typing
from collections.abc import Callable
from typing import Any

from google.adk.events.event import Event
from google.genai import types as genai_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..errors import _NotFast

Convert = Callable[[Any], Any]
"""Turns one JSON value into the field's value; raises `_NotFast` when it cannot."""


_NO_OP_VALIDATORS = frozenset(
    {
        ("google.genai._common", "BaseModel._check_field_type_mismatches"),
        ("google.adk.events.event", "Event._accept_convenience_kwargs"),
    }
)
"""Model validators that return JSON input unchanged: genai's only warns when a field holds a
model instance of the wrong class (JSON holds none); ADK's only moves the keys `message`,
`state`, `route` and `node_path`, none of which is an `Event` field, so an event holding one is
not fast (an unknown key)."""

_NO_OP_WHEN_EMPTY = frozenset(
    {("google.adk.events.event_actions", "EventActions._parse_auth_configs")}
)
"""Field validators that return an empty value unchanged: `requested_auth_configs` is `{}` in
almost every stored event (ADK writes empty containers), and parsed only when it holds some."""

_NO_OP_INITS = frozenset({genai_types.Part.__init__})
"""Custom `__init__`s that, given keyword data without `None` values (all that `build` passes),
only hand it to pydantic's own: `Part(text=..., functionCall=...)`."""

_VALUE_CHANGING_CONFIG = (
    "str_strip_whitespace",
    "str_to_lower",
    "str_to_upper",
    "str_min_length",
    "str_max_length",
    "use_enum_values",
    "strict",
    "coerce_numbers_to_str",
    "validate_default",
)
"""Model settings under which validation changes or refuses values this module would pass as
they are: a model with any of them set is left to pydantic."""

_IMMUTABLE = (str, int, float, bool, bytes, enum.Enum, type(None))

_set = object.__setattr__
"""How pydantic itself sets a model's `__dict__` and bookkeeping (`model_construct`)."""

_MISSING = object()
"""A field's place in `_Plan.template` before its value is known."""


def _same(kind: type) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not kind:
            raise _NotFast
        return value

    return convert


def _as_float(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        return float(value)
    raise _NotFast


def _as_is(value: Any) -> Any:
    if value is None:
        raise _NotFast  # as everywhere: an explicit null is left to pydantic
    return value


def _json_object(value: Any) -> Any:
    if type(value) is not dict:
        raise _NotFast
    return value


def _list_of(convert: Convert) -> Convert:
    """Lists of values `convert` takes (also: copies lists whose items `convert` copies)."""

    def items(value: Any) -> Any:
        if type(value) is not list:
            raise _NotFast
        return [convert(item) for item in value]

    return items


def _dict_of(convert: Convert) -> Convert:
    """Objects whose values `convert` takes (also: copies, as `_list_of`)."""

    def values(value: Any) -> Any:
        if type(value) is not dict:
            raise _NotFast
        return {key: convert(item) for key, item in value.items()}

    return values


def _empty(convert: Convert) -> Convert:
    """Only empty values (which the field's validators return unchanged)."""

    def empty(value: Any) -> Any:
        if value:
            raise _NotFast
        return convert(value)

    return empty


def _enum(kind: type[enum.Enum]) -> Convert:
    members = kind._value2member_map_

    def member(value: Any) -> Any:
        try:
            return members[value]
        except (KeyError, TypeError):
            raise _NotFast from None

    return member


def _converter(annotation: Any) -> Convert | None:
    """How to turn JSON into a value of `annotation`, or None when only pydantic may."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        # Optional[X]: X's converter, which declines a null like any value not of type X
        # (pydantic keeps an explicit null as a set field; Part's init drops it).
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _converter(inner[0]) if len(inner) == 1 else None
    if annotation in (str, bool, int):
        return _same(annotation)
    if annotation is float:
        return _as_float
    if annotation is Any or annotation is object:
        return _as_is
    if origin is dict:
        key, value = typing.get_args(annotation)
        if key is not str:
            return None
        if value is Any or value is object:
            return _json_object
        convert = _converter(value)
        return None if convert is None else _dict_of(convert)
    if origin is list:
        (item,) = typing.get_args(annotation)
        convert = _converter(item)
        return None if convert is None else _list_of(convert)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _plan(annotation).build
    return None


class _Plan:
    """How to build one model class from JSON: each accepted key's field and converter, and
    the defaults of the fields a JSON object leaves out."""

    def __init__(self, cls: type[BaseModel]) -> None:
        _PLANS[cls] = self  # before its fields: a model may nest itself (through others)
        self.cls = cls
        self.fast = _validators_are_no_ops(cls)
        self.keys: dict[str, tuple[str, type | None, Convert | None]] = {}
        """JSON key -> (field, the type whose values pass as they are, converter of others)."""
        self.template: dict[str, Any] = {}
        """Every field in declaration order (pydantic's), holding its constant default, or
        `_MISSING` for those filled per event (`filled`) or required."""
        self.names: dict[str, str] = {}
        """JSON key -> field name."""
        self.filled: dict[str, Callable[[], Any]] = {}
        self.required: frozenset[str] = frozenset()
        self.post_init = bool(cls.__pydantic_post_init__)
        self.allow_extra = cls.model_config.get("extra") == "allow"
        if self.fast:
            self._fields(cls)

    def _fields(self, cls: type[BaseModel]) -> None:
        by_name = cls.model_config.get("validate_by_name") or cls.model_config.get(
            "populate_by_name"
        )
        validated: dict[str, bool] = {}  # field -> are all its validators no-ops when empty?
        for decorator in cls.__pydantic_decorators__.field_validators.values():
            for name in decorator.info.fields:
                validated[name] = validated.get(name, True) and _name(decorator.func) in (
                    _NO_OP_WHEN_EMPTY
                )
        for name, field in cls.model_fields.items():
            if not self._default(name, field):
                self.fast = False
                return
            plain = not field.metadata and field.validation_alias in (None, field.alias)
            converter = _converter(field.annotation) if plain else None
            exact = _exact(field.annotation) if converter else None
            if name in validated:
                converter = _empty(converter) if validated[name] and converter else None
                exact = None
            self.keys[field.alias or name] = (name, exact, converter)
            if by_name or field.alias is None:
                self.keys[name] = (name, exact, converter)
        self.names = {key: name for key, (name, _, _) in self.keys.items()}

    def _default(self, name: str, field: FieldInfo) -> bool:
        """Record how pydantic fills the field when absent; False if that needs validation."""
        if field.validate_default:
            return False
        self.template[name] = _MISSING
        if field.default_factory is not None:
            if field.default_factory_takes_validated_data:
                return False
            self.filled[name] = typing.cast(Callable[[], Any], field.default_factory)
        elif field.is_required():
            self.required |= {name}  # absent: pydantic raises; `build` declines instead
        elif isinstance(field.default, _IMMUTABLE):
            self.template[name] = field.default
        else:
            self.filled[name] = functools.partial(copy.deepcopy, field.default)
        return True

    def build(self, data: Any) -> BaseModel:
        """The model for a JSON object, as pydantic would validate it; `_NotFast` if unsure."""
        if not self.fast or type(data) is not dict:
            raise _NotFast
        keys = self.keys
        ordered = self.template.copy()  # every field, in declaration order
        for key, value in data.items():
            found = keys.get(key)
            if found is None:
                raise _NotFast  # not a field
            name, exact, convert = found
            if type(value) is not exact:
                if convert is None:
                    raise _NotFast  # a field with a validator of its own, or a constraint
                value = convert(value)
            ordered[name] = value
        fields_set = set(map(self.names.__getitem__, data))
        if len(fields_set) < len(data) or not self.required <= fields_set:
            raise _NotFast  # a field given twice (by name and alias), or a required one missing
        if self.filled:
            for name, fill in self.filled.items():
                if name not in fields_set:
                    ordered[name] = fill()
        model = self.cls.__new__(self.cls)
        _set(model, "__dict__", ordered)
        _set(model, "__pydantic_fields_set__", fields_set)
        _set(model, "__pydantic_extra__", {} if self.allow_extra else None)
        _set(model, "__pydantic_private__", None)
        if self.post_init:
            model.model_post_init(None)
        return model


_Model = typing.TypeVar("_Model", bound=BaseModel)

Recipe = tuple[Any, ...]
"""How to copy one mutable value: a tag (`_MODEL`, `_LIST`, `_DICT`, `_FLAT`, `_DEEP`), then
what `_build` needs for it. Plain tuples: a recipe costs the cache far less memory than closures
would (an event's recipe weighs about a third of the event)."""

_MODEL, _LIST, _DICT, _FLAT, _DEEP = range(5)

_SHARED = frozenset({str, int, float, bool, bytes, type(None)})
"""Immutable: every copy shares the one value."""


def copier(model: _Model) -> Callable[[], _Model]:
    """What makes independent copies of a model `decode` built, each equal to it: nested
    models, lists and dicts copied, immutable values (strings, numbers, enums) shared.

    The walk over the model (which of its fields hold something mutable, and what) is done
    here, once: the event cache keeps the result instead of the event, so each read copies only
    what an event actually holds (an event's models have a few dozen fields, nearly all `None`
    or immutable). The model must never change afterwards: the cache never hands it out."""
    return functools.partial(_build, typing.cast(Recipe, _recipe(model)))  # a model: never None


def _recipe(value: Any) -> Recipe | None:
    """How to copy `value` (None: immutable, shared as it is)."""
    kind = type(value)
    if kind in _SHARED or isinstance(value, enum.Enum):
        return None
    if kind is list:
        items = tuple((item, _recipe(item)) for item in value)
        return (_LIST, items) if any(r for _, r in items) else (_FLAT, value)
    if kind is dict:
        entries = tuple((k, r) for k, item in value.items() if (r := _recipe(item)) is not None)
        return (_DICT, value, entries) if entries else (_FLAT, value)
    if isinstance(value, BaseModel) and kind in _PLANS:
        fields = tuple((k, r) for k, item in value.__dict__.items() if (r := _recipe(item)))
        extra, private = _recipe(value.__pydantic_extra__), _recipe(value.__pydantic_private__)
        if extra is None and private is None:  # no extra fields, no private attributes
            return (_MODEL, kind, value.__dict__, fields, value.__pydantic_fields_set__)
        return (_MODEL, kind, value.__dict__, fields, value.__pydantic_fields_set__, extra, private)
    return (_DEEP, value)


def _build(recipe: Recipe) -> Any:
    """A new copy of what `recipe` was made from."""
    tag = recipe[0]
    if tag is _MODEL:
        cls = recipe[1]
        copied = recipe[2].copy()
        for name, field in recipe[3]:
            copied[name] = field[1].copy() if field[0] is _FLAT else _build(field)
        twin = cls.__new__(cls)
        _set(twin, "__dict__", copied)
        _set(twin, "__pydantic_fields_set__", set(recipe[4]))
        if len(recipe) == 5:  # no extra fields, no private attributes
            _set(twin, "__pydantic_extra__", None)
            _set(twin, "__pydantic_private__", None)
        else:
            extra, private = recipe[5], recipe[6]
            _set(twin, "__pydantic_extra__", None if extra is None else _build(extra))
            _set(twin, "__pydantic_private__", None if private is None else _build(private))
        return twin
    if tag is _FLAT:
        return recipe[1].copy()
    if tag is _LIST:
        return [item if inner is None else _build(inner) for item, inner in recipe[1]]
    if tag is _DICT:
        copied = recipe[1].copy()
        for key, inner in recipe[2]:
            copied[key] = _build(inner)
        return copied
    return copy.deepcopy(recipe[1])


def _exact(annotation: Any) -> type | None:
    """The type whose JSON values a field of `annotation` takes as they are (None: convert
    every value)."""
    inner = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(inner) == 1:
        annotation = inner[0]
    if annotation in (str, bool, int, float):
        return typing.cast(type, annotation)
    if typing.get_origin(annotation) is dict and typing.get_args(annotation)[1] in (Any, object):
        return dict
    return None


def _name(function: Any) -> tuple[str, str]:
    """A validator's (module, qualified name), through a classmethod's wrapper."""
    function = getattr(function, "__func__", function)
    return function.__module__, function.__qualname__


def _validators_are_no_ops(cls: type[BaseModel]) -> bool:
    decorators = cls.__pydantic_decorators__
    if decorators.root_validators or decorators.validators:
        return False
    for decorator in decorators.model_validators.values():
        if _name(decorator.func) not in _NO_OP_VALIDATORS:
            return False
    if any(cls.model_config.get(setting) for setting in _VALUE_CHANGING_CONFIG):
        return False
    return not cls.__pydantic_custom_init__ or cls.__init__ in _NO_OP_INITS


_PLANS: dict[type[BaseModel], _Plan] = {}


def _plan(cls: type[BaseModel]) -> _Plan:
    return _PLANS.get(cls) or _Plan(cls)


def _reject(constant: str) -> Any:
    """`NaN` and `Infinity` are not JSON: pydantic's parser decides what they mean."""
    raise _NotFast


_JSON = json.JSONDecoder(parse_constant=_reject)


def decode(text: str) -> Event | None:
    """The event stored as `text`, built without validation; None when pydantic must decode it
    (`Event.model_validate_json(text)`), which then gives an equal event or raises."""
    try:
        data = _JSON.decode(text)
        return _plan(Event).build(data)  # type: ignore[return-value]
    except (_NotFast, ValueError, RecursionError):
        return None
