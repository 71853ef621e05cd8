import type { ObjectJsonSchema } from "../../agents";
import { checkOutput, describeErrors, type OutputError } from "../../agents/output-validation";
import type { Block, Message } from "../../core/messages";
import { textOf, toolCallsOf } from "../transcript/message-parts";
import type { RunError, RunRecord } from "../../run-model/run-record";

/**
 * Structured output (docs/structured-output.md). A final answer that misses the run's output
 * schema is held back, off the transcript, and the next model call is its one repair: the
 * history, the held answer and a user message with the validation errors. Whatever that call
 * answers is the run's final answer; the transcript shows only it, so the next turn's history
 * reads user input → answer, as if the first try had been right.
 */

/** How a run ends on its final answer. */
export type FinalOutcome =
  | { status: "completed"; patch: { output: unknown } }
  | { status: "error"; patch: { error: RunError; output?: unknown } };

/** The schema a run's final answer must follow: the run's own (per run, else the agent's when it started), or null. */
export function outputSchemaOf(run: RunRecord): ObjectJsonSchema | null {
  return run.output_schema !== undefined ? run.output_schema : (run.agent.output_schema ?? null);
}

/**
 * Decides whether a model answer is held back for a repair: the final answer (no tool calls)
 * of a run with an output schema that it does not fit, when the run has not had its repair yet
 * and `max_steps` leaves a model call for it. Then it records the repair on `run` (the caller
 * saves the run with its step, instead of appending the answer) and returns the errors;
 * otherwise null, and the answer goes to the transcript as usual.
 */
export function holdForRepair(run: RunRecord, content: Block[], nextIndex: number): OutputError[] | null {
  const schema = outputSchemaOf(run);
  const answer: Message = { role: "assistant", content };
  if (!schema || run.output_repair || toolCallsOf(answer).length > 0) return null;
  if (run.metrics.model_calls >= run.agent.max_steps) return null;
  const check = checkOutput(textOf(answer), schema);
  if (check.ok) return null;
  run.output_repair = { answer: content, errors: check.errors, next_index: nextIndex };
  return check.errors;
}

/**
 * The messages of a model call. While a repair is pending (nothing was added to the transcript
 * since the answer was held back), the history is followed by the held answer and the repair
 * request.
 */
export function withRepair(run: RunRecord, history: Message[], nextIndex: number): Message[] {
  const repair = run.output_repair;
  if (!repair || repair.next_index !== nextIndex) return history;
  return [
    ...history,
    { role: "assistant", content: repair.answer },
    { role: "user", content: [{ type: "text", text: repairRequest(repair.errors) }] },
  ];
}

/** The user message of a repair request. */
export function repairRequest(errors: OutputError[]): string {
  return [
    "Your previous answer does not match the required output schema:",
    describeErrors(errors),
    "Answer again with only a JSON object that matches the schema, and no other text.",
  ].join("\n");
}

/**
 * The end of a run on its final answer: its text, or with an output schema the parsed object or
 * `output_invalid`; an answer that was cut or declined ends with its error and its text as output.
 */
export function finalOutcome(run: RunRecord, text: string): FinalOutcome {
  if (run.answer_error) return { status: "error", patch: { error: run.answer_error, output: text } };
  const schema = outputSchemaOf(run);
  if (!schema) return { status: "completed", patch: { output: text } };
  const check = checkOutput(text, schema);
  if (check.ok) return { status: "completed", patch: { output: check.value } };
  const why = run.output_repair ? "after one repair attempt" : `and max_steps (${run.agent.max_steps}) left no model call for a repair`;
  const listed = check.errors.slice(0, 5).map((e) => `${e.path === "" ? "(root)" : e.path}: ${e.message}`);
  const more = check.errors.length > listed.length ? ` (and ${check.errors.length - listed.length} more)` : "";
  return {
    status: "error",
    patch: {
      error: {
        type: "output_invalid",
        message: `The answer does not match the output schema ${why}: ${listed.join("; ")}${more}`,
        retryable: false,
        errors: check.errors,
      },
    },
  };
}
