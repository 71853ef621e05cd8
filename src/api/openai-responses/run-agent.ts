import { noParameters, type Agent } from "../../agents";
import { invalidFields } from "../errors";
import type { FunctionTool } from "./request";

/**
 * The agent as one response's run uses it: the request's `instructions` follow the agent's own,
 * and its function tools join the agent's tools as client tools. The stored agent is untouched.
 * A function tool named like one of the agent's tools is a 400 naming it.
 */
export function runAgent(agent: Agent, instructions: string | null | undefined, tools: FunctionTool[] = []): Agent {
  const taken = new Set(agent.tools.map((tool) => tool.name));
  tools.forEach((tool, index) => {
    if (taken.has(tool.name)) throw invalidFields([{ path: `tools.${index}.name`, message: `the agent already has a tool named "${tool.name}"` }]);
    taken.add(tool.name);
  });
  const clientTools = tools.map((tool) => ({
    type: "client" as const,
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    parameters: tool.parameters ?? noParameters(),
  }));
  return {
    ...agent,
    instructions: [agent.instructions, instructions].filter(Boolean).join("\n\n"),
    tools: [...agent.tools, ...clientTools],
  };
}
