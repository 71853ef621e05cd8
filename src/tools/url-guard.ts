/**
 * The outbound URL rule of API.md (webhook URLs, agents' `base_url`): unless `ENVIRONMENT` is
 * `development`, a URL must be `https` and may not name `localhost` or a non-public IP literal.
 * Workers cannot resolve DNS, so host names other than `localhost` cannot be checked here
 * (and Workers cannot reach private networks anyway).
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

function checkHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "must not name localhost";
  // The URL parser has already turned decimal, hex, octal and short IPv4 forms into dotted quads.
  const v4 = parseIpv4(host);
  if (v4 !== null) return ipv4Reason(v4);
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = parseIpv6(host.slice(1, -1));
    return v6 === null ? "must not name an invalid IPv6 address" : ipv6Reason(v6);
  }
  return null;
}

function parseIpv4(host: string): number[] | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!match) return null;
  const octets = match.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

function ipv4Reason([a = 0, b = 0, c = 0]: number[]): string | null {
  if (a === 0) return "must not name an unspecified IP address (0.0.0.0/8)";
  if (a === 127) return "must not name a loopback IP address";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) {
    return "must not name a private IP address";
  }
  if (a === 100 && b >= 64 && b <= 127) return "must not name a shared (carrier-grade NAT) IP address";
  if (a === 169 && b === 254) return "must not name a link-local IP address";
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224) {
    return "must not name a reserved or multicast IP address";
  }
  return null;
}

/** Eight 16-bit groups, or null when the text is not an IPv6 address. */
function parseIpv6(text: string): number[] | null {
  let body = text;
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    const v4 = parseIpv4(dotted[2] ?? "");
    if (v4 === null) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    body = `${dotted[1] ?? ""}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (part: string | undefined) => (part ? part.split(":") : []);
  const head = groupsOf(halves[0]);
  const rest = groupsOf(halves[1]);
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = new Array<number>(8 - known).fill(0);
  return [...head, ...zeros.map(String), ...rest].map((g) => parseInt(g, 16));
}

function ipv6Reason(groups: number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const firstFive = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFive && g5 === 0 && g6 === 0) {
    if (g7 === 0) return "must not name an unspecified IP address (::)";
    if (g7 === 1) return "must not name a loopback IP address";
  }
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses
  // reach the IPv4 address they embed.
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  if ((firstFive && (g5 === 0xffff || g5 === 0)) || nat64) return ipv4Reason(embedded(g6, g7));
  if (g0 === 0x2002) return ipv4Reason(embedded(g1, g2));
  if ((g0 & 0xfe00) === 0xfc00 || (g0 & 0xffc0) === 0xfec0) return "must not name a private IP address";
  if ((g0 & 0xffc0) === 0xfe80) return "must not name a link-local IP address";
  if ((g0 & 0xff00) === 0xff00) return "must not name a multicast IP address";
  return null;
}
