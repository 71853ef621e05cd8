import type { ReasoningSettings, ThinkingSettings, ToolChoice } from "../agents/model-settings";
import type { Block, Message, Usage } from "../core/messages";

export type ProviderName = "anthropic" | "openai" | "openai-chat";

/** A tool as the model sees it. */
export type ToolSpec = {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  /** Arguments must fit `parameters` (OpenAI's strict function calling; checked by Agentry too). */
  strict?: boolean;
};

/** The tuned settings of one call (src/agents/model-settings.ts); absent: the provider's default. */
export type CallSettings = {
  temperature?: number;
  top_p?: number;
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  reasoning?: ReasoningSettings;
  /** Anthropic extended thinking. */
  thinking?: ThinkingSettings;
  /** Sequences that end the answer (Anthropic `stop_sequences`, Chat `stop`). */
  stop?: string[];
  /** The end user, for the provider's abuse monitoring (OpenAI `safety_identifier`, Anthropic `metadata.user_id`). */
  end_user?: string;
};

/** The bytes of one media block, loaded from R2 for a call: base64 of `media_type`. */
export type MediaData = { media_type: string; data: string };

/** One model call, provider-neutral. */
export type ModelRequest = {
  model: string;
  instructions?: string;
  messages: Message[];
  tools: ToolSpec[];
  max_output_tokens: number;
  /** 1-based attempt of this model call; sent as `x-agentry-attempt`. */
  attempt: number;
  /** A stable key (the session) for prompt caching: Anthropic cache_control, OpenAI prompt_cache_key. */
  cache_key?: string;
  /** JSON Schema (root type object) the answer must follow: the provider's structured output. */
  output_schema?: Record<string, unknown>;
  /** Sampling, tool choice and reasoning settings. */
  settings?: CallSettings;
  /** The bytes of the messages' image and file blocks, by media_id; a block without its bytes is sent as a text note. */
  media?: Record<string, MediaData>;
};

/** What an adapter reports while the answer streams in. */
export type ModelStreamEvent = { type: "text_delta"; text: string } | { type: "reasoning_delta"; text: string };

/**
 * Why a model answer ended, provider-neutral (docs/providers.md, Stop reasons): `end_turn` and
 * `tool_calls` are answers; `max_tokens` (cut at the request's output limit), `context_window`
 * (cut where the context window filled), `refusal` (the model or the provider's filter declined)
 * and `pause` (the provider paused a long turn) end the run with an error; `other` is unknown.
 */
export type StopReason = "end_turn" | "tool_calls" | "max_tokens" | "context_window" | "refusal" | "pause" | "other";

/** The whole answer of one model call. */
export type ModelResponse = {
  /** The assistant message's blocks: text, reasoning, tool calls, in the provider's order. */
  content: Block[];
  usage: Usage;
  stop_reason: StopReason;
  /** The provider's own stop reason, and any explanation it gave (a refusal's), for the run's error message. */
  stop_detail?: string;
  /** Milliseconds from the request until the first streamed token, when there was one. */
  time_to_first_token_ms: number | null;
};

export type ModelCallOptions = {
  signal?: AbortSignal;
  onEvent?: (event: ModelStreamEvent) => void;
};

/** A provider behind one interface: stream one model call, return the normalized answer. */
export interface ModelProvider {
  readonly name: ProviderName;
  call(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
}

export type ErrorType =
  | "provider_error"
  | "rate_limited"
  | "overloaded"
  | "auth_error"
  | "quota_exceeded"
  | "context_window_exceeded"
  | "budget_exceeded"
  | "output_invalid"
  | "output_truncated"
  | "refused"
  | "max_steps_exceeded"
  | "tool_error"
  | "internal";

/** A failed model call, classified. Thrown by adapters. */
export class ProviderError extends Error {
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
    /** The provider's `retry-after` / `retry-after-ms`, in milliseconds, when it sent one. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}
