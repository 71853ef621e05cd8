/** The longest scope Agentry keeps or asks for (as the `scope` a credential's creation takes). */
const MAX_SCOPE_LENGTH = 1024;

/** A scope token (RFC 6749, section 3.3): visible ASCII but `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * A server's scope (its `WWW-Authenticate` challenge's `scope`) as space-separated scope tokens:
 * anything else is dropped, and it is cut to whole tokens within 1024 characters; "" when none is left.
 */
export function scopeTokens(scope: string): string {
  let kept = "";
  for (const token of scope.split(" ")) {
    if (!SCOPE_TOKEN.test(token)) continue;
    const next = kept === "" ? token : `${kept} ${token}`;
    if (next.length > MAX_SCOPE_LENGTH) break;
    kept = next;
  }
  return kept;
}

/** The union of two scopes, `scope`'s tokens first, then the new ones of `more`; null when `more` adds none. */
export function unionScope(scope: string | null, more: string): string | null {
  const have = scope === null ? [] : scope.split(" ").filter((t) => t !== "");
  const added = more.split(" ").filter((t) => t !== "" && !have.includes(t));
  if (added.length === 0) return null;
  return scopeTokens([...have, ...new Set(added)].join(" ")) || null;
}
