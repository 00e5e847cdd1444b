// End-to-end check of the Muster dashboard in Debian's Chromium (playwright-core, no
// browser download). Run by `cargo xtask dashboard-e2e`, which starts a release server
// on a fresh database, bootstraps an organization and passes:
//   E2E_SERVER, E2E_ADMIN_EMAIL, E2E_ADMIN_PASSWORD, E2E_AGENT_ID, E2E_AGENT_SECRET,
//   E2E_AGENT_UUID (the HR agent's), E2E_BINARY (the `muster` binary, for `muster
//   sign`), E2E_SCREENSHOTS (a folder);
//   MUSTER_CHROMIUM (default /usr/bin/chromium) says which Chromium to drive.
// It signs in, turns on two-factor sign-in and signs in again with a code, creates a
// task, drags it across the board (a legal and an illegal move), comments and
// replies, approves, sees an agent's change arrive live, follows a run's log live and
// stops the run, reads the task's runs and the spend page, registers and suspends an
// agent, and saves a screenshot of each page. Any step that fails exits non-zero.
import { chromium } from "playwright-core";
import { createHmac } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const base = env("E2E_SERVER");
const email = env("E2E_ADMIN_EMAIL");
const password = env("E2E_ADMIN_PASSWORD");
const agentId = env("E2E_AGENT_ID");
const agentSecret = env("E2E_AGENT_SECRET");
const agentUuid = env("E2E_AGENT_UUID");
const binary = env("E2E_BINARY");
const shots = env("E2E_SCREENSHOTS");
const executablePath = env("MUSTER_CHROMIUM", "/usr/bin/chromium");
mkdirSync(shots, { recursive: true });

const step = (what) => console.log(`dashboard-e2e: ${what}`);

// RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps, of a base32 key.
const totp = (key, offsetSteps = 0) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of key.replace(/=+$/, "")) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000 / 30) + offsetSteps));
  const mac = createHmac("sha1", Buffer.from(bytes)).update(counter).digest();
  const at = mac[mac.length - 1] & 0x0f;
  const code = (mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000;
  return code.toString().padStart(6, "0");
};

