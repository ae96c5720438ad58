"""Engine names and how they resolve.

A name is ``PREFIX:ARG`` (split at the first colon). ``PREFIX`` is looked up, in order, in

1. the built-in providers below (``tiktoken``, ``hf``, ``reference``, ``fast``, ``lopt``, ...);
2. the entry point group ``tokspec.engines``: an entry point named ``PREFIX`` must load a callable
   ``factory(arg: str) -> Encoder``;
3. otherwise the whole name is taken as ``module:attr`` (``module`` importable, ``attr`` an Encoder
   instance, or a zero-argument callable returning one).

A provider is a module with two functions::

    def load(prefix: str, arg: str) -> Encoder        # raise UnknownEngineError for a bad arg
    def engines() -> list[tuple[str, str]]            # (name, description) usable on this machine
"""

from __future__ import annotations

import importlib
from importlib import metadata

from tokspec._types import Encoder
from tokspec.errors import UnknownEngineError

__all__ = ["load_engine", "list_engines", "PROVIDERS"]

ENTRY_POINT_GROUP = "tokspec.engines"

#: prefix -> provider module.
PROVIDERS: dict[str, str] = {
    "tiktoken": "tokspec.engines.production",
    "hf": "tokspec.engines.production",
    "spm": "tokspec.engines.production",
    "bpe-openai": "tokspec.engines.production",
    "reference": "tokspec.reference.engines",
    "pretok": "tokspec.reference.engines",
    "hf-converted": "tokspec.reference.engines",
    "fast": "tokspec.fast.engines",
    "peek2": "tokspec.fast.engines",
    "lopt": "tokspec.fast.merge_engines",
    "cmd": "tokspec.engines.cmd",
    "mistral": "tokspec.engines.mistral",
    "golden": "tokspec.engines.golden",
    "special": "tokspec.special_mode",
    "special-post": "tokspec.special_mode",
    "special-refuse": "tokspec.special_mode",
    "special-allow": "tokspec.special_mode",
}


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def load_engine(name: str) -> Encoder:
    """Resolve an engine name (see module docstring) to a ready Encoder.

    Raises UnknownEngineError with the reason and the way to list valid names.
    """
    if not isinstance(name, str) or not name:
        raise UnknownEngineError(f"engine name must be a non-empty str, got name={name!r}")
    prefix, _, arg = name.partition(":")
    if prefix in PROVIDERS:
        provider = importlib.import_module(PROVIDERS[prefix])
        engine: Encoder = provider.load(prefix, arg)
        return engine
    eps = _entry_points()
    if prefix in eps:
        try:
            engine_obj = eps[prefix].load()(arg)
        except Exception as exc:  # a third party's factory: name it, don't leak a traceback
            raise UnknownEngineError(
                f"engine name={name!r}: entry point {prefix!r} ({eps[prefix].value}) failed: "
                f"{type(exc).__name__}: {exc}") from exc
        return _check_encoder(engine_obj, name)
    if arg:
        return _load_module_attr(prefix, arg, name)
    raise UnknownEngineError(
        f"unknown engine name={name!r}: not a built-in prefix ({', '.join(sorted(PROVIDERS))}), "
        f"not an entry point in group {ENTRY_POINT_GROUP!r}, and not module:attr; "
        "run `tokspec engines` for the names usable here"
    )


def _load_module_attr(module_name: str, attr: str, name: str) -> Encoder:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownEngineError(
            f"engine name={name!r}: prefix {module_name!r} is no built-in prefix or entry point, "
            f"and importing it as a module failed ({exc}); run `tokspec engines`"
        ) from exc
    try:
        obj = getattr(module, attr)
    except AttributeError as exc:
        raise UnknownEngineError(f"engine name={name!r}: module {module_name!r} has no {attr!r}") from exc
    if not isinstance(obj, Encoder) and callable(obj):
        obj = obj()
    return _check_encoder(obj, name)


def _check_encoder(obj: object, name: str) -> Encoder:
    if not isinstance(obj, Encoder):
        raise UnknownEngineError(
            f"engine name={name!r} resolved to {type(obj).__name__}, not a tokspec.Encoder subclass"
        )
    return obj


def list_engines() -> list[tuple[str, str]]:
    """Every (name, description) usable on this machine: built-ins, then entry points."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for module_name in dict.fromkeys(PROVIDERS.values()):
        try:
            provider = importlib.import_module(module_name)
        except ImportError as exc:  # a layer not built yet, or a broken install: say so
            out.append((f"<{module_name}>", f"unavailable: {exc}"))
            continue
        for engine_name, desc in provider.engines():
            if engine_name not in seen:
                seen.add(engine_name)
                out.append((engine_name, desc))
    for ep_name, ep in sorted(_entry_points().items()):
        out.append((f"{ep_name}:ARG", f"entry point {ep.value}"))
    return out
