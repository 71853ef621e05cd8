import OpenAI from "openai";
import type {
  Response,
  ResponseCreateParamsStreaming,
  ResponseOutputItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import { openAiReasoning, responsesToolChoice } from "./call-settings";
import { callError, firstTokenClock, guardStream, requestOptions } from "./call-support";
import { ModelCallAbortedError, streamCutError } from "./errors";
import { createOpenAIClient } from "./openai-client";
import { isReasoningModel } from "./openai-reasoning";
import { toResponsesInput, toResponsesTools } from "./openai-responses-input";
import { deltaOf, normalizeUsage, stopReason, toBlocks } from "./openai-responses-output";
import { secretsOf, type SdkClientConfig } from "./sdk-config";
import { isStrictSchema } from "./strict-schema";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse } from "./types";

/** The OpenAI Responses API, streamed, through `openai`. */
export class OpenAIResponsesProvider implements ModelProvider {
  readonly name = "openai";
  readonly #client: OpenAI;
  readonly #secrets: string[];

  constructor(config: SdkClientConfig) {
    this.#secrets = secretsOf(config);
    this.#client = createOpenAIClient(config);
  }

  async call(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    const clock = firstTokenClock();
    try {
      const reasoning = isReasoningModel(request.model);
      const settings = request.settings;
      const tools = request.tools.length > 0;
      // Every field named, none spread in, so the SDK's own request type checks each one.
      const body = {
        model: request.model,
        input: toResponsesInput(request.messages, request.media, { reasoning }),
        max_output_tokens: request.max_output_tokens,
        // Stateless: the transcript is the history, so nothing depends on OpenAI keeping items;
        // reasoning goes back as its encrypted content (docs/providers.md).
        store: false,
        include: reasoning ? ["reasoning.encrypted_content"] : undefined,
        instructions: request.instructions || undefined,
        tools: tools ? toResponsesTools(request.tools) : undefined,
        tool_choice: tools ? responsesToolChoice(settings?.tool_choice) : undefined,
        parallel_tool_calls: tools ? settings?.parallel_tool_calls : undefined,
        temperature: settings?.temperature,
        top_p: settings?.top_p,
        reasoning: openAiReasoning(settings),
        safety_identifier: settings?.end_user,
        prompt_cache_key: request.cache_key || undefined,
        text: request.output_schema
          ? {
              format: { type: "json_schema", name: "output", schema: request.output_schema, strict: isStrictSchema(request.output_schema) },
            }
          : undefined,
        stream: true,
      } satisfies ResponseCreateParamsStreaming;
      const stream = await this.#client.responses.create(body, requestOptions(request, options.signal));
      const done = new Map<number, ResponseOutputItem>();
      let final: Response | null = null;
      for await (const event of guardStream<ResponseStreamEvent>(stream)) {
        if (options.signal?.aborted) break;
        const delta = deltaOf(event);
        if (delta && (delta.kind === "tool" || delta.text)) clock.mark();
        if (delta && delta.kind !== "tool" && delta.text) options.onEvent?.({ type: delta.kind, text: delta.text });
        if (event.type === "response.output_item.done") done.set(event.output_index, event.item);
        if (event.type === "response.completed" || event.type === "response.incomplete") final = event.response;
        if (event.type === "response.failed") {
          throw new OpenAI.APIError(undefined, event.response.error ?? {}, "response failed", undefined);
        }
        if (event.type === "error") {
          throw new OpenAI.APIError(undefined, { code: event.code, message: event.message }, "stream error", undefined);
        }
      }
      if (options.signal?.aborted) throw new ModelCallAbortedError();
      if (!final) throw streamCutError();
      // `response.completed` carries the whole output; the items seen one by one are the fallback.
      const seen = [...done.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
      const items = final.output.length > 0 ? final.output : seen;
      const content = items.flatMap(toBlocks);
      return {
        content,
        usage: normalizeUsage(final.usage),
        ...stopReason({ ...final, output: items }, content),
        time_to_first_token_ms: clock.value(),
      };
    } catch (error) {
      throw callError(error, options.signal, this.#secrets);
    }
  }
}