// A request signed as the bootstrap HR agent, with `muster sign`'s headers.
const signed = async (method, path, body) => {
  const args = ["sign", "--agent-id", agentId, "--method", method, "--path", path, "--format", "headers"];
  if (body !== undefined) args.push("--body", body);
  const printed = execFileSync(binary, args, {
    env: { ...process.env, MUSTER_AGENT_SECRET: agentSecret, MUSTER_LOG: "warn" },
  }).toString();
  const headers = { "content-type": "application/json" };
  for (const line of printed.split("\n")) {
    const at = line.indexOf(":");
    if (at > 0) headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  const answer = await fetch(base + path, { method, headers, body });
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
};

const browser = await chromium.launch({
  executablePath,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy|Refused to/i.test(msg.text())) {
      problems.push(`CSP: ${msg.text()}`);
    }
  });
  page.on("pageerror", (err) => problems.push(`script error: ${err.message}`));
  const shot = async (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const expectText = async (selector, text) => {
    await page.locator(selector).filter({ hasText: text }).first().waitFor();
  };

  step("sign in");
  await page.goto(base + "/");
  if (!page.url().endsWith("/ui/login")) throw new Error(`/ did not lead to the sign-in page: ${page.url()}`);
  await shot("sign-in");
  await page.fill("#email", email);
  await page.fill("#password", password);
  await page.click("form.signin button[type=submit]");
  await page.waitForURL("**/ui/board");

  step("turn on two-factor sign-in");
  await page.goto(base + "/ui/account");
  await page.fill("#setup-password", password);
  await page.click("button:text-is('Set up')");
  const key = (await page.textContent("#totp-key")).trim();
  await shot("account-totp");
  await page.fill("#totp-code", totp(key));
  await page.click("button:text-is('Turn on')");
  await expectText("#totp-h + p", "On:");

  step("sign out, sign in again with a code");
  await page.click("form.signout button");
  await page.waitForURL("**/ui/login");
  await page.fill("#email", email);
  await page.fill("#password", password);
  await page.click("form.signin button[type=submit]");
  await page.locator("#code").waitFor();
  await page.fill("#password", password);
  // The code of the next step: the one used to turn it on may not be used again.
  await page.fill("#code", totp(key, 1));
  await page.click("form.signin button[type=submit]");
  await page.waitForURL("**/ui/board");

  step("create a task");
  await page.click("details.create summary");
  await page.fill("#new-title", "Write the quarterly report");
  await page.selectOption("#new-priority", "high");
  await page.fill("#new-tags", "q4, reports");
  await page.click("details.create button[type=submit]");
  await page.waitForURL(/\/ui\/tasks\/[0-9a-f-]+$/);
  const taskId = page.url().split("/").pop();

  step("comment and reply");
  await page.fill("#comment-body", "First draft is in the shared folder.");
  await page.click("button:text-is('Comment')");
  await expectText("article.comment", "First draft is in the shared folder.");
  await page.click("article.comment details summary");
  await page.locator("article.comment textarea").first().fill("Thanks, reading it now.");
  await page.locator("article.comment button[type=submit]").first().click();
  await expectText("article.comment article.comment", "Thanks, reading it now.");

  step("drag the card: a legal move, then one the table refuses");
  await page.goto(base + "/ui/board");
  const card = (status) => page.locator(`section.column[data-status="${status}"] li.card[data-task="${taskId}"]`);
  await card("todo").waitFor();
  await page.waitForFunction(() => document.body.dataset.live === "open");
  // The board moves the card before the server answers: wait for the answer, or the
  // reload below may cancel the move while it is still on its way.
  const moved = page.waitForResponse((r) => r.url().endsWith(`/ui/tasks/${taskId}/move`));
  await card("todo").dragTo(page.locator('section.column[data-status="in_progress"]'));
  const answer = await moved;
  if (!answer.ok()) throw new Error(`the move was refused: ${answer.status()} ${await answer.text()}`);
  await card("in_progress").waitFor();
  await page.goto(base + "/ui/board");
  await card("in_progress").dragTo(page.locator('section.column[data-status="backlog"]'));
  await expectText("#notice", "Invalid transition: in_progress -> backlog");
  await card("in_progress").waitFor();

  step("approve a task that needs approval");
  await page.click("details.create summary");
  await page.fill("#new-title", "Publish the report");
  await page.check("input[name=approval]");
  await page.click("details.create button[type=submit]");
  await page.waitForURL(/\/ui\/tasks\/[0-9a-f-]+$/);
  for (const status of ["in_progress", "review"]) {
    await page.selectOption("#move-to", status);
    await page.click("form:has(#move-to) button[type=submit]");
    await expectText("dd.status", status === "review" ? "Review" : "In progress");
  }
  await page.click("button:text-is('Approve')");
  await expectText("dl.fields dd", "approved");
  await shot("task");

  step("an agent's change arrives on the board without a reload");
  await page.goto(base + "/ui/board");
  await page.waitForFunction(() => document.body.dataset.live === "open");
  const made = await signed("POST", "/tasks", JSON.stringify({ title: "Filed by the HR agent", priority: "low" }));
  await page.locator(`li.card[data-task="${(made.data ?? made).id}"]`).waitFor();
  await shot("board");

  step("a run's log follows live; its usage shows on the task and spend pages; Stop");
  // The admin's API calls (credits, a budget) with the dashboard session's own token.
  const session = (await context.cookies()).find((c) => c.name === "muster_session");
  if (!session) throw new Error("no session cookie after signing in");
  const asAdmin = async (method, path, body) => {
    const answer = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${session.value}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
  };
  await asAdmin("POST", `/agents/${agentUuid}/credits/grant`, { amount: 5000, reason: "e2e runs" });
  await asAdmin("PATCH", `/agents/${agentUuid}/budget`, { budgetPeriodLimit: 2000 });
  const json = (value) => JSON.stringify(value);
  const work = (await signed("POST", "/tasks", json({
    title: "Summarize the incident log", priority: "high", assigneeId: agentUuid,
  }))).data;
  await signed("POST", `/tasks/${work.id}/transition`, json({ status: "in_progress" }));
  const startRun = async (body) => (await signed("POST", `/tasks/${work.id}/runs`, json(body))).data.id;
  const print = (run, lines) => signed("POST", `/runs/${run}/log`, json({
    lines: lines.map(([stream, text]) => ({ stream, text })),
  }));
  const use = (run, model, inputTokens, outputTokens, costMicrousd) => signed("POST", `/runs/${run}/usage`,
    json({ model, inputTokens, outputTokens, costMicrousd }));
  const first = await startRun({ adapter: "claude-code", model: "claude-sonnet-4-5" });
  await print(first, [["stdout", "Reading incident-2026-11-28.log (4,812 lines)"], ["stderr", "warning: 3 lines are not UTF-8"]]);
  await use(first, "claude-sonnet-4-5", 20000, 4000, 150000);
  await signed("POST", `/runs/${first}/finish`, json({ status: "failed", exitCode: 1, summary: "Ran out of context" }));
  const second = await startRun({ adapter: "codex", model: "gpt-5" });
  await print(second, [
    ["system", "worker: started codex exec in /work/incident"],
    ["stdout", "Reading incident-2026-11-28.log in chunks of 500 lines"],
    ["stdout", "Chunk 1/10: 14:02 UTC deploy of api v2.31 began"],
    ["stdout", "Chunk 2/10: 14:05 UTC error rate rose to 12 %"],
  ]);
  await use(second, "gpt-5", 40000, 8000, 130000);
  await use(second, "claude-haiku-4-5", 9000, 1000, 14000);
  await page.goto(base + `/ui/runs/${second}`);
  await expectText("ol.log li", "error rate rose");
  await page.locator("#log-follow[hx-get]").waitFor();
  // A line printed now appears without a reload: the page keeps a value set before.
  await page.evaluate(() => { window.e2eSamePage = true; });
  await print(second, [["stdout", "Chunk 3/10: 14:09 UTC rollback to api v2.30 started"]]);
  await expectText("ol.log li", "rollback to api v2.30");
  await expectText("#log-range", "Lines 1–5 of 5.");
  if (!(await page.evaluate(() => window.e2eSamePage === true))) throw new Error("the run page reloaded");
  await shot("run");
  page.once("dialog", (dialog) => dialog.accept());
  await page.click("#run-stop button:text-is('Stop')");
  await expectText("dd.stop", "yes (requested)");
  // A poll the server refuses (here, as if the session had ended) stops the polling.
  const refusePolls = (route) => route.fulfill({ status: 401, contentType: "text/plain", body: "Your session has ended: sign in again." });
  await page.route("**/ui/runs/*/log?*", refusePolls);
  await expectText("#log-follow", "no longer followed");
  await expectText("#notice", "Your session has ended");
  await page.unroute("**/ui/runs/*/log?*", refusePolls);
  const stopped = await signed("GET", `/runs/${second}`);
  if (stopped.data.stopRequested !== true) throw new Error(`the run was not asked to stop: ${json(stopped)}`);
  await page.goto(base + `/ui/tasks/${work.id}`);
  await page.locator(`table.runs tr[data-run="${first}"]`).waitFor();
  await expectText(`table.runs tr[data-run="${second}"]`, "asked to stop");
  await shot("task-runs");
  await page.goto(base + "/ui/spend");
  await expectText("#spend-total", "$0.294");
  if ((await page.locator("figure svg.chart").count()) !== 3) throw new Error("the spend page lacks a chart");
  await page.locator("figure svg.chart rect").first().waitFor();
  await shot("spend");
  await page.goto(base + `/ui/agents/${agentUuid}`);
  await expectText("#period-spend", "credits spent");
  await page.locator("#spend-h ~ svg.chart").waitFor();
  await shot("agent-spend");

  step("register and suspend an agent");
  await page.goto(base + "/ui/agents");
  await page.click("text=Register an agent");
  await page.fill("#reg-handle", "e2e-writer");
  await page.fill("#reg-name", "Report Writer");
  await page.fill("#reg-level", "3");
  await page.fill("#reg-caps", "writing:expert, research");
  await page.click("details.panel button[type=submit]");
  await expectText(".registered", "Registered Report Writer");
  await shot("agents");
  await page.click("ul.tree a:has-text('Report Writer')");
  await page.click("button:text-is('Suspend')");
  await expectText("p.summary", "suspended");
  await shot("agent");

  step("audit log and webhooks");
  await page.goto(base + "/ui/audit?type=task.created");
  await expectText("table.events", "task.created");
  await shot("audit");
  await page.goto(base + "/ui/webhooks");
  await shot("webhooks");

  step("a phone-sized screen");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(base + "/ui/board");
  await shot("board-phone");
} catch (err) {
  // What the page showed when it failed, for the log and as a picture.
  const [page] = browser.contexts().flatMap((c) => c.pages());
  if (page) {
    console.error(`dashboard-e2e: failed at ${page.url()}`);
    const notice = await page.textContent("#notice").catch(() => null);
    if (notice) console.error(`dashboard-e2e: the page said: ${notice.trim()}`);
    await page.screenshot({ path: join(shots, "failure.png"), fullPage: true }).catch(() => {});
  }
  throw err;
} finally {
  await browser.close();
}
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
step("passed");
