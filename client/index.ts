import { AgentryError, AgentryStreamError } from "./errors.ts";
import { isTerminalEvent, type AgentryEvent } from "./events.ts";
import type { components } from "./openapi";
import { sseEvents } from "./sse.ts";

export { AgentryError, AgentryStreamError, type FieldError } from "./errors.ts";
export { EVENT_TYPES, TERMINAL_EVENTS, isTerminalEvent, type AgentryEvent, type AgentryEventType } from "./events.ts";
export type { components, paths, operations } from "./openapi";

type Schemas = components["schemas"];
export type Agent = Schemas["Agent"];
export type AgentCreate = Schemas["AgentCreate"];
export type Run = Schemas["Run"];
export type Checkpoint = Schemas["Checkpoint"];
/** A stored credential (never its key, token or header values). */
export type Credential = Schemas["Credential"];
/** The body of `POST /v1/credentials`: a provider key, or (`type: "mcp"`) a token and/or headers for MCP servers. */
export type CredentialCreate = Schemas["CredentialCreate"];
/** An agent's MCP server tool (docs/mcp.md). */
export type McpTool = Extract<NonNullable<AgentCreate["tools"]>[number], { type: "mcp" }>;
export type ToolResult = Schemas["ContinueRun"]["tool_results"] extends (infer R)[] | undefined ? R : never;
/** The body of `POST …/runs`, without `stream` and `background` (each helper sets them). */
export type RunRequest = Omit<Schemas["CreateRun"], "stream" | "background">;
/** The body of `POST …/runs/{id}/continue`, without `stream` and `background`. */
export type ContinueRequest = Omit<Schemas["ContinueRun"], "stream" | "background">;
/** A decision on a tool call waiting for approval (`required_actions` of `type: "approval"`). */
export type Approval = Schemas["ContinueRun"]["approvals"] extends (infer A)[] | undefined ? A : never;
/** The 202 answer of a background run. */
export type BackgroundRun = { run_id: string; session_id: string; status: Run["status"] };
/** The 202 answer of a steer: the run it joined (`run_id`), its id, and the run it went into (that run, or a queued one). */
export type Steered = { run_id: string; steer_id: string; steered_into: string };
/** What a turn on a busy session does (docs/runs.md, Busy sessions). */
export type OnBusy = NonNullable<RunRequest["on_busy"]>;
/** A lifecycle webhook (docs/webhooks.md); `CreatedWebhook` carries its `secret`, shown only at creation. */
export type Webhook = Schemas["Webhook"];
export type WebhookCreate = Schemas["WebhookCreate"];
export type CreatedWebhook = Schemas["CreatedWebhook"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookEventType = Webhook["events"][number];
/** A page of a list: newest first; pass `next_cursor` as `cursor` for the next page (null on the last). */
export type Page<T> = { data: T[]; next_cursor: string | null };
/** `limit` (1 to 100, default 20) and `cursor` of a list. */
export type PageOptions = { limit?: number; cursor?: string };
/** A spend budget with its use in the current period ([budgets](../docs/budgets.md)). */
export type Budget = Schemas["Budget"];
export type BudgetCreate = Schemas["BudgetCreate"];
export type BudgetPatch = Schemas["BudgetPatch"];

/** Any fetch: the global one, or a test's (`SELF.fetch`, a wrapper that cuts connections). */
export type FetchLike = (request: Request) => Promise<Response>;

export type AgentryClientOptions = {
  /** The Worker's origin, e.g. `http://127.0.0.1:8787` or `https://agentry.example.workers.dev`. */
  baseUrl: string;
  /** A tenant key (`POST /v1/keys`) or, for the operator, the admin token. */
  token: string;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** How many times in a row a stream is resumed after a dropped connection before giving up (default 5). */
  maxStreamRetries?: number;
  /** The wait before the first resume, doubled at each failed try up to 10 s (default 250 ms). */
  retryDelayMs?: number;
};

/** Per-call options of the helpers that start or continue a run. */
export type CallOptions = { idempotencyKey?: string; signal?: AbortSignal };

/** A run has stopped (for now) in one of these states; `paused` waits for tool results. */
const STOPPED: ReadonlySet<string> = new Set(["completed", "error", "cancelled", "paused"]);

/**
 * A typed client of Agentry's HTTP API (docs/api.md), with helpers for the common flows. Every
 * non-2xx answer is thrown as an `AgentryError` (status, type, fields).
 */
export class AgentryClient {
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly fetcher: FetchLike;
  private readonly maxStreamRetries: number;
  private readonly retryDelayMs: number;

  constructor(options: AgentryClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.fetcher = options.fetch ?? ((request) => fetch(request));
    this.maxStreamRetries = options.maxStreamRetries ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 250;
  }

  // ── agents ────────────────────────────────────────────────────────────

  createAgent(body: AgentCreate): Promise<Agent> {
    return this.json("POST", "/v1/agents", body);
  }

  getAgent(agentId: string): Promise<Agent> {
    return this.json("GET", `/v1/agents/${enc(agentId)}`);
  }

  // ── credentials ───────────────────────────────────────────────────────

  /** Stores a credential: a provider key, or an MCP server's bearer token / headers (`type: "mcp"`). */
  createCredential(body: CredentialCreate, options: Pick<CallOptions, "idempotencyKey"> = {}): Promise<Credential> {
    return this.json("POST", "/v1/credentials", body, options);
  }

  /** Stores an MCP credential: `token` is sent as `Authorization: Bearer <token>` to the servers of the agents that name it. */
  createMcpCredential(id: string, auth: { token?: string; headers?: Record<string, string> }): Promise<Credential> {
    return this.createCredential({ id, type: "mcp", ...auth });
  }

  /**
   * Starts an MCP server's OAuth 2.1 authorization: the answer's `authorization_url` is where the
   * user approves; Agentry's `/oauth/callback` then stores the tokens (docs/mcp.md, OAuth).
   */
  createMcpOAuthCredential(
    id: string,
    serverUrl: string,
    options: { clientId?: string; clientSecret?: string; scope?: string } = {},
  ): Promise<Credential & { authorization_url: string }> {
    return this.createCredential({
      id,
      type: "mcp_oauth",
      server_url: serverUrl,
      ...(options.clientId ? { client_id: options.clientId } : {}),
      ...(options.clientSecret ? { client_secret: options.clientSecret } : {}),
      ...(options.scope ? { scope: options.scope } : {}),
    }) as Promise<Credential & { authorization_url: string }>;
  }

  /** A new `authorization_url` for an mcp_oauth credential whose grant was revoked or expired. */
  authorizeMcpCredential(id: string): Promise<{ id: string; authorization_url: string }> {
    return this.json("POST", `/v1/credentials/${enc(id)}/authorize`);
  }

  /** Deletes a credential no live agent names (409 `credential_in_use` otherwise). */
  async deleteCredential(id: string): Promise<void> {
    await this.send("DELETE", `/v1/credentials/${enc(id)}`, undefined, {}, false);
  }

  // ── runs ──────────────────────────────────────────────────────────────

  /** Runs one turn and answers the Run once it has stopped (`completed`, `error`, `paused`, …). */
  run(agentId: string, body: RunRequest, options: CallOptions = {}): Promise<Run> {
    return this.json("POST", `/v1/agents/${enc(agentId)}/runs`, { ...body, stream: false, background: false }, options);
  }

  /** Starts a turn in the background (`202`): the queue runs it; follow it with `waitForRun` or `streamEvents`. */
  runInBackground(agentId: string, body: RunRequest, options: CallOptions = {}): Promise<BackgroundRun> {
    return this.json("POST", `/v1/agents/${enc(agentId)}/runs`, { ...body, stream: false, background: true }, options);
  }

  getRun(agentId: string, runId: string, options: { waitSeconds?: number; signal?: AbortSignal } = {}): Promise<Run> {
    const wait = options.waitSeconds === undefined ? "" : `?wait=${options.waitSeconds}`;
    return this.json("GET", `/v1/agents/${enc(agentId)}/runs/${enc(runId)}${wait}`, undefined, { signal: options.signal });
  }

  /**
   * Waits for a run to stop, long-polling `GET …/runs/{id}?wait=` (at most 60 s a request).
   * Answers the Run once it has stopped, or as it is when `timeoutSeconds` (default: none) has passed.
   */
  async waitForRun(agentId: string, runId: string, options: { timeoutSeconds?: number; signal?: AbortSignal } = {}): Promise<Run> {
    const deadline = options.timeoutSeconds === undefined ? Infinity : Date.now() + options.timeoutSeconds * 1000;
    for (;;) {
      const left = Math.ceil((deadline - Date.now()) / 1000);
      const run = await this.getRun(agentId, runId, { waitSeconds: Math.max(0, Math.min(60, left)), signal: options.signal });
      if (STOPPED.has(run.status) || left <= 0) return run;
    }
  }

  /** Cancels a run (idempotent: a finished run is answered as it is). */
  cancel(agentId: string, runId: string): Promise<Run> {
    return this.json("POST", `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/cancel`, {});
  }

  /** `continue` (docs/run-tree.md), blocking: resume a paused run, or branch a finished one. */
  continueRun(agentId: string, runId: string, body: ContinueRequest, options: CallOptions = {}): Promise<Run> {
    return this.json(
      "POST",
      `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/continue`,
      { ...body, stream: false, background: false },
      options,
    );
  }

  /**
   * Sends `input` to the session's running turn (`on_busy: "steer"`): its model reads it before
   * its next call. Answered at once; if the run stops first, the steer becomes a queued run (`steered_into`).
   */
  steer(agentId: string, sessionId: string, input: RunRequest["input"], options: CallOptions = {}): Promise<Steered> {
    return this.json(
      "POST",
      `/v1/agents/${enc(agentId)}/runs`,
      { input, session_id: sessionId, on_busy: "steer", stream: false, background: false },
      options,
    );
  }

  /**
   * Answers a run paused for approvals (and, together, the results of any client tool pending in
   * the same step), blocking: approved calls run once, denied ones become a tool error the model reads.
   */
  approve(agentId: string, runId: string, approvals: Approval[], toolResults: ToolResult[] = [], options: CallOptions = {}): Promise<Run> {
    return this.continueRun(agentId, runId, { approvals, tool_results: toolResults }, options);
  }

  /** Resumes a paused run with the results of its client tools (`required_actions`), blocking. */
  submitToolResults(agentId: string, runId: string, toolResults: ToolResult[], options: CallOptions = {}): Promise<Run> {
    return this.continueRun(agentId, runId, { tool_results: toolResults }, options);
  }

  /**
   * Forks a finished run from one of its checkpoints (`"end"` by default) into a new run with a
   * new `input`, blocking. The fork becomes the session's head; the source run is unchanged.
   */
  fork(
    agentId: string,
    runId: string,
    body: { checkpoint?: string; input: ContinueRequest["input"]; metadata?: ContinueRequest["metadata"] },
    options: CallOptions = {},
  ): Promise<Run> {
    return this.continueRun(
      agentId,
      runId,
      { continue_from: body.checkpoint ?? "end", fork: true, input: body.input, metadata: body.metadata },
      options,
    );
  }

  listCheckpoints(agentId: string, runId: string): Promise<Checkpoint[]> {
    return this.json<{ data: Checkpoint[] }>("GET", `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/checkpoints`).then((page) => page.data);
  }

  // ── budgets ───────────────────────────────────────────────────────────

  /** Caps the spend of the tenant, an agent or a session per UTC day, month or in total (`max_cost_usd`, `max_tokens`). */
  createBudget(body: BudgetCreate, options: CallOptions = {}): Promise<Budget> {
    return this.json("POST", "/v1/budgets", body, options);
  }

  /** The tenant's budgets with their use, newest first (at most `limit`, 20 by default; then `cursor`). */
  listBudgets(options: { limit?: number; cursor?: string } = {}): Promise<{ data: Budget[]; next_cursor: string | null }> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor !== undefined) query.set("cursor", options.cursor);
    const search = query.size > 0 ? `?${query}` : "";
    return this.json("GET", `/v1/budgets${search}`);
  }

  getBudget(budgetId: string): Promise<Budget> {
    return this.json("GET", `/v1/budgets/${enc(budgetId)}`);
  }

  /** Changes a budget's limits (null removes one); the next model call is checked against them. */
  updateBudget(budgetId: string, patch: BudgetPatch): Promise<Budget> {
    return this.json("PATCH", `/v1/budgets/${enc(budgetId)}`, patch);
  }

  async deleteBudget(budgetId: string): Promise<void> {
    await this.send("DELETE", `/v1/budgets/${enc(budgetId)}`, undefined, {}, false);
  }

  // ── streams ───────────────────────────────────────────────────────────

  /**
   * Runs one turn and yields its events as they happen, until its terminal event. A dropped
   * connection is resumed from the last `seq` seen (`Last-Event-ID` on the run's events route):
   * every event is yielded once, in seq order.
   */
  stream(agentId: string, body: RunRequest, options: CallOptions = {}): AsyncGenerator<AgentryEvent> {
    const open = () => this.send("POST", `/v1/agents/${enc(agentId)}/runs`, { ...body, stream: true, background: false }, options, true);
    return this.resumable(agentId, open, null, 0, options.signal);
  }

  /** `continue` with `stream: true`, resumed like `stream`. */
  streamContinue(agentId: string, runId: string, body: ContinueRequest, options: CallOptions = {}): AsyncGenerator<AgentryEvent> {
    const open = () =>
      this.send(
        "POST",
        `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/continue`,
        { ...body, stream: true, background: false },
        options,
        true,
      );
    return this.resumable(agentId, open, null, 0, options.signal);
  }

  /**
   * Follows an existing run (a background one, or one a reload lost): its stored events after
   * `after` (default 0: all), then the live ones, until the terminal event of its current
   * stretch; resumed across dropped connections like `stream`.
   */
  streamEvents(agentId: string, runId: string, options: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<AgentryEvent> {
    const after = options.after ?? 0;
    return this.resumable(agentId, () => this.openEvents(agentId, runId, after, options.signal), runId, after, options.signal);
  }

  /** The stored events of a run after `after`, as JSON (no live ones). */
  listEvents(agentId: string, runId: string, options: { after?: number } = {}): Promise<AgentryEvent[]> {
    const after = options.after === undefined ? "" : `?after=${options.after}`;
    return this.json<{ data: AgentryEvent[] }>("GET", `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/events${after}`).then(
      (page) => page.data,
    );
  }

  private openEvents(agentId: string, runId: string, after: number, signal?: AbortSignal): Promise<Response> {
    const headers = { accept: "text/event-stream", "last-event-id": String(after) };
    return this.send("GET", `/v1/agents/${enc(agentId)}/runs/${enc(runId)}/events`, undefined, { signal }, true, headers);
  }

  private async *resumable(
    agentId: string,
    open: () => Promise<Response>,
    knownRunId: string | null,
    after: number,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<AgentryEvent> {
    let runId = knownRunId;
    let lastSeq = after;
    let failures = 0;
    let response = await open();
    for (;;) {
      let cause: unknown = new Error("the stream ended before the run's terminal event");
      try {
        if (!response.body) throw new Error("the answer has no body");
        for await (const event of sseEvents(response.body, signal)) {
          if (event.seq <= lastSeq) continue;
          runId ??= event.run_id;
          lastSeq = event.seq;
          failures = 0;
          yield event;
          if (event.run_id === runId && isTerminalEvent(event)) return;
        }
      } catch (error) {
        cause = error;
      }
      if (signal?.aborted) throw signal.reason;
      if (runId === null) throw new AgentryStreamError("the stream broke before its first event: there is no seq to resume from", cause);
      for (;;) {
        if (++failures > this.maxStreamRetries)
          throw new AgentryStreamError(`the stream of ${runId} could not be resumed after ${this.maxStreamRetries} tries`, cause);
        await delay(Math.min(this.retryDelayMs * 2 ** (failures - 1), 10_000));
        try {
          response = await this.openEvents(agentId, runId, lastSeq, signal);
          break;
        } catch (error) {
          // A 4xx other than 429 will not change on retry: the run is gone or the token no longer works.
          if (error instanceof AgentryError && error.status < 500 && error.status !== 429) throw error;
          if (signal?.aborted) throw signal.reason;
          cause = error;
        }
      }
    }
  }

  // ── webhooks ──────────────────────────────────────────────────────────

  /** Subscribes a URL to run lifecycle events; keep the answer's `secret` (`whsec_…`): it is shown only here. */
  createWebhook(body: WebhookCreate, options: Pick<CallOptions, "idempotencyKey"> = {}): Promise<CreatedWebhook> {
    return this.json("POST", "/v1/webhooks", body, options);
  }

  listWebhooks(options: PageOptions = {}): Promise<Page<Webhook>> {
    return this.json("GET", `/v1/webhooks${pageQuery(options)}`);
  }

  getWebhook(webhookId: string): Promise<Webhook> {
    return this.json("GET", `/v1/webhooks/${enc(webhookId)}`);
  }

  /** Deletes a webhook: its pending deliveries stop. */
  async deleteWebhook(webhookId: string): Promise<void> {
    await this.send("DELETE", `/v1/webhooks/${enc(webhookId)}`, undefined, {}, false);
  }

  /** A webhook's deliveries, newest first: attempts, status, the receiver's last answer, the next attempt. */
  listDeliveries(webhookId: string, options: PageOptions = {}): Promise<Page<WebhookDelivery>> {
    return this.json("GET", `/v1/webhooks/${enc(webhookId)}/deliveries${pageQuery(options)}`);
  }

  /** Sends a delivery again, with the same `webhook-id` (`202`). */
  redeliver(webhookId: string, deliveryId: string): Promise<{ delivery_id: string }> {
    return this.json("POST", `/v1/webhooks/${enc(webhookId)}/deliveries/${enc(deliveryId)}/redeliver`, {});
  }

  // ── transport ─────────────────────────────────────────────────────────

  private async json<T>(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    const response = await this.send(method, path, body, options, false);
    return (await response.json()) as T;
  }

  /** Sends one request; a non-2xx answer is thrown as an AgentryError. */
  private async send(
    method: string,
    path: string,
    body: unknown,
    options: CallOptions,
    sse: boolean,
    extra: Record<string, string> = {},
  ): Promise<Response> {
    const headers = new Headers({
      authorization: `Bearer ${this.token}`,
      accept: sse ? "text/event-stream" : "application/json",
      ...extra,
    });
    if (body !== undefined) headers.set("content-type", "application/json");
    if (options.idempotencyKey) headers.set("idempotency-key", options.idempotencyKey);
    const request = new Request(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
    });
    const response = await this.fetcher(request);
    if (!response.ok) throw await AgentryError.from(response);
    return response;
  }
}

const enc = encodeURIComponent;

function pageQuery({ limit, cursor }: PageOptions): string {
  const query = new URLSearchParams();
  if (limit !== undefined) query.set("limit", String(limit));
  if (cursor !== undefined) query.set("cursor", cursor);
  const text = query.toString();
  return text ? `?${text}` : "";
}
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
