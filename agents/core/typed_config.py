"""Typed experiment configs: frozen dataclasses whose fields say what the paper says of them.

An experiment's config (`@config`) holds its sections as typed, frozen members (`member`: the
runtime's, an environment family's, the population's, the agent's network and learner) beside
the few fields of its own (its target: `game`, `tasks`). Every field of a section is a
`setting`: its value, where the paper states it (or "not stated" and why ours), the values it
allows and whether a resumed run may change it. An experiment whose paper states another value
than a shared section's holds a subclass of the section that redeclares the field with its own
citation; what the field allows, and its resume rule, stay the section's. Each section declares
the relations among its own fields (`RELATIONS`), the experiment those across its sections.

A config is changed by `replace` (presets, checks, the command line), never in place, by the
fields' names, which are unique across an experiment's sections; it is saved as the flat dict
`to_dict` (RUN_DIR/config.json), so `--config.<field>` and saved runs name fields as before
(Acme's typed configs, with ml_collections' flags only at the edge: launch/program.py).
"""
import dataclasses
import difflib
from typing import Any, Iterator

_ABOUT = 'about'
_SECTION = 'section'
_LAYOUTS: dict[type, dict[str, str | None]] = {}


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


def member(section: type):
    """A section an experiment holds, at the defaults of `section`: a `@config` class, or the
    subclass of one that redeclares the values the experiment's paper states."""
    return dataclasses.field(default_factory=section, metadata={_SECTION: section})


def _layout(cls) -> dict[str, str | None]:
    """{field: the member holding it, or None for the config's own field}, in declared order."""
    if cls not in _LAYOUTS:
        layout = {}
        for name, field in cls.__dataclass_fields__.items():
            section = field.metadata.get(_SECTION)
            for flat in (section.__dataclass_fields__ if section else (name,)):
                layout[flat] = name if section else None
        _LAYOUTS[cls] = layout
    return _LAYOUTS[cls]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    """The base of every section and experiment config: frozen fields read as attributes
    (`config.learning.batch_size`), and by name across its sections (`config['batch_size']`,
    `'game' in config`, `replace(batch_size=8)`). Each section, and each experiment for the
    relations across its sections, declares the relations between its fields in `RELATIONS`
    (agents/core/config_checks.Relation)."""
    RELATIONS = ()

    def replace(self, **values) -> 'Config':
        """A copy with `values`, each given to the section that holds it; a ValueError names a
        field this config does not have."""
        layout = _layout(type(self))
        unknown = [name for name in values if name not in layout]
        if unknown:
            near = difflib.get_close_matches(unknown[0], list(layout), n=3)
            hint = f'; did you mean: {", ".join(near)}?' if near else ''
            raise ValueError(f'{type(self).__name__} has no field {unknown[0]!r}{hint}')
        own = {name: value for name, value in values.items() if layout[name] is None}
        for holder in dict.fromkeys(layout[name] for name in values if layout[name]):
            own[holder] = getattr(self, holder).replace(
                **{name: value for name, value in values.items() if layout[name] == holder})
        return dataclasses.replace(self, **own)

    def to_dict(self) -> dict:
        return {name: self[name] for name in self}

    def members(self) -> dict[str, 'Config']:
        """The sections this config holds, by member name."""
        return {holder: getattr(self, holder)
                for holder in dict.fromkeys(_layout(type(self)).values()) if holder}

    @classmethod
    def about(cls, name: str) -> About:
        holder = _layout(cls)[name]
        if holder is not None:
            return cls.__dataclass_fields__[holder].metadata[_SECTION].about(name)
        return cls.__dataclass_fields__[name].metadata[_ABOUT]

    @classmethod
    def relations(cls) -> tuple:
        """The relations between its own fields (its members declare theirs): its bases'
        `RELATIONS`, then its own."""
        found = []
        for base in reversed(cls.__mro__):
            found += [relation for relation in vars(base).get('RELATIONS', ())
                      if relation not in found]
        return tuple(found)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Its fields' names, its own and its sections', in declared order."""
        return tuple(_layout(cls))

    @classmethod
    def fixed_on_resume(cls) -> tuple[str, ...]:
        """The fields a resumed run cannot change: their metadata's."""
        return tuple(name for name in cls.field_names() if cls.about(name).fixed_on_resume)

    def __getitem__(self, name: str):
        holder = _layout(type(self)).get(name, KeyError)
        if holder is KeyError:
            raise KeyError(name)
        return getattr(getattr(self, holder), name) if holder else getattr(self, name)

    def __getattr__(self, name: str):
        # A section's field read by its name from the experiment, as `--config.<field>` names
        # it: for what serves every experiment whichever section holds the field (the budget,
        # `total_frames`, is the optimizer's in IMPALA and the learning section's in Ape-X;
        # population checks, launch checks) and for tools and tests. An agent's learner,
        # network, environment and actor take their own sections (the builders unpack them).
        # Only names no attribute has reach here.
        holder = _layout(type(self)).get(name)
        if not holder:
            raise AttributeError(f'{type(self).__name__} has no field {name!r}')
        return getattr(getattr(self, holder), name)

    def __contains__(self, name) -> bool:
        return name in _layout(type(self))

    def __iter__(self) -> Iterator[str]:
        return iter(_layout(type(self)))

    def items(self):
        return self.to_dict().items()


def config(cls):
    """`@config`: `cls` as a frozen dataclass of keyword fields, each field it redeclares
    keeping its section's `allowed` and `fixed_on_resume` where it does not give its own; a
    TypeError where two of its sections, or a section and the class, declare one field."""
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
        if _SECTION in value.metadata:
            if name not in annotations:
                annotations[name] = before.type if before else value.metadata[_SECTION]
            continue
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
    cls = dataclasses.dataclass(frozen=True, kw_only=True)(cls)
    declares = {}
    for name, field in cls.__dataclass_fields__.items():
        section = field.metadata.get(_SECTION)
        for flat in (section.__dataclass_fields__ if section else (name,)):
            where = section.__name__ if section else cls.__name__
            if flat in declares:
                raise TypeError(f'{declares[flat]} and {where} both declare {flat!r}')
            declares[flat] = where
    for name, field in cls.__dataclass_fields__.items():
        if _SECTION in field.metadata and name in declares:
            raise TypeError(f'{cls.__name__}.{name}: a member named as the field of '
                            f'{declares[name]}')
    return cls
