import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it, type TestContext } from "vitest";
import { ADMIN_TOKEN, api, createAgent, createTenantToken, type ErrorBody } from "../support/http";
import { openedMirrorRow } from "../support/mirror";
import { runTurn } from "../support/runs";
import { count } from "./support/counts";
import { invalidJsonValue, invalidQueryValue } from "./support/invalid-values";
import { operations, type Operation } from "./support/routes";
import { secretsIn } from "./support/secrets";
import { isOpenAiPath } from "../../src/api/openai-responses/errors";

/** Fixed so a failure reproduces; `FUZZ_SEED` in the results names it. */
const SEED = 14_2026;
const RUNS = { body: 800, missingRequired: 80, contentType: 100, idempotencyKey: 50, query: 250, path: 100, authorization: 500 };

/** The tenant's own provider key, stored as a credential: it must never come back either. */
const TENANT_CREDENTIAL_KEY = "fuzz-tenant-credential-key-83d1";

type Case = { method: string; path: string; body?: unknown; headers?: Record<string, string>; token?: string | null };

/** The names of the app's D1 tables (not the platform's `_cf_` ones). */
async function d1Tables(): Promise<{ results: { name: string }[] }> {
  return env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'").all<{
    name: string;
  }>();
}

/** Every D1 table's row count, the owner's session transcript (full) and its agent and run, as one string. */
async function storedState(token: string, owned: Owned): Promise<string> {
  const tables = await d1Tables();
  const counts: Record<string, unknown> = {};
  for (const { name } of tables.results)
    counts[name] = (await env.DB.prepare(`SELECT count(*) AS n FROM "${name}"`).first<{ n: number }>())?.n;
  const read = async (path: string) => (await api(path, {}, token)).text();
  return JSON.stringify({
    counts,
    transcript: await read(`/v1/sessions/${owned.session}/transcript?full=true`),
    agent: await read(`/v1/agents/${owned.agent}`),
    run: await read(`/v1/agents/${owned.agent}/runs/${owned.run}`),
    credential: await read(`/v1/credentials/${owned.credential}`),
  });
}

type Owned = { agent: string; run: string; session: string; credential: string; key: string };

/** Fills an OpenAPI path with the owner's ids (so only the fuzzed part is wrong). */
function ownedPath(path: string, owned: Owned): string {
  const ids: Record<string, string> = {
    agent_id: owned.agent,
    run_id: owned.run,
    session_id: owned.session,
    id: path.startsWith("/v1/keys") ? owned.key : owned.credential,
  };
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? name));
}

/**
 * A JSON error body in a 4xx, naming at least one field on a 400 (docs/api.md's `details.fields`, or on
 * the OpenAI-compatible `/v1/responses` surface OpenAI's `error.param`); returns what is wrong, or null.
 */
function mishandled(response: Response, text: string, openAi: boolean, sent: unknown): string | null {
  if (response.status < 400 || response.status > 499) return `status ${response.status}: ${text.slice(0, 300)}`;
  if (!/application\/json/.test(response.headers.get("content-type") ?? "")) return `content-type ${response.headers.get("content-type")}`;
  let body: ErrorBody;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    return `not JSON: ${text.slice(0, 300)}`;
  }
  if (typeof body.error?.type !== "string" || typeof body.error.message !== "string") return `no error type/message: ${text.slice(0, 300)}`;
  if (openAi) {
    // Like OpenAI, a body that is not a JSON object (malformed, an array, a string) has no param to name.
    const param = (body.error as { param?: unknown }).param;
    const named = typeof param === "string" && param.length > 0;
    const isObject = typeof sent === "object" && sent !== null && !Array.isArray(sent);
    return response.status === 400 && isObject && !named ? `400 names no param: ${text.slice(0, 300)}` : null;
  }
  if (
    response.status === 400 &&
    !(body.error.details?.fields?.length && body.error.details.fields.every((f) => typeof f.path === "string" && f.path.length > 0))
  ) {
    return `400 names no field: ${text.slice(0, 300)}`;
  }
  return null;
}

