/**
 * Whether an OpenAI model reasons, by its name: the o-series (o1, o3, o4-mini …), the GPT-5
 * family and the codex models; their `-chat` variants do not. A reasoning model returns
 * `reasoning` items and accepts `include: ["reasoning.encrypted_content"]`, which other models
 * refuse ("Encrypted content is not supported with this model.").
 */
export function isReasoningModel(model: string): boolean {
  const name = model.toLowerCase().replace(/^openai\//, "");
  return /^(o\d|gpt-5|codex)/.test(name) && !/-chat\b/.test(name);
}
