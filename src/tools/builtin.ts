import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import { CANCELLED, capOutput, toolError, type ToolOutcome } from "./outcome";

export type BuiltinName = "current_time" | "http_get";

/** JSON Schemas of the builtin tools' arguments, as the model sees them. */
export const builtinSpecs: Record<BuiltinName, { description: string; parameters: Record<string, unknown> }> = {
  current_time: {
    description: "Returns the current date and time in UTC (ISO-8601).",
    parameters: { type: "object", properties: {} },
  },
  http_get: {
    description: "Fetches a URL with GET and returns the response body. Only allow-listed hosts.",
    parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
  },
};

function allowedHosts(metadata: Record<string, unknown>): string[] {
  const list = metadata.http_get_allow;
  return Array.isArray(list) ? list.filter((h): h is string => typeof h === "string").map((h) => h.toLowerCase()) : [];
}

/** Runs a builtin tool inside the Worker; `context.signal` (the run's) aborts it when the run is cancelled. */
export async function runBuiltin(
  name: BuiltinName,
  args: unknown,
  context: { metadata: Record<string, unknown>; environment: string | undefined; signal: AbortSignal },
): Promise<ToolOutcome> {
  switch (name) {
    case "current_time":
      return { output: JSON.stringify({ utc: new Date().toISOString() }), is_error: false };
    case "http_get": {
      const url = typeof args === "object" && args !== null && "url" in args && typeof args.url === "string" ? args.url : null;
      if (!url) return toolError("http_get needs a string argument `url`");
      const refused = checkOutboundUrl(url, context.environment);
      if (refused) return toolError(`URL refused: ${refused}`);
      const host = new URL(url).hostname.toLowerCase();
      if (!allowedHosts(context.metadata).includes(host)) {
        return toolError(`Host ${host} is not in the agent's metadata.http_get_allow list`);
      }
      try {
        // A redirect could lead anywhere, past the guard and the allow-list: it is not followed.
        const response = await fetch(url, { signal: AbortSignal.any([context.signal, AbortSignal.timeout(10_000)]), redirect: "manual" });
        if (isRedirect(response.status)) {
          await response.body?.cancel();
          return toolError(`The URL answered a redirect (status ${response.status}); redirects are not followed`);
        }
        const text = capOutput(await response.text());
        return response.ok ? { output: text, is_error: false } : toolError(`HTTP ${response.status}: ${text}`);
      } catch {
        return toolError(context.signal.aborted ? CANCELLED : "http_get failed to fetch the URL");
      }
    }
  }
}
