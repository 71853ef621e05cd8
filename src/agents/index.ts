export {
  MOCK_BASE_URL,
  ON_BUSY,
  PROVIDERS,
  agentCreateSchema,
  agentDefinitionSchema,
  agentPatchSchema,
  agentSchema,
  definitionOf,
} from "./definition";
export type { Agent, AgentCreate, AgentDefinition, AgentPatch, Compaction, OnBusy, Provider } from "./definition";
export { BUILTIN_TOOLS, SERVER_LABEL, TOOL_NAME, toolNameOf, toolSchema, toolsSchema } from "./tools";
export type { BuiltinTool, BuiltinToolName, ClientTool, McpTool, Tool, WebhookTool } from "./tools";
export { noParameters, objectJsonSchema } from "./json-schema";
export type { ObjectJsonSchema } from "./json-schema";
export { MAX_OUTPUT_ERRORS, checkOutput, describeErrors, schemaProblem } from "./output-validation";
export type { OutputCheck, OutputError } from "./output-validation";
export {
  MAX_DEFINITION_BYTES,
  definitionProblems,
  endpointProblems,
  outputSchemaProblems,
  settingsProblems,
  toolDescriptionProblem,
} from "./checks";
export { REASONING_EFFORTS, modelSettingFields, runSettingFields, settingsOf, withRunSettings } from "./model-settings";
export type { ModelSettings, RunSettings, ToolChoice } from "./model-settings";
export type { CheckEnv, DefinitionProblem } from "./checks";
