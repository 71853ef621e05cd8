import type { Block, Message } from "../../core/messages";
import type { BroughtMessage } from "../brought-history";
import type { ContentPart } from "../../media";
import type { FileType, ImageType } from "../../media/limits";
import { jsonDepthExcess, MAX_JSON_DEPTH } from "../../core/json-depth";
import { invalidFields } from "../errors";
import type { CreateResponseBody } from "./request";
import { DATA_URL, type FunctionCallOutput, type InputContent, type InputItem } from "./input-items";

/**
 * A request's `input` read the way the clients of the Responses API use it (docs/responses-api.md,
 * "Conversations brought by the client"):
 * - `instructions`: the text of its `system` and `developer` messages, in order;
 * - `turn`: the user messages it ends with (the turn to run), or null when it ends with
 *   `function_call_output` items (`outputs`), which answer function calls;
 * - `earlier`: every other item before them, each with its index in `input`: the conversation so
 *   far, as the client holds it.
 */
export type ReadInput = {
  instructions: string[];
  turn: ContentPart[] | null;
  outputs: { item: FunctionCallOutput; index: number }[];
  earlier: { item: InputItem; index: number }[];
};

type Indexed = { item: InputItem; index: number };

const isRole = (entry: Indexed, roles: string[]) => entry.item.type === "message" && roles.includes(entry.item.role);

/** Reads `input` (see ReadInput); a string is one user message. */
export function readInput(input: CreateResponseBody["input"]): ReadInput {
  if (typeof input === "string") return { instructions: [], turn: [{ type: "text", text: input }], outputs: [], earlier: [] };
  const indexed = input.map((item, index) => ({ item, index }));
  const instructions = indexed.filter((entry) => isRole(entry, ["system", "developer"])).map((entry) => instructionText(entry));
  const rest = indexed.filter((entry) => !isRole(entry, ["system", "developer"]));
  let split = rest.length;
  while (split > 0 && rest[split - 1]?.item.type === "function_call_output") split -= 1;
  if (split < rest.length) {
    const outputs = rest.slice(split).map(({ item, index }) => ({ item: item as FunctionCallOutput, index }));
    return { instructions, turn: null, outputs, earlier: rest.slice(0, split) };
  }
  while (split > 0 && isRole(rest[split - 1] as Indexed, ["user"])) split -= 1;
  const last = rest.slice(split);
  if (last.length === 0) {
    const at = rest.at(-1)?.index ?? input.length - 1;
    throw invalidFields([{ path: `input.${at}`, message: "input must end with a user message or with function_call_output items" }]);
  }
  return { instructions, turn: last.flatMap(userParts), outputs: [], earlier: rest.slice(0, split) };
}

function instructionText({ item, index }: Indexed): string {
  if (item.type !== "message") return "";
  if (typeof item.content === "string") return item.content;
  return item.content
    .map((part, position) => {
      if (part.type === "input_text") return part.text;
      throw invalidFields([{ path: `input.${index}.content.${position}`, message: `${item.role} messages carry text only` }]);
    })
    .join("\n");
}

/** A user message's content as Agentry's content parts. */
function userParts({ item, index }: Indexed): ContentPart[] {
  if (item.type !== "message") return [];
  if (typeof item.content === "string") return [{ type: "text", text: item.content }];
  return item.content.map((part, position) => partOf(part, `input.${index}.content.${position}`));
}

function partOf(part: InputContent | { type: "output_text" | "refusal" }, path: string): ContentPart {
  if (part.type === "input_text") return { type: "text", text: part.text };
  if (part.type === "input_file") {
    const [, mediaType, data] = DATA_URL.exec(part.file_data ?? "") as RegExpExecArray;
    // Agentry's file names have no control characters or slashes (part-schemas.ts).
    const name = (part.filename ?? "file").replace(/[\p{Cc}/\\]/gu, "_");
    return { type: "file", media_type: mediaType as FileType, data: data as string, name };
  }
  if (part.type === "input_image") {
    const url = part.image_url ?? "";
    const match = DATA_URL.exec(url);
    if (!match) return { type: "image", url };
    return { type: "image", media_type: match[1] as ImageType, data: match[2] as string };
  }
  throw invalidFields([{ path, message: `${part.type} parts belong to assistant messages` }]);
}

