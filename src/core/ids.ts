/** Opaque ids with a prefix (docs/api.md); time-ordered so that newer ids sort after older ones. */
export function newId(prefix: "agt" | "ses" | "run" | "ckpt" | "key" | "med" | "cmp" | "req" | "str" | "wh" | "bdg"): string {
  const time = Date.now().toString(36).padStart(9, "0");
  const random = new Uint8Array(10);
  crypto.getRandomValues(random);
  const tail = Array.from(random, (b) => (b % 36).toString(36)).join("");
  return `${prefix}_${time}${tail}`;
}

/** Client-chosen ids (agents, sessions, tenants, tool names). Never contain `/`. */
export const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export const nowIso = () => new Date().toISOString();
