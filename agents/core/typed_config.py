"""Typed experiment configs: frozen dataclasses whose fields say what the paper says of them.

An experiment's config is one frozen dataclass (`@config`), made of shared sections
(`sections(...)`: the runtime's, an environment family's, the population's, the agent's own
learner) and the fields of its experiment. Every field is a `setting`: its value, where the
paper states it (or "not stated" and why ours), the values it allows and whether a resumed run
may change it. An experiment that states another value than its section redeclares the field
with its own citation; what the field allows, and its resume rule, stay the section's.

A config is changed by `replace` (presets, checks, the command line), never in place; it is
saved as the flat dict `to_dict` (RUN_DIR/config.json), so `--config.<field>` and saved runs
name fields as before (Acme's typed configs, with ml_collections' flags only at the edge:
launch/program.py).
"""
import dataclasses
import difflib
from typing import Any, Iterator

_ABOUT = 'about'


@dataclasses.dataclass(frozen=True)
class About:
    """What a field's metadata says of it."""
    cite: str                      # the paper's table or section; "not stated: ..." otherwise
    allowed: Any = None            # config_checks.Rule, or a tuple of the values allowed
    fixed_on_resume: bool = False  # shapes what a run's checkpoints or tables hold


def setting(default, cite: str, allowed=None, *, fixed_on_resume: bool | None = None):
    """A field of a config: its `default` (the paper's value), `cite`, `allowed` values (a
    `config_checks.Rule` or a tuple of choices) and whether it is `fixed_on_resume`. Redeclared
    in an experiment with `allowed` and `fixed_on_resume` left out, the field keeps its
    section's."""
    return dataclasses.field(default=default, metadata={
        _ABOUT: About(cite, allowed, fixed_on_resume)})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    """The base of every experiment's config: a flat, frozen set of fields, read as attributes
    (`config.batch_size`) or by name (`config['batch_size']`, `'game' in config`). Each section,
    and each experiment for the relations across its sections, declares the relations between
    its fields in `RELATIONS` (agents/core/config_checks.Relation)."""
    RELATIONS = ()

    def replace(self, **values) -> 'Config':
        """A copy with `values`; a ValueError names a field this config does not have."""
        unknown = [name for name in values if name not in self]
        if unknown:
            near = difflib.get_close_matches(unknown[0], list(self), n=3)
            hint = f'; did you mean: {", ".join(near)}?' if near else ''
            raise ValueError(f'{type(self).__name__} has no field {unknown[0]!r}{hint}')
        return dataclasses.replace(self, **values)

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self}

    @classmethod
    def about(cls, name: str) -> About:
        return cls.__dataclass_fields__[name].metadata[_ABOUT]

    @classmethod
    def relations(cls) -> tuple:
        """The relations between its fields: every section's `RELATIONS`, then the
        experiment's."""
        found = []
        for base in reversed(cls.__mro__):
            found += [relation for relation in vars(base).get('RELATIONS', ())
                      if relation not in found]
        return tuple(found)

    @classmethod
    def fixed_on_resume(cls) -> tuple[str, ...]:
        """The fields a resumed run cannot change: their metadata's."""
        return tuple(name for name in cls.__dataclass_fields__ if cls.about(name).fixed_on_resume)

    def __getitem__(self, name: str):
        if name not in self:
            raise KeyError(name)
        return getattr(self, name)

    def __contains__(self, name) -> bool:
        return name in self.__dataclass_fields__

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dataclass_fields__)

    def items(self):
        return self.to_dict().items()


def config(cls):
    """`@config`: `cls` as a frozen dataclass of keyword fields, each field it redeclares
    keeping its section's `allowed` and `fixed_on_resume` where it does not give its own."""
    inherited = {}
    for base in cls.__mro__[1:]:
        for name, field in getattr(base, '__dataclass_fields__', {}).items():
            inherited.setdefault(name, field)
    annotations = cls.__dict__.get('__annotations__', {})
    cls.__annotations__ = annotations
    for name, value in list(vars(cls).items()):
        if not isinstance(value, dataclasses.Field):
            continue
        before = inherited.get(name)
        about = value.metadata[_ABOUT]
        if before is not None:
            was = before.metadata[_ABOUT]
            about = About(about.cite, was.allowed if about.allowed is None else about.allowed,
                          was.fixed_on_resume if about.fixed_on_resume is None
                          else about.fixed_on_resume)
            annotations.setdefault(name, before.type)
        elif name not in annotations:
            raise TypeError(f'{cls.__name__}.{name}: a new field needs its type')
        setattr(cls, name, dataclasses.field(default=value.default, metadata={
            _ABOUT: About(about.cite, about.allowed, bool(about.fixed_on_resume))}))
    return dataclasses.dataclass(frozen=True, kw_only=True)(cls)


def sections(*parts: type) -> type:
    """One config class holding the fields and relations of every part (each a `@config`
    class): the base of an experiment's config, composed rather than inherited from several
    parts."""
    fields, owner = [], {}
    for part in parts:
        for name, field in part.__dataclass_fields__.items():
            if name in owner:
                raise TypeError(f'{part.__name__} and {owner[name]} both declare {name!r}')
            owner[name] = part.__name__
            fields.append((name, field.type, dataclasses.field(
                default=field.default, metadata=field.metadata)))
    name = ''.join(part.__name__ for part in parts)
    relations = tuple(relation for part in parts for relation in part.relations())
    return dataclasses.make_dataclass(name, fields, bases=(Config,), frozen=True,
                                      kw_only=True, namespace={'RELATIONS': relations})
