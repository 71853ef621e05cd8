import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { gifOfFrames } from "./support/gif";
import { pdfOfPages, pngOfSize, TINY_PNG } from "./support/media";

/** What the offline Responses API answers a body (model gpt-5-mini unless the body names one). */
async function post(body: Record<string, unknown>) {
  const response = await handleMockModel(
    new Request("http://mock.local/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "gpt-5-mini", input: "hi", ...body }),
      headers: { authorization: "Bearer k" },
    }),
  );
  return { status: response.status, body: (await response.json()) as unknown };
}

/** OpenAI's 400 with its message, param and code. */
const refused = (message: string, param: string | null, code: string | null = null) => ({
  status: 400,
  body: { error: { message, type: "invalid_request_error", param, code } },
});

const tooLong = (param: string, max: number, length: number) =>
  refused(
    `Invalid '${param}': string too long. Expected a string with maximum length ${max}, but got a string with length ${length} instead.`,
    param,
    "string_above_max_length",
  );

const userWith = (...content: unknown[]) => [{ role: "user", content }];
const image = (base64: string, detail = "auto", type = "image/png") => ({
  type: "input_image",
  image_url: `data:${type};base64,${base64}`,
  detail,
});
const fn = (name: string, extra: Record<string, unknown> = {}) => ({
  type: "function",
  name,
  parameters: { type: "object", properties: {} },
  ...extra,
});

