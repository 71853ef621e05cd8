// The core client and the one resource used: importing the SDK's root pulls in every resource.
import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import { loopWithoutThinking, toAnthropicMessages, toAnthropicSystem, toAnthropicTools } from "./anthropic-messages";
import { anthropicOutputFormat } from "./anthropic-output";
import { MessageAccumulator } from "./anthropic-stream";
import { anthropicToolChoice } from "./call-settings";
import { callError, firstTokenClock, guardStream, requestOptions } from "./call-support";
import { ModelCallAbortedError, streamCutError } from "./errors";
import { fencedFetch, secretsOf, type SdkClientConfig } from "./sdk-config";
import { ProviderError, type ModelCallOptions, type ModelProvider, type ModelRequest, type ModelResponse } from "./types";

/** The most messages one Messages request may carry. */
const MAX_MESSAGES = 100_000;

/** The Anthropic Messages API, streamed, through `@anthropic-ai/sdk`. */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";
  readonly #messages: Messages;
  readonly #secrets: string[];

  constructor(config: SdkClientConfig) {
    this.#secrets = secretsOf(config);
    // Every option explicit, so the SDK reads nothing from `process.env`; retries are Agentry's.
    this.#messages = new Messages(
      new BaseAnthropic({
        apiKey: config.apiKey,
        baseURL: config.baseURL,
        fetch: config.fetch ?? fencedFetch,
        defaultHeaders: config.headers,
        maxRetries: 0,
        webhookKey: null,
      }),
    );
  }

  async call(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    const clock = firstTokenClock();
    try {
      const stream = await this.#messages.create(anthropicParams(request), requestOptions(request, options.signal));
      const state = new MessageAccumulator((event) => {
        clock.mark();
        options.onEvent?.(event);
      }, clock.mark);
      for await (const event of guardStream(stream)) {
        if (options.signal?.aborted) break;
        state.add(event);
      }
      if (options.signal?.aborted) throw new ModelCallAbortedError();
      if (!state.stopped) throw streamCutError();
      return { ...state.result(), time_to_first_token_ms: clock.value() };
    } catch (error) {
      throw callError(error, options.signal, this.#secrets);
    }
  }
}

/**
 * The Messages request of one model call. Breakpoints: the system prompt and, for a session's
 * calls (`cache_key`), the last message — two of the four Anthropic allows — so each step and
 * turn reads the prefix the previous one wrote. `satisfies` the SDK's own request type, so a
 * field it does not know fails the type check (spread-in fields are not checked for being
 * unknown: keep each one to a field the type names). No sampling settings: the Messages API
 * version the SDK speaks (2026-10-21) refuses `temperature`, `top_p` and `top_k`. A call inside
 * a tool loop whose assistant turn has no thinking block goes without `thinking`. Over 100,000
 * messages, a permanent error before anything is sent.
 */
export function anthropicParams(request: ModelRequest) {
  const tools = request.tools.length > 0;
  const settings = request.settings;
  const toolChoice = anthropicToolChoice(settings, tools);
  const messages = toAnthropicMessages(request.messages, request.media, { tools, cache: request.cache_key !== undefined });
  if (messages.length > MAX_MESSAGES) {
    const text = `the conversation has ${messages.length} messages; Anthropic takes at most ${MAX_MESSAGES} in one request (enable compaction)`;
    throw new ProviderError("provider_error", text, false);
  }
  const thinking = settings?.thinking && !loopWithoutThinking(messages) ? settings.thinking : null;
  return {
    model: request.model,
    max_tokens: request.max_output_tokens,
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(thinking ? { thinking } : {}),
    ...(settings?.stop ? { stop_sequences: settings.stop } : {}),
    ...(settings?.end_user !== undefined ? { metadata: { user_id: settings.end_user } } : {}),
    messages,
    ...(request.instructions ? { system: toAnthropicSystem(request.instructions) } : {}),
    ...(tools ? { tools: toAnthropicTools(request.tools) } : {}),
    ...(request.output_schema ? { output_config: { format: anthropicOutputFormat(request.model, request.output_schema) } } : {}),
    stream: true,
  } satisfies MessageCreateParamsStreaming;
}
