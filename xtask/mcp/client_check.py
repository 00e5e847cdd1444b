"""Drives Muster with the official MCP Python SDK, as an MCP client would.

Usage: client_check.py stdio|http
  stdio: spawns `$MCP_CHECK_BINARY mcp` (credentials in the environment: an agent), lists the
         tools and runs claim -> comment -> transition(done) through them.
  http:  connects to $MUSTER_SERVER/mcp with `Authorization: Bearer $MUSTER_API_KEY`,
         lists the tools, creates a task and reads it back.
Prints one line per step and exits non-zero on the first surprise.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


async def call(session, name, arguments):
    result = await session.call_tool(name, arguments)
    check(not result.isError, f"{name} succeeded ({result.structuredContent})")
    return result.structuredContent


async def agent_loop(session):
    init = await session.initialize()
    check(init.serverInfo.name == "muster", "initialize names muster")
    tools = {tool.name for tool in (await session.list_tools()).tools}
    check({"claim_task", "comment_on_task", "transition_task"} <= tools, f"tools listed: {sorted(tools)}")
    created = await call(session, "create_task", {"title": "From the Python SDK"})
    task_id = created["data"]["id"]
    claimed = await call(session, "claim_task", {})
    check(claimed["data"]["id"] == task_id, "claim_task took the new task")
    await call(session, "comment_on_task", {"id": task_id, "body": "working on it"})
    done = await call(session, "transition_task", {"id": task_id, "status": "done"})
    check(done["data"]["status"] == "done", "transition_task moved it to done")
    balance = await call(session, "get_balance", {})
    check(isinstance(balance["data"]["currentBalance"], int), "get_balance reads the caller's balance")
    refused = await session.call_tool("create_task", {"title": "x" * 256})
    check(refused.isError and refused.structuredContent["statusCode"] == 400, "a refusal is a tool error with the API's status")


async def stdio():
    env = {key: value for key, value in os.environ.items() if key.startswith("MUSTER_")}
    env["PATH"] = os.environ.get("PATH", "")
    params = StdioServerParameters(command=os.environ["MCP_CHECK_BINARY"], args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await agent_loop(session)


async def http():
    url = os.environ["MUSTER_SERVER"] + "/mcp"
    headers = {"Authorization": "Bearer " + os.environ["MUSTER_API_KEY"]}
    async with streamablehttp_client(url, headers=headers) as (read, write, _session_id):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.serverInfo.name == "muster", "initialize names muster")
            tools = {tool.name for tool in (await session.list_tools()).tools}
            check("create_task" in tools and "claim_task" not in tools, f"a user's key sees no claim: {sorted(tools)}")
            created = await call(session, "create_task", {"title": "Over Streamable HTTP"})
            read_back = await call(session, "get_task", {"id": created["data"]["id"]})
            check(read_back == created, "get_task answers the created task")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("stdio", "http"):
        print(__doc__)
        sys.exit(2)
    anyio.run(stdio if mode == "stdio" else http)
    print(json.dumps({"passed": mode}), flush=True)
