import { InvalidRequest } from "./conversation";
import { isObject, type JsonObject } from "./values";

/**
 * The body fields of `POST /v1/messages` (SDK 1.10 `MessageCreateParamsBase`), and those of its
 * beta (`BetaMessageCreateParams`: the offline model does not check the `anthropic-beta` header).
 * API version 2026-10-21 removed `temperature`, `top_p` and `top_k`: they are unknown fields now.
 */
const FIELDS = new Set([
  "model",
  "max_tokens",
  "messages",
  "cache_control",
  "container",
  "diagnostics",
  "inference_geo",
  "metadata",
  "output_config",
  "service_tier",
  "speed",
  "stop_sequences",
  "stream",
  "system",
  "thinking",
  "tool_choice",
  "tools",
  "user_profile_id",
  "workspace_id",
  "billing_policy",
  "compaction",
  "context_management",
  "fallback_credit_token",
  "fallbacks",
  "mcp_servers",
  "output_format",
  "thread",
]);

const EFFORTS = ["low", "medium", "high", "xhigh", "max"];
const MAX_MESSAGES = 100_000;

/** The checks of the request's fields the API makes before it reads any message. */
export function checkFields(body: JsonObject, messages: unknown[]): void {
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) throw new InvalidRequest(`${key}: Extra inputs are not permitted`);
  }
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens)) throw new InvalidRequest("max_tokens: Field required");
  if (maxTokens < 0) throw new InvalidRequest("max_tokens: Input should be greater than or equal to 0");
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  // 0 only fills the prompt cache: there is no output for a forced tool call to be in.
  if (maxTokens === 0 && (choice === "any" || choice === "tool"))
    throw new InvalidRequest("max_tokens: must be at least 1 when tool_choice forces tool use");
  if (messages.length === 0) throw new InvalidRequest("messages: at least one message is required");
  if (messages.length > MAX_MESSAGES)
    throw new InvalidRequest(`messages: List should have at most ${MAX_MESSAGES} items after validation, not ${messages.length}`);
  const effort = isObject(body.output_config) ? body.output_config.effort : undefined;
  if (effort !== undefined && !EFFORTS.includes(String(effort))) {
    throw new InvalidRequest("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'");
  }
}
