import { describe, expect, it } from "vitest";
import { checkOutboundUrl } from "../src/core/url-guard";

const production = (url: string) => checkOutboundUrl(url, "production");

describe("checkOutboundUrl in development", () => {
  it("allows http, localhost and private addresses", () => {
    for (const url of ["http://localhost:8787/hook", "http://127.0.0.1:9000", "https://10.0.0.1/x", "http://[::1]:80/"]) {
      expect(checkOutboundUrl(url, "development"), url).toBeNull();
    }
  });

  it("still requires an absolute http(s) URL", () => {
    expect(checkOutboundUrl("not a url", "development")).toMatch(/absolute URL/);
    expect(checkOutboundUrl("/relative/path", "development")).toMatch(/absolute URL/);
    expect(checkOutboundUrl("ftp://example.com/file", "development")).toMatch(/http or https/);
    expect(checkOutboundUrl("javascript:alert(1)", "development")).toMatch(/http or https/);
  });
});

describe("checkOutboundUrl outside development", () => {
  it("allows public https URLs, IPv4 and IPv6 literals included", () => {
    for (const url of [
      "https://example.com/hook",
      "https://api.example.com:8443/v1?q=1",
      "https://1.1.1.1/",
      "https://8.8.8.8/",
      "https://172.32.0.1/",
      "https://100.128.0.1/",
      "https://[2606:4700::1111]/",
      "https://[2606:4700:4700::1111]/",
      "https://[::ffff:8.8.8.8]/",
      "https://[::ffff:808:808]/",
    ]) {
      expect(production(url), url).toBeNull();
    }
  });

  it("applies when ENVIRONMENT is unset", () => {
    expect(checkOutboundUrl("http://example.com", undefined)).toBe("must use https");
    expect(checkOutboundUrl("https://localhost", undefined)).toBe("must not name localhost");
  });

  it("requires https", () => {
    expect(production("http://example.com/hook")).toBe("must use https");
    expect(production("http://8.8.8.8/")).toBe("must use https");
  });

  it("refuses localhost and *.localhost, in any case and with trailing dots", () => {
    for (const url of [
      "https://localhost/",
      "https://LOCALHOST:8443",
      "https://localhost./",
      "https://localhost../",
      "https://api.localhost/",
      "https://Api.LocalHost./",
    ]) {
      expect(production(url), url).toBe("must not name localhost");
    }
  });

  it("sees decimal, octal, hex and short IPv4 forms as the dotted quad the URL parser makes of them", () => {
    const forms: [string, string][] = [
      ["https://2130706433/", "127.0.0.1"],
      ["https://0177.0.0.1/", "127.0.0.1"],
      ["https://0x7f.1/", "127.0.0.1"],
      ["https://0x7f000001/", "127.0.0.1"],
      ["https://127.1/", "127.0.0.1"],
      ["https://3232235777/", "192.168.1.1"],
      ["https://0/", "0.0.0.0"],
      ["https://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"],
      ["https://[0:0:0:0:0:0:0:1]/", "[::1]"],
    ];
    for (const [url, hostname] of forms) expect(new URL(url).hostname, url).toBe(hostname);
  });

  it("refuses loopback IPv4 in every form", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://127.1.2.3/",
      "https://127.1/",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0x7f.1/",
      "https://0x7f.0.0.1/",
      "https://0177.0.0.1/",
      "https://127.0.0.1./",
    ]) {
      expect(production(url), url).toBe("must not name a loopback IP address");
    }
  });

  it("refuses private, shared, link-local, unspecified, reserved, multicast and broadcast IPv4", () => {
    const cases: [string, string][] = [
      ["https://10.1.2.3/", "must not name a private IP address"],
      ["https://172.16.0.1/", "must not name a private IP address"],
      ["https://172.31.255.255/", "must not name a private IP address"],
      ["https://192.168.1.1/", "must not name a private IP address"],
      ["https://3232235777/", "must not name a private IP address"],
      ["https://100.64.0.1/", "must not name a shared (carrier-grade NAT) IP address"],
      ["https://100.127.255.255/", "must not name a shared (carrier-grade NAT) IP address"],
      ["https://169.254.169.254/latest/meta-data", "must not name a link-local IP address"],
      ["https://0.0.0.0/", "must not name an unspecified IP address"],
      ["https://0/", "must not name an unspecified IP address"],
      ["https://192.0.0.1/", "must not name a reserved IP address"],
      ["https://192.0.2.1/", "must not name a reserved IP address"],
      ["https://198.18.0.1/", "must not name a reserved IP address"],
      ["https://240.0.0.1/", "must not name a reserved IP address"],
      ["https://224.0.0.1/", "must not name a multicast IP address"],
      ["https://239.255.255.250/", "must not name a multicast IP address"],
      ["https://255.255.255.255/", "must not name a broadcast IP address"],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toBe(reason);
  });

  it("refuses loopback, unspecified, unique local, site-local, link-local and multicast IPv6", () => {
    const cases: [string, string][] = [
      ["https://[::1]/", "must not name a loopback IP address"],
      ["https://[0:0:0:0:0:0:0:1]/", "must not name a loopback IP address"],
      ["https://[::]/", "must not name an unspecified IP address"],
      ["https://[fe80::1]/", "must not name a link-local IP address"],
      ["https://[febf::1]/", "must not name a link-local IP address"],
      ["https://[fc00::1]/", "must not name a private (unique local) IP address"],
      ["https://[fd12:3456::1]/", "must not name a private (unique local) IP address"],
      ["https://[fec0::1]/", "must not name a site-local IP address"],
      ["https://[ff02::1]/", "must not name a multicast IP address"],
      ["https://[2001:db8::1]/", "must not name a reserved IP address"],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toBe(reason);
  });

  it("refuses IPv6 addresses that embed a non-public IPv4 address, for that address", () => {
    const cases: [string, string][] = [
      // IPv4-mapped
      ["https://[::ffff:127.0.0.1]/", "must not name a loopback IP address"],
      ["https://[::ffff:7f00:1]/", "must not name a loopback IP address"],
      ["https://[::ffff:10.0.0.1]/", "must not name a private IP address"],
      ["https://[::ffff:169.254.169.254]/", "must not name a link-local IP address"],
      ["https://[::ffff:0.0.0.0]/", "must not name an unspecified IP address"],
      // IPv4-compatible and IPv4-translated
      ["https://[::127.0.0.1]/", "must not name a loopback IP address"],
      ["https://[::192.168.0.1]/", "must not name a private IP address"],
      ["https://[::ffff:0:127.0.0.1]/", "must not name a loopback IP address"],
      // NAT64
      ["https://[64:ff9b::127.0.0.1]/", "must not name a loopback IP address"],
      ["https://[64:ff9b::192.168.0.1]/", "must not name a private IP address"],
      // 6to4: 2002:AABB:CCDD::
      ["https://[2002:7f00:1::]/", "must not name a loopback IP address"],
      ["https://[2002:a00:1::1]/", "must not name a private IP address"],
      // Teredo: the client's address inverted in the last 32 bits (10.0.0.1 → f5ff:fffe)
      ["https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "must not name a private IP address"],
      ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "must not name a loopback IP address"],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toBe(reason);
  });

  it("refuses transition addresses other than IPv4-mapped even when they embed a public address", () => {
    const cases: [string, string][] = [
      ["https://[::8.8.8.8]/", "must not name an IPv4-compatible IPv6 address"],
      ["https://[::ffff:0:8.8.8.8]/", "must not name an IPv4-translated IPv6 address"],
      ["https://[64:ff9b::8.8.8.8]/", "must not name a NAT64 IPv6 address"],
      ["https://[64:ff9b:1::1]/", "must not name a NAT64 IPv6 address"],
      ["https://[2002:808:808::1]/", "must not name a 6to4 IPv6 address"],
      ["https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", "must not name a Teredo IPv6 address"],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toBe(reason);
  });
});
