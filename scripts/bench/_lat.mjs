// scratch: not committed
import "./ts-hooks.mjs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { busyDecision, devProxyHop } from "./measures.mjs";
import { directOrigin } from "./agentry-server.mjs";
import { startStack } from "./stack.mjs";
const dir = mkdtempSync(join(tmpdir(), "agentry-lat-"));
const stack = await startStack(dir, { onStep: () => {} });
const ctx = { tenant: stack.tenant, agentId: stack.agentId, provider: stack.provider, agentry: stack.agentry, failures: [] };
ctx.direct = await directOrigin(stack.agentry);
console.log("direct", ctx.direct);
console.log("409", JSON.stringify(await busyDecision(ctx, 30)));
console.log("409 direct", JSON.stringify(await busyDecision(ctx, 30, stack.tenant.at(ctx.direct))));
console.log("hop", JSON.stringify(await devProxyHop(ctx, 30)));
console.log(ctx.failures);
await stack.stop();
process.exit(0);
