"""Agent configs by name, from code and YAML; the tree built from a root is checked
before anything runs, with errors that name the file, the field and the agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_yuxi.errors import YuxiError
from adk_yuxi.runtime import (
    AgentCatalog,
    AgentConfig,
    AgentConfigError,
    AgentTree,
    AgentTreeError,
    UnknownAgentError,
)


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


def _catalog(**configs: dict) -> AgentCatalog:
    return AgentCatalog(AgentConfig(name=n, **fields) for n, fields in configs.items())


# -- config fields ----------------------------------------------------------------------


def test_agent_lists_default_empty_and_are_deduplicated() -> None:
    config = AgentConfig(name="c", sub_agents=["w", "w"], agent_tools=["r"])
    assert config.sub_agents == ("w",)
    assert config.agent_tools == ("r",)
    assert config.can_handoff_to is None
    assert AgentConfig(name="x").sub_agents == ()


@pytest.mark.parametrize(
    ("field", "value"),
    [("sub_agents", "writer"), ("agent_tools", ["a b"]), ("can_handoff_to", ["x\x00"])],
)
def test_agent_lists_refuse_strings_and_non_names(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        AgentConfig(name="c", **{field: value})


def test_default_whitelist_is_the_sub_agents_and_the_parent_only_when_asked() -> None:
    assert AgentConfig(name="a", sub_agents=["b"]).handoff_targets("p") == ("b",)
    asks = AgentConfig(name="a", sub_agents=["b"], handoff_to_parent=True)
    assert asks.handoff_targets("p") == ("b", "p")
    assert asks.handoff_targets(None) == ("b",)
    assert AgentConfig(name="a", sub_agents=["b"], can_handoff_to=[]).handoff_targets("p") == ()


# -- catalog ----------------------------------------------------------------------------


def test_catalog_from_code_and_yaml(tmp_path: Path) -> None:
    _write(tmp_path, "researcher", "description: Finds facts.\ntools: [echo]\n")
    _write(tmp_path, "writer", "name: writer\ndescription: Drafts text.\n")
    (tmp_path / "notes.txt").write_text("not an agent")
    catalog = AgentCatalog([AgentConfig(name="coordinator", agent_tools=["researcher"])])
    loaded = catalog.load_yaml(tmp_path)
    assert [c.name for c in loaded] == ["researcher", "writer"]
    assert catalog.names() == ["coordinator", "researcher", "writer"]
    assert catalog.get("researcher").tools == ("echo",)
    assert catalog.source("writer") == str(tmp_path / "writer.yaml")
    assert catalog.source("coordinator") == "code"


def test_yaml_field_error_names_file_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "writer", "description: Drafts.\nsub_agents: editor\n")
    with pytest.raises(AgentConfigError) as caught:
        AgentCatalog.from_yaml(path)
    assert caught.value.source == str(path)
    assert caught.value.problems[0][0] == "sub_agents"
    assert str(path) in str(caught.value) and "'sub_agents'" in str(caught.value)
    assert isinstance(caught.value, YuxiError)


@pytest.mark.parametrize(
    ("text", "field", "needle"),
    [
        ("descripton: typo\n", "descripton", "Extra inputs"),
        ("limits: {max_llm_calls: 0}\n", "limits.max_llm_calls", "greater than"),
        ("name: other\n", "name", "differs from the file name"),
        ("- a list\n", "", "mapping"),
        ("description: [unclosed\n", "", "line"),
    ],
)
def test_yaml_errors(tmp_path: Path, text: str, field: str, needle: str) -> None:
    path = _write(tmp_path, "writer", text)
    with pytest.raises(AgentConfigError) as caught:
        AgentCatalog.from_yaml(path)
    assert caught.value.problems[0][0] == field
    assert needle in caught.value.problems[0][1]


def test_bad_file_leaves_the_catalog_unchanged(tmp_path: Path) -> None:
    _write(tmp_path, "a", "description: A.\n")
    _write(tmp_path, "b", "description: [\n")
    catalog = AgentCatalog([AgentConfig(name="root")])
    with pytest.raises(AgentConfigError):
        catalog.load_yaml(tmp_path)
    assert catalog.names() == ["root"]


def test_duplicate_names_name_both_sources(tmp_path: Path) -> None:
    one = _write(tmp_path / "one", "writer", "description: One.\n")
    two = _write(tmp_path / "two", "writer", "description: Two.\n")
    catalog = AgentCatalog()
    with pytest.raises(AgentConfigError, match="already defined") as caught:
        catalog.load_yaml(one, two)
    assert str(one) in str(caught.value) and str(two) in str(caught.value)
    assert len(catalog) == 0
    catalog.add(AgentConfig(name="writer"))
    with pytest.raises(AgentConfigError, match="already defined in code"):
        catalog.add(AgentConfig(name="writer"))


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(AgentConfigError, match="cannot be read"):
        AgentCatalog.from_yaml(tmp_path / "absent.yaml")


def test_unknown_name() -> None:
    with pytest.raises(UnknownAgentError, match="'ghost'"):
        AgentCatalog().get("ghost")


# -- tree -------------------------------------------------------------------------------


def test_tree_order_parents_and_whitelist() -> None:
    catalog = _catalog(
        coordinator={"sub_agents": ["writer", "editor"], "agent_tools": ["researcher"]},
        writer={"description": "Drafts.", "can_handoff_to": ["editor", "coordinator"]},
        editor={"description": "Edits.", "handoff_to_parent": True},
        researcher={"description": "Finds facts."},
        unrelated={},
    )
    tree = AgentTree.build(catalog, "coordinator")
    assert list(tree.configs)[-1] == "coordinator"
    assert set(tree.configs) == {"coordinator", "writer", "editor", "researcher"}
    assert tree.parent("writer") == "coordinator" and tree.parent("researcher") is None
    assert tree.peers("writer") == ("editor",)
    assert tree.handoff_targets("coordinator") == ("writer", "editor")
    assert tree.handoff_targets("writer") == ("editor", "coordinator")
    assert tree.handoff_targets("editor") == ("coordinator",)
    assert tree.agent_tool_targets() == {"researcher"}


def test_a_catalog_is_a_forest_of_its_root_agents() -> None:
    catalog = AgentCatalog.from_yaml(Path(__file__).parents[2] / "agents" / "team" / "configs")
    (team,) = AgentTree.forest(catalog)
    assert team.root == "coordinator"
    assert set(team.configs) == {"coordinator", "writer", "critic", "researcher"}
    catalog.add(AgentConfig(name="alone"))
    catalog.add(AgentConfig(name="second", agent_tools=["researcher"]))  # a shared tool
    assert [t.root for t in AgentTree.forest(catalog)] == ["coordinator", "alone", "second"]


def test_a_cycle_no_root_reaches_is_refused_not_left_out() -> None:
    catalog = _catalog(
        main={},
        a={"description": "A", "sub_agents": ["b"]},
        b={"description": "B", "agent_tools": ["a"]},
    )
    with pytest.raises(AgentTreeError, match="cycle"):
        AgentTree.forest(catalog)


def test_unknown_names_are_all_named_with_who_names_them() -> None:
    catalog = _catalog(root={"sub_agents": ["ghost"], "agent_tools": ["phantom"]})
    with pytest.raises(UnknownAgentError) as caught:
        AgentTree.build(catalog, "root")
    assert set(caught.value.names) == {"ghost", "phantom"}
    assert "(named by 'root')" in str(caught.value)
    with pytest.raises(UnknownAgentError, match="'nobody'"):
        AgentTree.build(catalog, "nobody")


@pytest.mark.parametrize(
    ("configs", "needle"),
    [
        ({"a": {"sub_agents": ["b"]}, "b": {"description": "B", "agent_tools": ["a"]}}, "cycle"),
        ({"a": {"agent_tools": ["a"]}}, "a -> a"),
        (
            {
                "a": {"sub_agents": ["b", "c"]},
                "b": {"description": "B", "sub_agents": ["d"]},
                "c": {"description": "C", "sub_agents": ["d"]},
                "d": {"description": "D"},
            },
            "sub-agent of both",
        ),
        (
            {"a": {"sub_agents": ["b"], "agent_tools": ["b"]}, "b": {"description": "B"}},
            "one or the other",
        ),
        ({"a": {"sub_agents": ["b"]}, "b": {}}, "need a description"),
        ({"a": {"agent_tools": ["b"]}, "b": {"description": "  "}}, "need a description"),
        (
            {
                "a": {"sub_agents": ["b"], "can_handoff_to": ["c"]},
                "b": {"description": "B"},
                "c": {"description": "C"},
            },
            "can_handoff_to names ['c']",
        ),
    ],
)
def test_tree_errors(configs: dict, needle: str) -> None:
    catalog = _catalog(**configs)
    with pytest.raises(AgentTreeError) as caught:
        AgentTree.build(catalog, "a")
    assert needle in str(caught.value)


def test_shared_agent_tool_is_built_once() -> None:
    catalog = _catalog(
        a={"agent_tools": ["r"], "sub_agents": ["w"]},
        w={"description": "W", "agent_tools": ["r"]},
        r={"description": "R"},
    )
    tree = AgentTree.build(catalog, "a")
    assert list(tree.configs) == ["r", "w", "a"]


def test_reachable_by_follows_only_readable_agents() -> None:
    from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, ShareConfig, User

    catalog = _catalog(
        root={"sub_agents": ["w"], "agent_tools": ["r"]},
        w={"description": "W", "agent_tools": ["deep"]},
        r={"description": "R", "agent_tools": ["deep"]},
        deep={"description": "D"},
    )
    tree = AgentTree.build(catalog, "root")

    def who(*agents: str) -> Principal:
        records = [
            ResourceRecord(
                kind=ResourceKind.AGENT, id=a, creator_id="x", share=ShareConfig.public()
            )
            for a in agents
        ]
        return Principal.from_records(User(id="u"), records)

    assert tree.reachable_by(who("root", "w", "r", "deep")) == (["deep", "w", "r", "root"], [])
    assert tree.reachable_by(who("root", "r", "deep")) == (["deep", "r", "root"], ["w"])
    # Only through a readable agent: deep is readable but w, its only way in here, is not.
    assert tree.reachable_by(who("root", "deep")) == (["root"], ["w", "r"])
    assert tree.reachable_by(who("w", "r", "deep")) == ([], ["root"])
