/**
 * Provider-neutral transcript messages. Adapters translate them to each provider's wire
 * format at call time, so a session can change provider between turns.
 */

/** Text. `provider_data` keeps the provider's own details of it (OpenAI Responses: the `msg_` id of its output message). */
export type TextBlock = { type: "text"; text: string; provider_data?: Record<string, unknown> };

/** A call of a tool by the model. `provider_data` keeps opaque provider details (ids, signatures). */
export type ToolCallBlock = {
  type: "tool_call";
  tool_call_id: string;
  name: string;
  arguments: unknown;
  provider_data?: Record<string, unknown>;
};

export type ToolResultBlock = {
  type: "tool_result";
  tool_call_id: string;
  output: string;
  is_error: boolean;
};

/**
 * Model reasoning. Anthropic thinking blocks must go back unchanged in tool loops, so the
 * signature (or redacted data) is kept in `provider_data`; other providers drop it.
 */
export type ReasoningBlock = {
  type: "reasoning";
  text: string;
  provider?: string;
  provider_data?: Record<string, unknown>;
};

type MediaFields = {
  media_type: string;
  media_id: string;
  /** Decoded bytes. */
  size?: number;
  /** A file's name. */
  name?: string;
  /** An image's size in pixels, when its header could be read (absent on media stored before it was measured). */
  width?: number;
  height?: number;
  /** A PDF's pages, when they could be counted. */
  pages?: number;
};

/**
 * An image or file of a user's input. The bytes are in R2 (`tenant/session_id/media_id`,
 * src/media); adapters load them before the call and convert them to the provider's format.
 */
export type MediaBlock = ({ type: "image" } & MediaFields) | ({ type: "file" } & MediaFields);

export type Block = TextBlock | MediaBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock;

export type Role = "user" | "assistant" | "tool";

export type Message = { role: Role; content: Block[] };

/** Token counts of one model call, the same on every provider (docs/api.md, Events). */
export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
};
