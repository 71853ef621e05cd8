import { env } from "cloudflare:workers";
import { ADMIN_TOKEN } from "../../support/http";
import { OPERATOR_GATEWAY_TOKEN, OPERATOR_KEYS } from "../../support/upstreams";

/** The operator's secrets of the test environment (vitest.config.ts): none may appear in any answer. */
export const OPERATOR_SECRETS = [
  ...OPERATOR_KEYS,
  OPERATOR_GATEWAY_TOKEN,
  String(env.WEBHOOK_SECRET),
  String(env.CREDENTIALS_KEY),
  ADMIN_TOKEN,
];

/** The secrets (the operator's and `extra`, e.g. a tenant's credential key) that occur in `text`. */
export const secretsIn = (text: string, extra: string[] = []): string[] =>
  [...OPERATOR_SECRETS, ...extra].filter((secret) => text.includes(secret));
