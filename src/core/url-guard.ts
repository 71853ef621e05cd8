import ipaddr from "ipaddr.js";

/**
 * The outbound URL rule of docs/api.md (webhook URLs, agents' `base_url`, image URLs, `http_get`):
 * unless `ENVIRONMENT` is `development`, a URL must be `https` and may not name `localhost` or a
 * non-public IP literal. Workers cannot resolve DNS, so host names other than `localhost` cannot
 * be checked here (and Workers cannot reach private networks anyway).
 */

/**
 * Checks a URL the Worker will call. Returns `null` when it may be called, else the reason.
 * Any environment requires an absolute `http:` or `https:` URL.
 */
export function checkOutboundUrl(url: string, environment: string | undefined): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "must be an http or https URL";
  if (environment === "development") return null;
  if (parsed.protocol !== "https:") return "must use https";
  return checkHost(parsed.hostname);
}

/** Whether an answer is a redirect (3xx), which callers with `redirect: "manual"` must not follow blindly. */
export const isRedirect = (status: number): boolean => status >= 300 && status < 400;

function checkHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "must not name localhost";
  // The URL parser has already turned decimal, hex, octal and short IPv4 forms into dotted quads,
  // and written IPv6 literals in brackets, compressed, in lower case.
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return addressReason(ipaddr.IPv4.parse(host));
  if (host.startsWith("[") && host.endsWith("]")) {
    const text = host.slice(1, -1);
    return ipaddr.IPv6.isValid(text) ? addressReason(ipaddr.IPv6.parse(text)) : "must not name an invalid IPv6 address";
  }
  return null;
}

/** How the reason names each non-public range of ipaddr.js; any other one is "reserved". */
const RANGE_NAMES: Record<string, string> = {
  unspecified: "an unspecified",
  broadcast: "a broadcast",
  loopback: "a loopback",
  private: "a private",
  uniqueLocal: "a private (unique local)",
  deprecatedSiteLocal: "a site-local",
  carrierGradeNat: "a shared (carrier-grade NAT)",
  linkLocal: "a link-local",
  multicast: "a multicast",
};

/** IPv6 ranges that reach an embedded IPv4 address, named for the reason. */
const TRANSITION_NAMES: Record<string, string> = {
  ipv4Mapped: "an IPv4-mapped",
  ipv4Compatible: "an IPv4-compatible",
  rfc6145: "an IPv4-translated",
  rfc6052: "a NAT64",
  "6to4": "a 6to4",
  teredo: "a Teredo",
};

/**
 * Only ipaddr.js's `unicast` range is public. An IPv6 address that embeds an IPv4 address is
 * refused for that address when it is not public; an IPv4-mapped one naming a public address is
 * the IPv4 address itself and allowed, the other transition ranges are refused in any case.
 */
function addressReason(address: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  const range = address.kind() === "ipv6" && isIpv4Compatible(address as ipaddr.IPv6) ? "ipv4Compatible" : address.range();
  if (range === "unicast") return null;
  const transition = TRANSITION_NAMES[range];
  if (transition) {
    const embedded = embeddedIpv4(address as ipaddr.IPv6, range);
    const embeddedReason = embedded && addressReason(embedded);
    if (embeddedReason || range === "ipv4Mapped") return embeddedReason;
    return `must not name ${transition} IPv6 address`;
  }
  return `must not name ${RANGE_NAMES[range] ?? "a reserved"} IP address`;
}

/** `::a.b.c.d` (deprecated, RFC 4291), which ipaddr.js counts as unicast; `::` and `::1` are not. */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  const [a, b, c, d, e, f, g = 0, h = 0] = address.parts;
  return [a, b, c, d, e, f].every((part) => part === 0) && (g !== 0 || h > 1);
}

function embeddedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const parts = address.parts;
  const ipv4 = (high = 0, low = 0) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (range) {
    case "6to4": // 2002:AABB:CCDD::/48
      return ipv4(parts[1], parts[2]);
    case "teredo": // the client's address, inverted, in the last 32 bits
      return ipv4(~(parts[6] ?? 0) & 0xffff, ~(parts[7] ?? 0) & 0xffff);
    case "rfc6052": // the well-known 64:ff9b::/96; the local-use 64:ff9b:1::/48 embeds it elsewhere and is refused anyway
      return parts.slice(2, 6).every((part) => part === 0) ? ipv4(parts[6], parts[7]) : null;
    case "ipv4Mapped":
    case "ipv4Compatible":
    case "rfc6145":
      return ipv4(parts[6], parts[7]);
    default:
      return null;
  }
}
