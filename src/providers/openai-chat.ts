import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { callError, firstTokenClock, guardStream, requestOptions } from "./call-support";
import { ModelCallAbortedError, streamCutError } from "./errors";
import { createOpenAIClient } from "./openai-client";
import { toChatMessages, toChatTools } from "./openai-chat-messages";
import { ChatAccumulator } from "./openai-chat-stream";
import { secretsOf, type SdkClientConfig } from "./sdk-config";
import { isStrictSchema } from "./strict-schema";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse } from "./types";

/**
 * Chat Completions, streamed with usage, through `openai`: for OpenAI-compatible endpoints.
 * `max_tokens` (not `max_completion_tokens`) because compatible endpoints know it.
 */
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
      const stream = await this.#client.chat.completions.create(
        {
          model: request.model,
          messages: toChatMessages(request.instructions, request.messages, request.media),
          max_tokens: request.max_output_tokens,
          ...(request.tools.length > 0 ? { tools: toChatTools(request.tools) } : {}),
          ...(request.cache_key ? { prompt_cache_key: request.cache_key } : {}),
          ...(request.output_schema
            ? {
                response_format: {
                  type: "json_schema",
                  json_schema: { name: "output", schema: request.output_schema, strict: isStrictSchema(request.output_schema) },
                },
              }
            : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        requestOptions(request, options.signal),
      );
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
