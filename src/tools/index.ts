import { checkOutput, describeErrors, type Agent, type Tool } from "../agents";
import type { ToolCallBlock } from "../core/messages";
import type { ToolSpec } from "../providers/types";
import { jsonDepthExcess, MAX_JSON_DEPTH } from "../core/json-depth";
import { TOO_DEEP_ARGUMENTS } from "../providers/tool-calls";
import { builtinSpecs, runBuiltin } from "./builtin";
import { toolError, type ToolOutcome } from "./outcome";
import { callWebhook } from "./webhook";

export type { ToolOutcome } from "./outcome";

/** The tools of an agent as the model sees them. */
export function toolSpecs(agent: Agent): ToolSpec[] {
  return agent.tools.map((tool) =>
    tool.type === "builtin"
      ? { name: tool.name, ...builtinSpecs[tool.name] }
      : { name: tool.name, description: tool.description, parameters: tool.parameters, ...(tool.strict ? { strict: true } : {}) },
  );
}

export const findTool = (agent: Agent, name: string): Tool | undefined => agent.tools.find((t) => t.name === name);

export type ToolContext = {
  agent: Agent;
  run_id: string;
  session_id: string;
  webhookSecret: string | undefined;
  environment: string | undefined;
  /** The run's abort signal: a cancel aborts the call in flight. */
  signal: AbortSignal;
};

/**
 * Adapters keep arguments that are not a JSON object (within MAX_JSON_DEPTH levels) as the raw
 * string the model sent: such a call is answered with a tool error, whatever the tool's type.
 */
export const hasObjectArguments = (call: ToolCallBlock): boolean =>
  typeof call.arguments === "object" && call.arguments !== null && !Array.isArray(call.arguments);

function argumentsProblem(call: ToolCallBlock): string {
  const tooDeep = call.arguments === TOO_DEEP_ARGUMENTS || (typeof call.arguments === "string" && jsonDepthExcess(call.arguments) !== null);
  return tooDeep
    ? `The arguments of ${call.name} nest deeper than ${MAX_JSON_DEPTH} levels; send a flatter JSON object`
    : `The arguments of ${call.name} must be a JSON object`;
}

/**
 * Why a strict tool's call may not run: its arguments miss the tool's `parameters` (the model
 * reads the reasons as the call's tool error and may call again). Null when it may run.
 */
export function strictArgumentsProblem(agent: Agent, call: ToolCallBlock): string | null {
  const tool = findTool(agent, call.name);
  if (!tool || tool.type === "builtin" || !tool.strict || !hasObjectArguments(call)) return null;
  const check = checkOutput(JSON.stringify(call.arguments), tool.parameters);
  if (check.ok) return null;
  return `The arguments of ${call.name} do not match its parameters, so it was not run:\n${describeErrors(check.errors)}`;
}

/** Executes a server-side tool call (webhook or builtin). Client tools pause the run instead. */
export async function executeTool(call: ToolCallBlock, context: ToolContext): Promise<ToolOutcome> {
  const tool = findTool(context.agent, call.name);
  if (!tool) return toolError(`Unknown tool: ${call.name}`);
  if (!hasObjectArguments(call)) return toolError(argumentsProblem(call));
  const mismatch = strictArgumentsProblem(context.agent, call);
  if (mismatch) return toolError(mismatch);
  switch (tool.type) {
    case "webhook":
      return callWebhook(
        {
          url: tool.url,
          timeout_ms: tool.timeout_ms,
          tool_call_id: call.tool_call_id,
          name: call.name,
          arguments: call.arguments,
          run_id: context.run_id,
          session_id: context.session_id,
        },
        context.webhookSecret,
        context.environment,
        context.signal,
      );
    case "builtin":
      return runBuiltin(tool.name, call.arguments, {
        metadata: context.agent.metadata,
        environment: context.environment,
        signal: context.signal,
      });
    case "client":
      return toolError(`Tool ${call.name} is answered by the client`);
  }
}
