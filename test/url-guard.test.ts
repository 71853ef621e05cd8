import { describe, expect, it } from "vitest";
import { checkOutboundUrl } from "../src/tools/url-guard";

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
  it("allows public https URLs", () => {
    for (const url of [
      "https://example.com/hook",
      "https://api.example.com:8443/v1?q=1",
      "https://8.8.8.8/",
      "https://172.32.0.1/",
      "https://[2606:4700:4700::1111]/",
    ]) {
      expect(production(url), url).toBeNull();
    }
  });

  it("applies when ENVIRONMENT is unset", () => {
    expect(checkOutboundUrl("http://example.com", undefined)).toBe("must use https");
    expect(checkOutboundUrl("https://localhost", undefined)).toMatch(/localhost/);
  });

  it("requires https", () => {
    expect(production("http://example.com/hook")).toBe("must use https");
  });

  it("refuses localhost and *.localhost, in any case and with a trailing dot", () => {
    for (const url of ["https://localhost/", "https://LOCALHOST:8443", "https://localhost./", "https://api.localhost/"]) {
      expect(production(url), url).toMatch(/localhost/);
    }
  });

  it("refuses loopback IPv4 in every form the URL parser normalises", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://127.1.2.3/",
      "https://127.1/",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0x7f.0.0.1/",
      "https://0177.0.0.1/",
      "https://127.0.0.1./",
    ]) {
      expect(production(url), url).toMatch(/loopback/);
    }
  });

  it("refuses private, shared, link-local, unspecified and reserved IPv4", () => {
    const cases: [string, RegExp][] = [
      ["https://10.1.2.3/", /private/],
      ["https://172.16.0.1/", /private/],
      ["https://172.31.255.255/", /private/],
      ["https://192.168.1.1/", /private/],
      ["https://3232235777/", /private/],
      ["https://100.64.0.1/", /shared/],
      ["https://169.254.169.254/latest/meta-data", /link-local/],
      ["https://0.0.0.0/", /unspecified/],
      ["https://0/", /unspecified/],
      ["https://224.0.0.1/", /reserved or multicast/],
      ["https://255.255.255.255/", /reserved or multicast/],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toMatch(reason);
  });

  it("refuses loopback, unspecified, private, link-local and multicast IPv6", () => {
    const cases: [string, RegExp][] = [
      ["https://[::1]/", /loopback/],
      ["https://[0:0:0:0:0:0:0:1]/", /loopback/],
      ["https://[::]/", /unspecified/],
      ["https://[fe80::1]/", /link-local/],
      ["https://[febf::1]/", /link-local/],
      ["https://[fc00::1]/", /private/],
      ["https://[fd12:3456::1]/", /private/],
      ["https://[fec0::1]/", /private/],
      ["https://[ff02::1]/", /multicast/],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toMatch(reason);
  });

  it("refuses IPv6 addresses that embed a non-public IPv4 address", () => {
    const cases: [string, RegExp][] = [
      ["https://[::ffff:127.0.0.1]/", /loopback/],
      ["https://[::ffff:7f00:1]/", /loopback/],
      ["https://[::ffff:10.0.0.1]/", /private/],
      ["https://[::ffff:169.254.169.254]/", /link-local/],
      ["https://[::127.0.0.1]/", /loopback/],
      ["https://[64:ff9b::192.168.0.1]/", /private/],
      ["https://[2002:7f00:1::]/", /loopback/],
    ];
    for (const [url, reason] of cases) expect(production(url), url).toMatch(reason);
    expect(production("https://[::ffff:8.8.8.8]/")).toBeNull();
  });
});
