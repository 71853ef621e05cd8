import type { ZodError } from "zod";

/** Every `error.type` the API answers (docs/api.md, Errors). */
export const API_ERROR_TYPES = [
  "invalid_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "already_exists",
  "session_busy",
  "queue_full",
  "run_not_continuable",
  "idempotency_conflict",
  "credential_in_use",
  "payload_too_large",
  "rate_limited",
  "budget_exceeded",
  "provider_error",
  "internal",
] as const;

export type ApiErrorType = (typeof API_ERROR_TYPES)[number];

const statusOf: Record<ApiErrorType, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  already_exists: 409,
  session_busy: 409,
  queue_full: 409,
  run_not_continuable: 409,
  idempotency_conflict: 409,
  credential_in_use: 409,
  payload_too_large: 413,
  rate_limited: 429,
  budget_exceeded: 429,
  provider_error: 502,
  internal: 500,
};

export type FieldError = { path: string; message: string };

/** An error that carries its own JSON answer (docs/api.md, Errors); `app.onError` renders it. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly type: ApiErrorType,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = statusOf[type];
  }

  toBody() {
    return { error: { type: this.type, message: this.message, details: this.details } };
  }

  toResponse(): Response {
    return Response.json(this.toBody(), { status: this.status, headers: this.headers });
  }
}

/** A 400 naming the fields at fault. */
export const invalidFields = (fields: FieldError[], message?: string) =>
  new ApiError("invalid_request", message ?? `Invalid request: ${fields.map((f) => f.path || "body").join(", ")}`, {
    fields,
  });

/** Throws a 400 naming every field at fault, with each problem in the message; nothing when there is none. */
export function assertNoProblems(problems: FieldError[]): void {
  if (problems.length > 0) throw invalidFields(problems, problems.map((p) => `${p.path} ${p.message}`).join("; "));
}

export const notFound = (what: string, id: string) => new ApiError("not_found", `${what} ${id} not found`);

type Issue = ZodError["issues"][number];

/** Turns a zod error into docs/api.md's `details.fields`. */
export function fieldsOf(error: ZodError, prefix: string[] = []): FieldError[] {
  return error.issues.flatMap((issue) => fieldsOfIssue(issue, prefix));
}

function fieldsOfIssue(issue: Issue, prefix: string[]): FieldError[] {
  const path = [...prefix, ...issue.path.map(String)];
  if (issue.code === "invalid_union") {
    // `string | Part[]`: name the field inside the one branch that got past the type check (`input.1.media_type`).
    const reached = issue.errors.filter((branch) => !branch.every((inner) => inner.path.length === 0 && inner.code === "invalid_type"));
    const [only] = reached;
    if (reached.length === 1 && only) return only.flatMap((inner) => fieldsOfIssue(inner, path));
  }
  // A record key that failed its own schema (an extra header's name): that schema's message.
  if (issue.code === "invalid_key") return issue.issues.flatMap((inner) => fieldsOfIssue(inner, path));
  const unknownKeys = issue.code === "unrecognized_keys" ? issue.keys : [];
  if (unknownKeys.length > 0) {
    return [
      {
        path: [...path, unknownKeys[0]].join("."),
        message: `unknown field${unknownKeys.length > 1 ? "s" : ""}: ${unknownKeys.join(", ")}`,
      },
    ];
  }
  return [{ path: path.join("."), message: issue.message }];
}

/** What a caught value says: an Error's message, or the value as text. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
