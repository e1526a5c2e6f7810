// An independent MCP client of `trtbuild mcp`: the TypeScript SDK starts the server over stdio,
// then checks the build tool's progress notifications, its cancellation through an AbortSignal
// (the SDK sends notifications/cancelled) and its time budget. Exits 1 on the first failure.
//
//   node client.mjs TRTBUILD MODEL.onnx STATE_DIR
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [trtbuild, model, stateDir] = process.argv.slice(2);
if (!trtbuild || !model || !stateDir) {
  console.error("usage: node client.mjs TRTBUILD MODEL.onnx STATE_DIR");
  process.exit(2);
}

function fail(msg) {
  console.error(`tsclient: FAIL: ${msg}`);
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The results of the builds that ended, from their event logs (events.jsonl is written when a
// build ends), by build folder.
function endedBuilds() {
  const dir = join(stateDir, "builds");
  const out = {};
  if (!existsSync(dir)) return out;
  for (const id of readdirSync(dir)) {
    const f = join(dir, id, "events.jsonl");
    if (!existsSync(f)) continue;
    const lines = readFileSync(f, "utf8").trim().split("\n");
    out[id] = { result: JSON.parse(lines[lines.length - 1]), files: readdirSync(join(dir, id)) };
  }
  return out;
}

const transport = new StdioClientTransport({
  command: trtbuild,
  args: ["mcp", "--state-dir", stateDir],
  stderr: "inherit",
});
const client = new Client({ name: "trtbuild-tsclient", version: "1.0.0" });
await client.connect(transport);
// Long builds: the request timeout restarts with every progress notification.
const long = { timeout: 300_000, resetTimeoutOnProgress: true };
const sim = (speed) => ({ backend: "sim", "sim-speed": speed, "no-timing-cache": true });

// 1. The five tools, with input schemas.
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
if (names.join(",") !== "build,convert,engine_inspect,inspect,key") fail(`tools ${names}`);
const build = tools.find((t) => t.name === "build");
if (!build.inputSchema.properties.options?.properties?.fp16) fail("build's options schema has no fp16");
if (!build.outputSchema?.properties?.state) fail("build has no output schema with state");
console.log("tsclient: ok: tools/list has the five tools with schemas");

// 2. Progress notifications (the SDK sets _meta.progressToken for onprogress).
const progress = [];
const built = await client.callTool(
  { name: "build", arguments: { model, options: sim(5) } },
  undefined,
  { ...long, onprogress: (p) => progress.push(p) },
);
if (built.isError || built.structuredContent?.state !== "succeeded") fail(`build: ${JSON.stringify(built)}`);
if (!built.content[0].text.startsWith("succeeded: ")) fail(`text ${built.content[0].text}`);
if (progress.length < 3) fail(`${progress.length} progress notifications`);
for (let i = 0; i < progress.length; i++) {
  const p = progress[i];
  if (!(p.total > 0) || p.progress > p.total || (i > 0 && p.progress <= progress[i - 1].progress)) {
    fail(`notification ${i}: ${JSON.stringify(p)} after ${JSON.stringify(progress[i - 1])}`);
  }
  if (!p.message?.startsWith("Building engine")) fail(`notification ${i} message ${p.message}`);
}
const last = progress[progress.length - 1];
if (last.progress !== last.total) fail(`last notification ${JSON.stringify(last)}`);
console.log(`tsclient: ok: ${progress.length} progress notifications, growing to ${last.total}/${last.total}; engine ${built.structuredContent.engine}`);

// 3. Cancel through an AbortSignal once the build is under way.
const before = Object.keys(endedBuilds()).length;
const abort = new AbortController();
let aborted = false;
try {
  await client.callTool(
    { name: "build", arguments: { model, options: sim(0.1) } },
    undefined,
    { ...long, signal: abort.signal, onprogress: () => abort.abort("enough") },
  );
} catch (e) {
  aborted = true;
}
if (!aborted) fail("the aborted call returned a result");
let cancelled;
for (let i = 0; i < 600 && !cancelled; i++) {
  const ended = Object.values(endedBuilds());
  if (ended.length > before) cancelled = ended.find((b) => b.result.status === "cancelled");
  if (!cancelled) await sleep(100);
}
if (!cancelled) fail(`no build ended cancelled: ${JSON.stringify(endedBuilds())}`);
if (cancelled.files.some((f) => f.endsWith(".engine"))) fail(`a cancelled build left an engine: ${cancelled.files}`);
console.log("tsclient: ok: the aborted call's build ended cancelled, no engine");

// 4. The time budget.
const timed = await client.callTool(
  { name: "build", arguments: { model, timeout: "2s", options: sim(0.5) } },
  undefined,
  long,
);
const t = timed.structuredContent;
if (!timed.isError || t?.state !== "timed_out" || t.engine || !t.where?.path?.length || !/timeout 2s in "/.test(t.error)) {
  fail(`budget: ${JSON.stringify(timed)}`);
}
console.log(`tsclient: ok: the 2s budget ended the build timed_out: ${t.error}`);

await client.close();
console.log("tsclient: all checks passed");