/** Arbitraries of bad requests to one operation: bodies, missing fields, content types, headers, query and path values. */
function badRequests(op: Operation, owned: Owned): { kind: string; runs: number; arbitrary: fc.Arbitrary<Case> }[] {
  const path = ownedPath(op.path, owned);
  const token = op.path.startsWith("/v1/keys") || op.path === "/v1/quarantine" ? ADMIN_TOKEN : undefined;
  const out: { kind: string; runs: number; arbitrary: fc.Arbitrary<Case> }[] = [];
  const fuzzable = Object.entries(op.body?.properties ?? {}).flatMap(([name, schema]) => {
    const invalid = invalidJsonValue(schema);
    return invalid ? [{ name, invalid }] : [];
  });
  if (op.body) {
    const others = fc.dictionary(fc.constantFrom(...Object.keys(op.body.properties ?? { x: {} })), fc.jsonValue({ maxDepth: 3 }), {
      maxKeys: 4,
    });
    const invalidBody = fuzzable.length
      ? fc.oneof(...fuzzable.map(({ name, invalid }) => fc.tuple(others, invalid).map(([rest, value]) => ({ ...rest, [name]: value }))))
      : fc.constant(null);
    const notAnObject = fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 })), fc.string(), fc.integer(), fc.constant(null), fc.boolean());
    const rawText = fc.string().filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    });
    out.push({
      kind: "body",
      runs: RUNS.body,
      arbitrary: fc.oneof(
        { weight: 4, arbitrary: invalidBody.map((body) => ({ method: op.method, path, body, token })) },
        {
          weight: 1,
          arbitrary: notAnObject.map((body) => ({
            method: op.method,
            path,
            body: JSON.stringify(body),
            headers: { "content-type": "application/json" },
            token,
          })),
        },
        {
          weight: 1,
          arbitrary: rawText.map((body) => ({ method: op.method, path, body, headers: { "content-type": "application/json" }, token })),
        },
      ),
    });
    const required = op.body.required ?? [];
    if (required.length) {
      const optional = Object.keys(op.body.properties ?? {}).filter((k) => !required.includes(k));
      out.push({
        kind: "body",
        runs: RUNS.missingRequired,
        arbitrary: fc.tuple(fc.constantFrom(...required), fc.subarray(optional)).map(([missing, kept]) => ({
          method: op.method,
          path,
          body: Object.fromEntries([...required.filter((r) => r !== missing), ...kept].map((k) => [k, "x"])),
          token,
        })),
      });
    }
    const badType = fc.oneof(
      fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"),
      fc.string({ unit: "grapheme-ascii", minLength: 1 }).filter((s) => !/json/i.test(s)),
    );
    out.push({
      kind: "headers",
      runs: RUNS.contentType,
      arbitrary: fc
        .tuple(badType, invalidBody)
        .map(([type, body]) => ({ method: op.method, path, body: JSON.stringify(body), headers: { "content-type": type }, token })),
    });
    out.push({
      kind: "headers",
      runs: RUNS.idempotencyKey,
      arbitrary: fc
        .tuple(fc.string({ unit: "grapheme-ascii", minLength: 256, maxLength: 400 }), invalidBody)
        .map(([key, body]) => ({ method: op.method, path, body, headers: { "idempotency-key": key }, token })),
    });
  }
  for (const parameter of op.parameters.filter((p) => p.in === "query")) {
    const invalid = invalidQueryValue(parameter.schema);
    if (!invalid) continue;
    out.push({
      kind: "query",
      runs: RUNS.query,
      arbitrary: invalid.map((value) => ({
        method: op.method,
        path: `${path}?${parameter.name}=${encodeURIComponent(value)}`,
        body: op.body ? {} : undefined,
        token,
      })),
    });
  }
  const pathParams = op.parameters.filter((p) => p.in === "path");
  if (pathParams.length) {
    // "." and ".." are dot segments: the URL parser removes them, so they never reach a route as a value.
    const segment = fc.string({ minLength: 1, maxLength: 300 }).filter((s) => s !== "." && s !== "..");
    out.push({
      kind: "path",
      runs: RUNS.path,
      arbitrary: fc.tuple(fc.constantFrom(...pathParams.map((p) => p.name)), segment).map(([name, value]) => ({
        method: op.method,
        path: ownedPath(op.path.replace(`{${name}}`, "\u0000"), owned).replace(encodeURIComponent("\u0000"), encodeURIComponent(value)),
        body: op.body ? {} : undefined,
        token,
      })),
    });
  }
  return out;
}

