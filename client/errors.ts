/** A field the API named in a 400 (`details.fields[]`). */
export type FieldError = { path: string; message: string };

/**
 * An error answer of the API (`{ "error": { "type", "message", "details" } }`) as a thrown value:
 * `status` is the HTTP status, `type` the API's error type (`invalid_request`, `not_found`,
 * `session_busy`, …), `fields` the fields a 400 names (empty otherwise).
 */
export class AgentryError extends Error {
  override readonly name = "AgentryError";
  readonly status: number;
  readonly type: string;
  readonly details: Record<string, unknown>;
  /** The `X-Request-Id` of the answer, to quote when reporting it. */
  readonly requestId: string | null;
  readonly fields: FieldError[];

  constructor(status: number, type: string, message: string, details: Record<string, unknown> = {}, requestId: string | null = null) {
    super(message);
    this.status = status;
    this.type = type;
    this.details = details;
    this.requestId = requestId;
    const fields = details.fields;
    this.fields = Array.isArray(fields) ? (fields as FieldError[]) : [];
  }

  /** The first field the API named (`"input"`, `"tools[0].url"`, …), or null. */
  get field(): string | null {
    return this.fields[0]?.path ?? null;
  }

  /** Builds the error of a non-2xx response, whatever its body (a proxy's HTML page becomes `http_error`). */
  static async from(response: Response): Promise<AgentryError> {
    const requestId = response.headers.get("x-request-id");
    const text = await response.text();
    try {
      const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown; details?: unknown } };
      const error = body.error;
      if (error && typeof error.type === "string") {
        const details = error.details && typeof error.details === "object" ? (error.details as Record<string, unknown>) : {};
        return new AgentryError(response.status, error.type, String(error.message ?? error.type), details, requestId);
      }
    } catch {
      // not JSON: fall through
    }
    return new AgentryError(response.status, "http_error", `HTTP ${response.status}: ${text.slice(0, 200)}`, {}, requestId);
  }
}

/** The stream of a run broke and could not be resumed (no event seen yet to resume from, or too many tries). */
export class AgentryStreamError extends Error {
  override readonly name = "AgentryStreamError";
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}