describe("offline model: the Responses API's field limits", () => {
  it("R4/R5: temperature, top_p and top_logprobs out of range", async () => {
    expect(await post({ model: "gpt-4.1", temperature: 3 })).toEqual(
      refused(
        "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
        "temperature",
        "decimal_above_max_value",
      ),
    );
    expect(await post({ model: "gpt-4.1", temperature: -0.5 })).toEqual(
      refused(
        "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -0.5 instead.",
        "temperature",
        "decimal_below_min_value",
      ),
    );
    expect(await post({ model: "gpt-4.1", top_p: 1.5 })).toEqual(
      refused(
        "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.5 instead.",
        "top_p",
        "decimal_above_max_value",
      ),
    );
    expect(await post({ model: "gpt-4.1", top_logprobs: 21 })).toEqual(
      refused(
        "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got 21 instead.",
        "top_logprobs",
        "integer_above_max_value",
      ),
    );
    expect((await post({ model: "gpt-4.1", temperature: 2, top_p: 0 })).status).toBe(200);
  });

  it("R6/R7/R10: gpt-6 models reason: sampling is refused, reasoning and encrypted content taken", async () => {
    expect(await post({ model: "gpt-6-sol", temperature: 0.5 })).toEqual(
      refused("Unsupported parameter: 'temperature' is not supported with this model.", "temperature", "unsupported_parameter"),
    );
    const fine = await post({ model: "gpt-6-sol", reasoning: { effort: "high" }, include: ["reasoning.encrypted_content"], store: false });
    expect(fine.status).toBe(200);
  });

  it("R8: a reasoning effort the model does not take, or no effort at all", async () => {
    expect(await post({ model: "gpt-5.1", reasoning: { effort: "minimal" } })).toEqual(
      refused(
        "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'.",
        "reasoning.effort",
        "unsupported_value",
      ),
    );
    expect(await post({ model: "o3", reasoning: { effort: "none" } })).toEqual(
      refused(
        "Unsupported value: 'none' is not supported with the 'o3' model. Supported values are: 'low', 'medium', and 'high'.",
        "reasoning.effort",
        "unsupported_value",
      ),
    );
    expect(await post({ model: "gpt-5-pro", reasoning: { effort: "low" } })).toEqual(
      refused(
        "Unsupported value: 'low' is not supported with the 'gpt-5-pro' model. Supported values are: 'high'.",
        "reasoning.effort",
        "unsupported_value",
      ),
    );
    expect(await post({ reasoning: { effort: "extreme" } })).toEqual(
      refused(
        "Invalid value: 'extreme'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'.",
        "reasoning.effort",
        "invalid_value",
      ),
    );
    expect((await post({ model: "gpt-5", reasoning: { effort: "minimal" } })).status).toBe(200);
  });

  it("R9: an include value the API does not know", async () => {
    expect(await post({ include: ["reasoning.encrypted_content", "output_text.logprobs"] })).toEqual(
      refused(
        "Invalid value: 'output_text.logprobs'. Supported values are: 'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs', 'reasoning.encrypted_content', and 'message.output_text.logprobs'.",
        "include[1]",
        "invalid_value",
      ),
    );
  });

  it("R14: a call_id empty or over 64 characters", async () => {
    const long = `call_${"x".repeat(60)}`;
    const input = [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: long, name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: long, output: "ok" },
    ];
    expect(await post({ input, tools: [fn("f")] })).toEqual(tooLong("input[1].call_id", 64, 65));
    const empty = [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: "", name: "f", arguments: "{}" },
    ];
    expect(await post({ input: empty, tools: [fn("f")] })).toEqual(
      refused("Invalid 'input[1].call_id': empty string.", "input[1].call_id", "empty_string"),
    );
  });

  it("R15/R16: a text, tool output or inline image over its length", async () => {
    const huge = "x".repeat(10_485_761);
    expect(await post({ input: userWith({ type: "input_text", text: huge }) })).toEqual(
      tooLong("input[0].content[0].text", 10_485_760, 10_485_761),
    );
    const input = [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: huge },
    ];
    expect(await post({ input, tools: [fn("f")] })).toEqual(tooLong("input[2].output", 10_485_760, 10_485_761));
    const url = `data:image/png;base64,${"A".repeat(20_971_521 - 22)}`;
    const withImage = [
      ...input.slice(0, 2),
      { type: "function_call_output", call_id: "call_1", output: [{ type: "input_image", image_url: url }] },
    ];
    expect(await post({ input: withImage, tools: [fn("f")] })).toEqual(tooLong("input[2].output[0].image_url", 20_971_520, 20_971_521));
  });

  it("R18/R19: a safety_identifier over 64 characters; metadata over its limits", async () => {
    expect(await post({ safety_identifier: "u".repeat(65) })).toEqual(tooLong("safety_identifier", 64, 65));
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(await post({ metadata })).toEqual(
      refused(
        "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead.",
        "metadata",
        "object_above_max_properties",
      ),
    );
    expect(await post({ metadata: { note: "v".repeat(513) } })).toEqual(tooLong("metadata.note", 512, 513));
  });

  it("R20/R21/R22: more than 128 tools, a bad tool name, tool_choice without tools", async () => {
    const tools = Array.from({ length: 129 }, (_, i) => fn(`t${i}`));
    expect(await post({ tools })).toEqual(
      refused(
        "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129 instead.",
        "tools",
        "array_above_max_length",
      ),
    );
    expect((await post({ tools: tools.slice(0, 128) })).status).toBe(200);
    expect(await post({ tools: [fn("get time")] })).toEqual(
      refused(
        "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "tools[0].name",
        "invalid_value",
      ),
    );
    expect(await post({ tools: [fn("")] })).toEqual(refused("Invalid 'tools[0].name': empty string.", "tools[0].name", "empty_string"));
    expect(await post({ tools: [fn("n".repeat(129))] })).toEqual(tooLong("tools[0].name", 128, 129));
    expect(await post({ tool_choice: "auto" })).toEqual(
      refused("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice"),
    );
    expect(await post({ parallel_tool_calls: false })).toEqual(
      refused(
        "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
        "parallel_tool_calls",
      ),
    );
  });

  it("R34: prompt cache retention and options the model does not take", async () => {
    expect(await post({ model: "gpt-5.5", prompt_cache_retention: "in_memory" })).toEqual(
      refused(
        "Unsupported value: 'in_memory' is not supported with the 'gpt-5.5' model. Supported values are: '24h'.",
        "prompt_cache_retention",
        "unsupported_value",
      ),
    );
    expect(await post({ model: "gpt-5.4", prompt_cache_options: { mode: "implicit", ttl: "30m" } })).toEqual(
      refused(
        "Unsupported parameter: 'prompt_cache_options' is not supported with this model.",
        "prompt_cache_options",
        "unsupported_parameter",
      ),
    );
    expect(await post({ model: "gpt-5.6", prompt_cache_options: { mode: "implicit", ttl: "1h" } })).toEqual(
      refused("Invalid value: '1h'. Supported values are: '30m' and '12h'.", "prompt_cache_options.ttl", "invalid_value"),
    );
    expect(
      (await post({ model: "gpt-5.6", prompt_cache_options: { mode: "explicit", ttl: "12h" }, prompt_cache_retention: "24h" })).status,
    ).toBe(200);
    expect((await post({ model: "gpt-5.4", prompt_cache_retention: "in_memory" })).status).toBe(200);
  });

  it("R33: stream_options without stream", async () => {
    expect(await post({ stream_options: { include_obfuscation: false } })).toEqual(
      refused("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value"),
    );
  });
});

