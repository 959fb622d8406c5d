"""Your first agent: one registered tool, one App for every local user, the demo model."""

import asyncio

from google.adk.runners import InMemoryRunner
from google.genai import types

from adk_yuxi import AgentConfig, LocalPrincipals, build_app, tool


@tool(category="text", display_name="Word count")
def count_words(text: str) -> dict[str, int]:
    """Counts the words of a text."""
    return {"words": len(text.split())}


config = AgentConfig(name="first", instruction="Count words with the tool.", tools=("count_words",))
app = build_app(config, LocalPrincipals())  # any user id; the model: YUXI_MODEL, or the demo


async def main() -> None:
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="ann")
    text = '/call count_words {"text": "one two three"}'
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        for part in event.content.parts if event.content and event.content.parts else ():
            if part.function_call:
                print("call  ", part.function_call.name, part.function_call.args)
            elif part.function_response:
                print("result", part.function_response.response)
            elif part.text:
                print("answer", part.text)


if __name__ == "__main__":
    asyncio.run(main())
