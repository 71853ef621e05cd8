import { asApiError, type ApiError } from "../errors";

/** The paths that answer errors in OpenAI's shape instead of docs/api.md's. */
export const isOpenAiPath = (path: string) => path === "/v1/responses" || path.startsWith("/v1/responses/");

/** OpenAI's `error.type` for each HTTP status Agentry answers on this surface. */
function openAiType(status: number): string {
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's `error.code` for Agentry's error types; the others keep Agentry's name (`details.code` wins). */
const openAiCodes: Partial<Record<ApiError["type"], string>> = {
  unauthorized: "invalid_api_key",
  rate_limited: "rate_limit_exceeded",
  internal: "server_error",
};

function codeOf(error: ApiError): string {
  const given = error.details.code;
  return typeof given === "string" ? given : (openAiCodes[error.type] ?? error.type);
}

/** A field path in OpenAI's notation (`input[0].content[1].image_url`); null for the body as a whole. */
function openAiPath(path: unknown): string | null {
  if (typeof path !== "string" || path === "" || path === "body") return null;
  return path.split(".").reduce((param, part) => (/^\d+$/.test(part) ? `${param}[${part}]` : param ? `${param}.${part}` : part), "");
}

type Field = { path?: unknown; message?: unknown };

const fieldsOf = (error: ApiError): Field[] => (Array.isArray(error.details.fields) ? (error.details.fields as Field[]) : []);

/** The first field an error names, as OpenAI's `param`. */
const paramOf = (error: ApiError): string | null => openAiPath(fieldsOf(error)[0]?.path);

/** The message, naming each field at fault with its reason (`tools[0].strict: …`), as OpenAI's messages do. */
function messageOf(error: ApiError): string {
  const fields = fieldsOf(error).filter((field) => typeof field.message === "string");
  if (fields.length === 0) return error.message;
  return fields.map((field) => `${openAiPath(field.path) ?? "body"}: ${String(field.message)}`).join("; ");
}

/**
 * Any error of a `/v1/responses` route in OpenAI's shape `{ error: { message, type, param, code } }`
 * with the status Agentry gives it. A busy session is `409` with `x-should-retry: false`: the
 * official SDKs retry a 409 unless the server says not to, and the turn would still be busy; so
 * is a spent budget's `429 budget_exceeded`.
 */
export function openAiErrorResponse(thrown: unknown): Response {
  const error = asApiError(thrown);
  const headers = new Headers(error.headers);
  // A spent budget does not come back by retrying at once (the SDKs retry any 429 otherwise).
  if (error.status === 409 || error.type === "budget_exceeded") headers.set("x-should-retry", "false");
  const body = { error: { message: messageOf(error), type: openAiType(error.status), param: paramOf(error), code: codeOf(error) } };
  return Response.json(body, { status: error.status, headers });
}
