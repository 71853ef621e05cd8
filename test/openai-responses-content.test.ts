import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { fromBase64, TINY_PNG } from "./support/media";
import { agentryOpenAI } from "./support/openai-sdk";
import { transcriptOf } from "./support/runs";

describe("content of /v1/responses", () => {
  it("answers text.format json_schema with a JSON object valid for the schema", async () => {
    const agent = await createAgent();
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: "structured please",
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    });
    expect(response.status).toBe("completed");
    expect(JSON.parse(response.output_text)).toEqual({ answer: expect.any(String) });
  });

  it("refuses a text.format schema whose root is not an object, naming it", async () => {
    const agent = await createAgent();
    const error = await agentryOpenAI()
      .responses.create({ model: agent.id, input: "x", text: { format: { type: "json_schema", name: "n", schema: { type: "string" } } } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: expect.stringMatching(/^text\.format\.schema/),
    });
  });

  it("stores an input_image data URL as the turn's image", async () => {
    const agent = await createAgent();
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this" },
            { type: "input_image", image_url: `data:image/png;base64,${TINY_PNG}`, detail: "auto" },
          ],
        },
      ],
    });
    expect(response).toMatchObject({ status: "completed", output_text: "You said: what is this" });
    const run = await (await api(`/v1/agents/${agent.id}/runs/${response.id}`)).json<{ session_id: string }>();
    const [user] = await transcriptOf(run.session_id);
    expect(user?.content).toEqual([
      { type: "text", text: "what is this" },
      { type: "image", media_type: "image/png", media_id: expect.any(String), size: fromBase64(TINY_PNG).length, width: 1, height: 1 },
    ]);
  });
});

describe("GET /v1/responses/{id}/input_items", () => {
  it("lists the response's input as one user message, media by their Agentry media id", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const response = await client.responses.create({
      model: agent.id,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "look" },
            { type: "input_image", image_url: `data:image/png;base64,${TINY_PNG}`, detail: "auto" },
          ],
        },
      ],
    });
    const items = [];
    for await (const item of client.responses.inputItems.list(response.id)) items.push(item);
    expect(items).toEqual([
      {
        type: "message",
        id: `msg_in_${response.id}`,
        role: "user",
        status: "completed",
        content: [
          { type: "input_text", text: "look" },
          { type: "input_image", detail: "auto", file_id: expect.any(String), image_url: null },
        ],
      },
    ]);
    await expect(client.responses.inputItems.list("run_unknown")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
