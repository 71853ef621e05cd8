import type OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { chatToolChoice } from "./call-settings";
import { chatToolsNeedNoReasoning } from "./openai-reasoning";
import { callError, firstTokenClock, guardStream, requestOptions } from "./call-support";
import { ModelCallAbortedError, streamCutError } from "./errors";
import { createOpenAIClient } from "./openai-client";
import { toChatMessages, toChatTools } from "./openai-chat-messages";
import { ChatAccumulator } from "./openai-chat-stream";
import { secretsOf, type SdkClientConfig } from "./sdk-config";
import { isStrictSchema } from "./strict-schema";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse } from "./types";

/**
 * The Chat Completions request of one model call. `max_completion_tokens`, not the deprecated
 * `max_tokens` that OpenAI's reasoning models refuse (docs/providers.md, Chat Completions).
 * `satisfies` the SDK's own request type, so a field the SDK does not know fails the type check.
 */
export function toChatRequest(request: ModelRequest) {
  // Absent options are `undefined` (dropped from the JSON body), not spread in, so that every
  // field stays inside the literal that `satisfies` checks for unknown keys.
  const schema = request.output_schema;
  const settings = request.settings;
  const tools = request.tools.length > 0;
  return {
    model: request.model,
    messages: toChatMessages(request.instructions, request.messages, request.media),
    max_completion_tokens: request.max_output_tokens,
    tools: tools ? toChatTools(request.tools) : undefined,
    tool_choice: tools ? chatToolChoice(settings?.tool_choice) : undefined,
    parallel_tool_calls: tools ? settings?.parallel_tool_calls : undefined,
    temperature: settings?.temperature,
    top_p: settings?.top_p,
    // gpt-5.4 and later take function tools on Chat Completions only without reasoning.
    reasoning_effort: settings?.reasoning?.effort ?? (tools && chatToolsNeedNoReasoning(request.model) ? "none" : undefined),
    stop: settings?.stop,
    safety_identifier: settings?.end_user,
    prompt_cache_key: request.cache_key || undefined,
    response_format: schema ? { type: "json_schema", json_schema: { name: "output", schema, strict: isStrictSchema(schema) } } : undefined,
    stream: true,
    stream_options: { include_usage: true },
  } satisfies ChatCompletionCreateParamsStreaming;
}

/** Chat Completions, streamed with usage, through `openai`: for OpenAI and OpenAI-compatible endpoints. */
export class OpenAIChatProvider implements ModelProvider {
  readonly name = "openai-chat";
  readonly #client: OpenAI;
  readonly #secrets: string[];

  constructor(config: SdkClientConfig) {
    this.#secrets = secretsOf(config);
    this.#client = createOpenAIClient(config);
  }

  async call(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    const clock = firstTokenClock();
    try {
      const stream = await this.#client.chat.completions.create(toChatRequest(request), requestOptions(request, options.signal));
      const answer = new ChatAccumulator((event) => {
        clock.mark();
        options.onEvent?.(event);
      }, clock.mark);
      for await (const chunk of guardStream<ChatCompletionChunk>(stream)) {
        if (options.signal?.aborted) break;
        answer.add(chunk);
      }
      if (options.signal?.aborted) throw new ModelCallAbortedError();
      // The SDK consumes `[DONE]` without showing it; the chunk with a finish_reason is the
      // last one an answer must have (the usage chunk is optional on compatible endpoints).
      if (answer.finish === null) throw streamCutError();
      return { ...answer.result(), time_to_first_token_ms: clock.value() };
    } catch (error) {
      throw callError(error, options.signal, this.#secrets);
    }
  }
}