const textOfOutput = (output: FunctionCallOutput["output"]) =>
  typeof output === "string" ? output : output.map((part) => (part.type === "input_text" ? part.text : `[${part.type}]`)).join("");

/** A `function_call_output` item's result as a tool result's text. */
export const outputText = (item: FunctionCallOutput) => textOfOutput(item.output);

/** A function call's `arguments` text as its JSON object; anything else (or nested too deep) is a 400 naming the item. */
export function callArguments(text: string, index: number): Record<string, unknown> {
  const refuse = (message: string) => invalidFields([{ path: `input.${index}.arguments`, message }]);
  const json = text === "" ? "{}" : text;
  if (jsonDepthExcess(json) !== null) throw refuse(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw refuse("must be a JSON object's text");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw refuse("must be a JSON object's text");
  return value as Record<string, unknown>;
}

/**
 * The earlier items of a conversation brought without `previous_response_id` as Agentry's
 * provider-neutral transcript messages: user and assistant messages, function calls as the
 * assistant's tool calls, their outputs as tool results, reasoning summaries as reasoning. Every
 * call must be answered by an output and every output answer a call before it; the conversation
 * may open with the assistant (the Anthropic adapter puts a short user message before it). A user message keeps its parts as
 * given: its images and files are checked and stored with the turn's (brought-history.ts). Each
 * violation is a 400 naming the item.
 */
export function historyOf(earlier: Indexed[], outputs: ReadInput["outputs"]): BroughtMessage[] {
  const messages: BroughtMessage[] = [];
  const push = (role: Message["role"], block: Block) => {
    const last = messages.at(-1);
    if (last && "content" in last && last.role === role && role !== "user") last.content.push(block);
    else messages.push({ role, content: [block] });
  };
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const { item, index } of [...earlier, ...outputs]) {
    const path = `input.${index}`;
    switch (item.type) {
      case "message": {
        if (item.role === "user") {
          const parts = userParts({ item, index });
          const paths = parts.map((_, position) => (typeof item.content === "string" ? `${path}.content` : `${path}.content.${position}`));
          messages.push({ role: "user", parts, paths });
        } else {
          const text = assistantText(item.content);
          // Providers refuse empty text blocks: an empty answer adds nothing to the history.
          if (text.trim() !== "") push("assistant", { type: "text", text });
        }
        break;
      }
      case "reasoning": {
        const text = item.summary.map((part) => part.text).join("\n");
        if (text !== "") push("assistant", { type: "reasoning", text, provider: "openai" });
        break;
      }
      case "function_call":
        called.add(item.call_id);
        push("assistant", {
          type: "tool_call",
          tool_call_id: item.call_id,
          name: item.name,
          arguments: callArguments(item.arguments, index),
        });
        break;
      case "function_call_output":
        if (!called.has(item.call_id) || answered.has(item.call_id)) {
          throw invalidFields([{ path: `${path}.call_id`, message: `answers no function_call before it (${item.call_id})` }]);
        }
        answered.add(item.call_id);
        push("tool", { type: "tool_result", tool_call_id: item.call_id, output: outputText(item), is_error: false });
        break;
      case "item_reference":
        // resolveReferences has replaced every reference it could resolve, and refused the others.
        throw invalidFields([{ path: `${path}.id`, message: `${item.id} is no output item of a response of yours` }]);
    }
  }
  const unanswered = [...earlier, ...outputs].find(({ item }) => item.type === "function_call" && !answered.has(item.call_id));
  if (unanswered)
    throw invalidFields([{ path: `input.${unanswered.index}`, message: "this function_call has no function_call_output after it" }]);
  return messages;
}

function assistantText(content: Extract<InputItem, { type: "message" }>["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "refusal" ? part.refusal : "text" in part ? part.text : "")).join("");
}
