/**
 * The reasoning efforts each OpenAI reasoning model takes. The model catalog (its source,
 * models.dev, has no such field) does not hold them, so this table is kept by hand from OpenAI's
 * model pages and the API's own refusals ("Unsupported value: 'minimal' is not supported with
 * the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'."): see
 * docs/vendor-limits.md, R8. The first row whose pattern matches the model (its `openai/`
 * prefix and snapshot date aside) decides; a model no row matches is not checked.
 */
const EFFORTS: [pattern: RegExp, efforts: readonly string[]][] = [
  [/^gpt-6/, ["none", "low", "medium", "high", "xhigh", "max"]],
  [/^gpt-5\.\d+-chat/, ["medium"]],
  [/^gpt-5-pro$/, ["high"]],
  [/^gpt-5\.([2-9]|\d{2,})-pro$/, ["medium", "high", "xhigh"]],
  [/^gpt-5(-mini|-nano|-codex)?$/, ["minimal", "low", "medium", "high"]],
  [/^gpt-5\.1(-codex|-codex-mini)?$/, ["none", "low", "medium", "high"]],
  [/^gpt-5\.1-codex-max$|^gpt-5\.([2-9]|\d{2,})(-codex|-mini|-nano)?$/, ["none", "low", "medium", "high", "xhigh"]],
  [/^o(1|3|4-mini|3-mini|1-pro|3-pro)$/, ["low", "medium", "high"]],
];

const DATED = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The efforts `model` takes, or null when the table does not know the model. */
export function supportedEfforts(model: string): readonly string[] | null {
  const name = model
    .toLowerCase()
    .replace(/^openai\//, "")
    .replace(DATED, "");
  return EFFORTS.find(([pattern]) => pattern.test(name))?.[1] ?? null;
}

/** `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`: how OpenAI lists supported values. */
export function listValues(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 2) return quoted.join(" and ");
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted.at(-1)}`;
}
