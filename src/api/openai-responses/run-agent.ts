import { noParameters, schemaProblem, toolNameOf, toolDescriptionProblem, type Agent, type RunSettings } from "../../agents";
import type { Compaction } from "../../agents";
import { invalidFields } from "../errors";
import type { ReadInput } from "./conversation";
import type { CreateResponseBody, FunctionTool } from "./request";

/** Agentry's compaction with its defaults: what `truncation: "auto"` turns on for an agent that has none. */
const AUTO_COMPACTION: Compaction = { enabled: true, trigger_tokens: 120_000, keep_last_messages: 8 };

/**
 * The agent as one response's run uses it: the request's function tools join the agent's tools
 * as client tools (strict ones checked against their parameters), and `truncation` turns
 * Agentry's compaction on (`auto`) or off (`disabled`). The stored agent is untouched. A function
 * tool named like one of the agent's tools is a 400 naming it, and so is an agent with a tool
 * that requires approval (docs/tools.md, Approvals).
 */
export function runAgent(agent: Agent, body: Pick<CreateResponseBody, "tools" | "truncation">): Agent {
  // A call waiting for approval could only be answered with `approvals`, which the Responses API has no item for.
  const gated = agent.tools.find((tool) => tool.type !== "client" && tool.requires_approval === true);
  if (gated) {
    throw invalidFields([
      {
        path: "model",
        message: `the agent's ${gated.type === "mcp" ? `MCP server "${gated.server_label}"` : `tool "${gated.name}"`} requires approval, which /v1/responses cannot answer: use POST /v1/agents/{agent_id}/runs`,
      },
    ]);
  }
  const tools: FunctionTool[] = body.tools ?? [];
  const taken = new Set(agent.tools.map(toolNameOf));
  const servers = agent.tools.flatMap((tool) => (tool.type === "mcp" ? [toolNameOf(tool)] : []));
  tools.forEach((tool, index) => {
    if (taken.has(tool.name) || servers.some((prefix) => tool.name.startsWith(prefix)))
      throw invalidFields([{ path: `tools.${index}.name`, message: `the agent already has a tool named "${tool.name}"` }]);
    taken.add(tool.name);
    const invalid = tool.parameters ? schemaProblem(tool.parameters) : null;
    if (invalid) throw invalidFields([{ path: `tools.${index}.parameters`, message: invalid }]);
    const long = toolDescriptionProblem(agent.provider, tool.description);
    if (long) throw invalidFields([{ path: `tools.${index}.description`, message: long }]);
  });
  const clientTools = tools.map((tool) => ({
    type: "client" as const,
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    parameters: tool.parameters ?? noParameters(),
    // OpenAI's default for a function tool is strict.
    strict: tool.strict ?? true,
  }));
  const compaction =
    body.truncation === "auto"
      ? agent.compaction?.enabled
        ? agent.compaction
        : AUTO_COMPACTION
      : body.truncation === "disabled"
        ? null
        : agent.compaction;
  return { ...agent, compaction, tools: [...agent.tools, ...clientTools] };
}

/** The request's own settings of the run: they override the agent's (docs/responses-api.md, "Request fields"). */
export function responseRunSettings(body: CreateResponseBody, read: Pick<ReadInput, "instructions">): RunSettings {
  const instructions = [body.instructions ?? "", ...read.instructions].filter((text) => text.trim() !== "").join("\n\n");
  const choice = body.tool_choice ?? undefined;
  const effort = body.reasoning?.effort ?? null;
  const summary = body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null;
  return {
    instructions: instructions === "" ? null : instructions,
    max_output_tokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    top_p: body.top_p ?? undefined,
    tool_choice: choice === undefined ? undefined : typeof choice === "string" ? choice : { name: choice.name },
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    max_tool_calls: body.max_tool_calls ?? undefined,
    reasoning: effort === null && summary === null ? undefined : { effort, summary },
  };
}