describe("offline model: strict schemas (R23–R27)", () => {
  const format = (schema: unknown) => ({ text: { format: { type: "json_schema", name: "limit_probe", schema, strict: true } } });
  const closed = (properties: Record<string, unknown>) => ({
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });
  const nested = (levels: number): Record<string, unknown> =>
    levels === 1 ? closed({ leaf: { type: "string" } }) : closed({ next: nested(levels - 1) });
  const schemaRefused = (why: string) =>
    refused(`Invalid schema for response_format 'limit_probe': ${why}`, "text.format.schema", "invalid_json_schema");

  it("R23: an open object, or a property left out of required", async () => {
    expect(await post(format({ type: "object", properties: { y: { type: "string" } }, required: ["y"] }))).toEqual(
      schemaRefused("In context=(), 'additionalProperties' is required to be supplied and to be false."),
    );
    expect(
      await post(
        format(closed({ y: { type: "object", properties: { z: { type: "string" } }, required: [], additionalProperties: false } })),
      ),
    ).toEqual(
      schemaRefused(
        "In context=('properties', 'y'), 'required' is required to be supplied and to be an array including every key in properties. Missing 'z'.",
      ),
    );
  });

  it("R24: more than 10 levels of nesting", async () => {
    expect(await post(format(nested(14)))).toEqual(schemaRefused("15 levels of nesting exceeds limit of 10."));
    expect((await post(format(nested(9)))).status).toBe(200);
  });

  it("R25: more than 5000 properties", async () => {
    const wide = closed(Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`p${i}`, { type: "string" }])));
    expect(await post(format(wide))).toEqual(schemaRefused("6000 parameters exceeds limit of 5000."));
  });

  it("R26: more than 1000 enum values", async () => {
    const schema = closed({
      a: { type: "string", enum: Array.from({ length: 604 }, (_, i) => `a${i}`) },
      b: { type: "string", enum: Array.from({ length: 604 }, (_, i) => `b${i}`) },
    });
    expect(await post(format(schema))).toEqual(
      schemaRefused(
        "Expected at most 1000 enum values in total within a single schema when using structured outputs, but received 1208. Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs.",
      ),
    );
  });

  it("R27: a large string enum over 15,000 characters; names and values over 120,000", async () => {
    const big = Array.from({ length: 251 }, (_, i) => `${i}`.padStart(60, "v"));
    expect(await post(format(closed({ a: { type: "string", enum: big } })))).toEqual(
      schemaRefused(
        "In context=('properties', 'a'), Expected at most 15000 total characters in enum values for a string enum with more than 250 values when using structured outputs, but received 15060.",
      ),
    );
    const names = closed(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`${i}`.padStart(121, "n"), { type: "string" }])));
    expect(await post(format(names))).toEqual(
      schemaRefused(
        "Expected at most 120000 total characters in property names, definition names, enum values and const values within a single schema when using structured outputs, but received 121000. Consider reducing their length, or use 'strict: false' to opt out of structured outputs.",
      ),
    );
  });

  it("a strict function tool is held to the same rules, named for the function", async () => {
    const tools = [{ type: "function", name: "glob", parameters: { type: "object", properties: {} }, strict: true }];
    expect(await post({ tools })).toEqual(
      refused(
        "Invalid schema for function 'glob': In context=(), 'additionalProperties' is required to be supplied and to be false.",
        "tools[0].parameters",
        "invalid_function_parameters",
      ),
    );
    expect((await post({ tools: [{ ...tools[0], strict: false }] })).status).toBe(200);
  });
});

describe("offline model: images and PDFs (R30, R31)", () => {
  it("an image over 30,000 patches at auto detail; low and high detail are scaled down", async () => {
    expect(await post({ input: userWith(image(pngOfSize(8000, 6000))) })).toEqual(
      refused(
        "The image you provided requires 47000 patches after processing, exceeding the limit of 30000. Please resize the image and try again.",
        "input",
        "invalid_value",
      ),
    );
    expect((await post({ input: userWith(image(pngOfSize(8000, 6000), "high")) })).status).toBe(200);
    expect((await post({ input: userWith(image(pngOfSize(5000, 6000))) })).status).toBe(200);
  });

  it("an animated GIF or a format OpenAI does not read; a detail it does not know", async () => {
    const unsupported = refused(
      "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
      null,
      "invalid_image_format",
    );
    expect(await post({ input: userWith(image(gifOfFrames(2), "auto", "image/gif")) })).toEqual(unsupported);
    expect(await post({ input: userWith(image(btoa("BM not a png"), "auto", "image/bmp")) })).toEqual(unsupported);
    expect((await post({ input: userWith(image(gifOfFrames(1), "auto", "image/gif")) })).status).toBe(200);
    expect(await post({ input: userWith(image(TINY_PNG, "ultra")) })).toEqual(
      refused("Invalid value: 'ultra'. Supported values are: 'auto', 'low', and 'high'.", "input[0].content[0].detail", "invalid_value"),
    );
  });

  it("more than 500 images in a request", async () => {
    const images = Array.from({ length: 501 }, () => image(TINY_PNG));
    expect(await post({ input: userWith(...images) })).toEqual(
      refused("Invalid 'input': too many images in one request. Expected at most 500, but got 501 instead.", "input", "invalid_value"),
    );
  });

  it("more than 100 PDF pages in a request", async () => {
    const file = (pages: number) => ({
      type: "input_file",
      filename: "a.pdf",
      file_data: `data:application/pdf;base64,${pdfOfPages(pages)}`,
    });
    expect(await post({ input: userWith(file(60), file(41)) })).toEqual(
      refused("Invalid 'input': too many PDF pages in one request. Expected at most 100, but got 101 instead.", "input", "invalid_value"),
    );
    expect((await post({ input: userWith(file(60), file(40)) })).status).toBe(200);
  });
});
