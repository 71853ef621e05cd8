import { extraHeadersSchema, type ExtraHeaders } from "../credentials/headers";
import { ProviderError } from "./types";

let parsed: { text: string; headers: ExtraHeaders } | null = null;

/**
 * The operator's `PROVIDER_HEADERS` (a JSON object of header names to values, e.g. an AI
 * Gateway's `cf-aig-authorization`), sent only to the operator's endpoints. A value that is not
 * such an object is an `auth_error` for the call, naming the variable, never its content.
 */
export function operatorHeaders(env: { PROVIDER_HEADERS?: string }): ExtraHeaders | ProviderError {
  const text = env.PROVIDER_HEADERS?.trim();
  if (!text) return {};
  if (parsed?.text === text) return parsed.headers;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const result = extraHeadersSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (${issue.path.join(".")}: ${issue.message})` : "";
    return new ProviderError("auth_error", `PROVIDER_HEADERS is not a JSON object of allowed header names to values${where}`, false);
  }
  parsed = { text, headers: result.data };
  return result.data;
}
