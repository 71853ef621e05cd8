import { modelInfo } from "./model-catalog";

/**
 * Whether an OpenAI model reasons: as the model catalog says, and for a model it does not know,
 * by its name: the o-series (o1, o3, o4-mini …), the GPT-5 and GPT-6 families and the codex
 * models; their `-chat` variants do not. A reasoning model returns `reasoning` items and accepts
 * `include: ["reasoning.encrypted_content"]`, which other models refuse ("Encrypted content is
 * not supported with this model.").
 */
export function isReasoningModel(model: string): boolean {
  const known = modelInfo("openai", model);
  if (known) return known.reasons;
  const name = model.toLowerCase().replace(/^openai\//, "");
  return /^(o\d|gpt-[56]|codex)/.test(name) && !/-chat\b/.test(name);
}

/**
 * Whether an OpenAI model takes function tools on Chat Completions only with
 * `reasoning_effort: "none"` (gpt-5.4 and later, gpt-6): "Function tools with reasoning_effort
 * are not supported for MODEL in /v1/chat/completions", even when the effort is left out.
 */
export function chatToolsNeedNoReasoning(model: string): boolean {
  const name = model.toLowerCase().replace(/^openai\//, "");
  return /^(gpt-5\.([4-9]|\d{2,})|gpt-[6-9])/.test(name);
}
