// Drives Muster with the official MCP TypeScript SDK, as an MCP client would.
//
// Usage: node client_check.mjs stdio|http
//   stdio: spawns `$MCP_CHECK_BINARY mcp` (credentials in the environment: an agent),
//          lists the tools and runs claim -> comment -> transition(done) through them.
//   http:  connects to $MUSTER_SERVER/mcp with `Authorization: Bearer $MUSTER_API_KEY`,
//          lists the tools, creates a task and reads it back.
// Prints one line per step and exits non-zero on the first surprise.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function check(condition, what) {
  if (!condition) {
    console.log(`FAILED: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `${name} succeeded (${JSON.stringify(result.structuredContent)})`);
  return result.structuredContent;
}

async function toolNames(client) {
  return new Set((await client.listTools()).tools.map((tool) => tool.name));
}

async function agentLoop(client) {
  check(client.getServerVersion()?.name === "muster", "initialize names muster");
  const tools = await toolNames(client);
  for (const name of ["claim_task", "comment_on_task", "transition_task", "get_balance"]) {
    check(tools.has(name), `${name} is listed`);
  }
  const created = await call(client, "create_task", { title: "From the TypeScript SDK" });
  const id = created.data.id;
  const claimed = await call(client, "claim_task", {});
  check(claimed.data.id === id, "claim_task took the new task");
  await call(client, "comment_on_task", { id, body: "working on it" });
  const done = await call(client, "transition_task", { id, status: "done" });
  check(done.data.status === "done", "transition_task moved it to done");
  const balance = await call(client, "get_balance", {});
  check(typeof balance.data.currentBalance === "number", "get_balance reads the caller's balance");
  const refused = await client.callTool({ name: "create_task", arguments: { title: "x".repeat(256) } });
  check(
    refused.isError && refused.structuredContent.statusCode === 400,
    "a refusal is a tool error with the API's status",
  );
}

async function stdio() {
  const env = { PATH: process.env.PATH ?? "" };
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("MUSTER_")) env[key] = value;
  }
  const transport = new StdioClientTransport({
    command: process.env.MCP_CHECK_BINARY,
    args: ["mcp"],
    env,
    stderr: "inherit",
  });
  const client = new Client({ name: "muster-check", version: "1.0.0" });
  await client.connect(transport);
  try {
    await agentLoop(client);
  } finally {
    await client.close();
  }
}

async function http() {
  const url = new URL(`${process.env.MUSTER_SERVER}/mcp`);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MUSTER_API_KEY}` } },
  });
  const client = new Client({ name: "muster-check", version: "1.0.0" });
  await client.connect(transport);
  try {
    check(client.getServerVersion()?.name === "muster", "initialize names muster");
    const tools = await toolNames(client);
    check(tools.has("create_task") && !tools.has("claim_task"), "a user's key sees no claim");
    const created = await call(client, "create_task", { title: "Over Streamable HTTP" });
    const readBack = await call(client, "get_task", { id: created.data.id });
    check(JSON.stringify(readBack) === JSON.stringify(created), "get_task answers the created task");
  } finally {
    await client.close();
  }
}

const mode = process.argv[2] ?? "";
if (mode !== "stdio" && mode !== "http") {
  console.log("usage: node client_check.mjs stdio|http");
  process.exit(2);
}
try {
  await (mode === "stdio" ? stdio() : http());
  console.log(JSON.stringify({ passed: mode }));
} catch (error) {
  console.log(`FAILED: ${error?.stack ?? error}`);
  process.exit(1);
}