async function fuzz(context: TestContext, kind: string, runs: number, arbitrary: fc.Arbitrary<Case>, tenantToken: string): Promise<void> {
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (c) => {
        count(context, "inputs", `tried_${kind}`);
        const response = await api(
          c.path,
          { method: c.method, body: c.body, headers: c.headers },
          c.token === undefined ? tenantToken : c.token,
        );
        const text = await response.text();
        const leaked = secretsIn(text, [TENANT_CREDENTIAL_KEY]);
        count(context, "secrets", "answers_scanned");
        count(context, "secrets", "found", leaked.length);
        if (leaked.length) throw new Error(`${c.method} ${c.path}: a secret in the answer: ${text.slice(0, 300)}`);
        const wrong = mishandled(response, text, isOpenAiPath(c.path), c.body);
        if (wrong) throw new Error(`${c.method} ${c.path}: ${wrong}`);
      }),
      { numRuns: runs, seed: SEED, endOnFailure: true },
    );
  } catch (error) {
    count(context, "inputs", `mishandled_${kind}`);
    throw error;
  }
}

describe("bad input, fuzzed from the OpenAPI document", () => {
  it("answers every bad body, query, path parameter and header of every route with a JSON 4xx naming the field, and stores nothing", async (context) => {
    const token = await createTenantToken();
    const credential = `cred-${crypto.randomUUID()}`;
    expect(
      (await api("/v1/credentials", { body: { id: credential, provider: "anthropic", api_key: TENANT_CREDENTIAL_KEY } }, token)).status,
    ).toBe(201);
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] }, token);
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" }, token);
    expect(paused.status).toBe("paused");
    const key = await (await api("/v1/keys", { body: { tenant: "fuzz-victim", name: "k" } })).json<{ id: string }>();
    const owned: Owned = { agent: agent.id, run: paused.id, session: paused.session_id, credential, key: key.id };

    const { operations: ops } = await operations();
    expect(ops.length).toBeGreaterThan(20);
    const before = await storedState(token, owned);
    for (const op of ops) {
      for (const { kind, runs, arbitrary } of badRequests(op, owned)) await fuzz(context, kind, runs, arbitrary, token);
      count(context, "inputs", "routes_fuzzed");
      expect(await storedState(token, owned), `stored state after fuzzing ${op.method} ${op.path}`).toBe(before);
    }
    await fuzz(
      context,
      "headers",
      RUNS.authorization,
      // Only /v1 routes take a token; `GET /health` answers anyone.
      fc
        .tuple(fc.constantFrom(...ops.filter((op) => op.path.startsWith("/v1/"))), fc.string({ unit: "grapheme-ascii", maxLength: 200 }))
        .map(([op, value]) => ({
          method: op.method,
          path: ownedPath(op.path, owned),
          headers: { authorization: value },
          token: null,
        })),
      token,
    );
    expect(await storedState(token, owned)).toBe(before);

    // No secret in any D1 row either (keys are stored hashed, credentials encrypted).
    const tables = await d1Tables();
    for (const { name } of tables.results) {
      // What the mirror gzipped is opened first (test/support/mirror.ts).
      const rows = (await Promise.all((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results.map(openedMirrorRow))).join("\n");
      count(context, "secrets", "d1_tables_scanned");
      count(context, "secrets", "found", secretsIn(rows, [TENANT_CREDENTIAL_KEY]).length);
      expect(secretsIn(rows, [TENANT_CREDENTIAL_KEY]), name).toEqual([]);
    }
  });
});
