"""The agent catalog: agent configs by name, from code and from YAML files.

One YAML file holds one agent and is validated by the same `AgentConfig` model as
code; a bad file is refused with an error naming the file and the field, and leaves
the catalog as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ...errors import YuxiError
from ._config import AgentConfig, AgentConfigError, validation_problems

__all__ = ["AgentCatalog", "AgentConfigError", "UnknownAgentError", "load_agent_config"]

YAML_SUFFIXES = (".yaml", ".yml")


class UnknownAgentError(YuxiError, LookupError):
    """A name the catalog does not hold."""

    def __init__(
        self,
        names: Iterable[str],
        known: Iterable[str],
        named_by: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.names = tuple(names)
        by = named_by or {}
        listed = ", ".join(
            f"{n!r} (named by {', '.join(map(repr, by[n]))})" if n in by else repr(n)
            for n in self.names
        )
        super().__init__(f"unknown agent(s) {listed}; the catalog holds {sorted(known)}")


def load_agent_config(path: str | Path) -> AgentConfig:
    """One agent from one YAML file. A missing `name` is taken from the file name; a
    `name` that differs from it is refused, so a file always says which agent it is."""
    path = Path(path)
    source = str(path)
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise AgentConfigError(source, [("", f"cannot be read: {error.strerror}")]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise AgentConfigError(source, [("", f"{problem}{where}")]) from None
    if data is None:
        # Not a default agent: `tools` left out means every unclaimed tool, so a file
        # truncated on its way to a server must not turn into the widest agent there is.
        raise AgentConfigError(source, [("", "the file is empty; an agent file holds its config")])
    if not isinstance(data, dict):
        raise AgentConfigError(source, [("", "expected a mapping of config fields")])
    data.setdefault("name", path.stem)
    if data["name"] != path.stem:
        message = f"{data['name']!r} differs from the file name {path.stem!r}"
        raise AgentConfigError(source, [("name", message)])
    try:
        return AgentConfig.model_validate(data)
    except ValidationError as error:
        raise AgentConfigError(source, validation_problems(error)) from None


class AgentCatalog:
    """Agent configs by name; a name is held once, whichever source it came from."""

    def __init__(self, configs: Iterable[AgentConfig] = ()) -> None:
        self._configs: dict[str, AgentConfig] = {}
        self._sources: dict[str, str] = {}
        for config in configs:
            self.add(config)

    @classmethod
    def from_yaml(cls, *paths: str | Path) -> AgentCatalog:
        """A catalog of the YAML files given, or of every `*.yaml`/`*.yml` in a folder."""
        catalog = cls()
        catalog.load_yaml(*paths)
        return catalog

    def add(self, config: AgentConfig, *, source: str = "code") -> AgentConfig:
        if config.name in self._configs:
            first = self._sources[config.name]
            raise AgentConfigError(
                source, [("name", f"agent {config.name!r} is already defined in {first}")]
            )
        self._configs[config.name] = config
        self._sources[config.name] = source
        return config

    def load_yaml(self, *paths: str | Path) -> list[AgentConfig]:
        """Adds every agent of the files (or folders) given, all or none."""
        files: list[Path] = []
        for path in map(Path, paths):
            if path.is_dir():
                files.extend(sorted(p for p in path.iterdir() if p.suffix in YAML_SUFFIXES))
            else:
                files.append(path)
        loaded = [(load_agent_config(f), str(f)) for f in files]
        staged = AgentCatalog()
        staged._configs, staged._sources = dict(self._configs), dict(self._sources)
        for config, source in loaded:
            staged.add(config, source=source)
        self._configs, self._sources = staged._configs, staged._sources
        return [config for config, _ in loaded]

    def get(self, name: str) -> AgentConfig:
        try:
            return self._configs[name]
        except KeyError:
            raise UnknownAgentError([name], self._configs) from None

    def source(self, name: str) -> str:
        """Where the config of `name` came from: a file path, or "code"."""
        self.get(name)
        return self._sources[name]

    def names(self) -> list[str]:
        return list(self._configs)

    def __contains__(self, name: object) -> bool:
        return name in self._configs

    def __iter__(self) -> Iterator[AgentConfig]:
        return iter(list(self._configs.values()))

    def __len__(self) -> int:
        return len(self._configs)
