"""A knowledge assistant that answers from a small sample corpus, Chinese and English.

`adk run agents/knowledge` and `adk web agents` load the module-level `app`. On import
it starts the built-in knowledge MCP server in a background thread (loopback HTTP,
its own database connections), ingests `corpus/` into the public knowledge base
`handbook` (unchanged files are skipped), and installs the `knowledge` server and the
`knowledge-base` skill, preloaded. Every call the agent makes to the server carries a
delegation minted for the current user and session; the server re-checks that user's
read right at each call.

The database is the one every `yuxi` command uses: `YUXI_DATABASE_URL`, else
`.yuxi/yuxi.db` relative to where `adk` runs. So the bases `yuxi kb create` and
`yuxi kb ingest` fill there are searched too, beside the sample `handbook`, which is
seeded only while that database has no base of that id. Any user id is a local user:
one is added to the database the first time it runs the agent. On the offline demo
model, ask a question and it calls `list_kbs`, then `query_kb` on each base, and
quotes the best passage.
"""

from pathlib import Path

from google.adk.apps import App

from adk_yuxi import AgentConfig, Toolbox, build_app
from adk_yuxi.access import (
    AccessRepository,
    NotFoundError,
    Principal,
    ResourceKind,
    ResourceRecord,
    ShareConfig,
    User,
)
from adk_yuxi.knowledge import (
    KNOWLEDGE_SKILL_NAME,
    DelegationKeys,
    KnowledgeServerThread,
    KnowledgeStore,
    embedder_from_env,
    install_knowledge,
)
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.models import resolve_agent_model
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.storage import database_url
from adk_yuxi.tools import default_registry

DB = database_url()
CORPUS = Path(__file__).with_name("corpus")
KB_ID = "handbook"


async def seed(store: KnowledgeStore) -> None:
    """The sample base, readable by everyone, and the skill shared with everyone; each
    only where the database has none yet, so an operator's own changes stay."""
    access = AccessRepository(store.store)
    try:
        await access.get_resource(ResourceKind.SKILL, KNOWLEDGE_SKILL_NAME)
    except NotFoundError:
        await _librarian(access)
        await access.save_resource(
            ResourceRecord(
                kind=ResourceKind.SKILL,
                id=KNOWLEDGE_SKILL_NAME,
                creator_id="librarian",
                share=ShareConfig.public(),
            )
        )
    if KB_ID in {kb.kb_id for kb in await store.list_kbs()}:
        return
    await _librarian(access)
    await store.create_kb(
        "Lantern Harbor handbook",
        kb_id=KB_ID,
        creator_id="librarian",
        share=ShareConfig.public(),
        description="Travel, onboarding, 报销制度 and 数据库运维 of a fictional lab.",
    )
    for path in sorted(CORPUS.glob("*.md")):
        await store.ingest(KB_ID, path)


async def _librarian(access: AccessRepository) -> None:
    try:
        await access.get_user("librarian")
    except NotFoundError:
        await access.save_user(User(id="librarian", name="Sample corpus owner"))


class LocalUsers:
    """Any user id is an active local user, added on first sight; rights come from the
    database as for any host."""

    def __init__(self, db: str) -> None:
        self._access = AccessRepository(db)

    async def __call__(self, user_id: str) -> Principal:
        try:
            return await self._access.load_principal(user_id)
        except NotFoundError:
            await self._access.save_user(User(id=user_id))
            return await self._access.load_principal(user_id)


keys = DelegationKeys.generate()
server = KnowledgeServerThread(DB, keys.verifier(), setup=seed, embedder=embedder_from_env())
mcp_servers = McpServerRegistry()
skills = SkillCatalog(default_registry, mcp_servers)
# The first start embeds the sample corpus with the offline model: seconds on an idle
# machine, longer on a busy one.
install_knowledge(mcp_servers, skills, url=server.start(timeout=600), signer=keys.signer())

config = AgentConfig(
    name="knowledge",
    description="Answers from the Lantern Harbor handbook, in Chinese or English.",
    instruction=(
        "Answer questions from the knowledge bases only, quoting the passage you used and"
        " naming its file. Reply in the language of the question."
    ),
    tools=(),
    skills=(KNOWLEDGE_SKILL_NAME,),
    preload_skills=(KNOWLEDGE_SKILL_NAME,),
)
app: App = build_app(
    config,
    LocalUsers(DB),
    toolbox=Toolbox(skills=skills, mcp_servers=mcp_servers),
    model=resolve_agent_model(),
)
root_agent = app.root_agent
