import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { startRecordingUpstream } from "./recording-upstream";
import { startToolServer } from "./tool-server";
import { startMcpServer } from "./mcp-server";

/** Serves a web-standard fetch handler on 127.0.0.1 over Node's http module. */
export async function serveFetch(handler: (request: Request) => Promise<Response>): Promise<Server> {
  const server = createServer((req, res) => void forward(handler, req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function forward(handler: (request: Request) => Promise<Response>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  try {
    const response = await handler(
      new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body, signal: abort.signal }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export default async function setup(project: TestProject) {
  const { handleMockModel } = await import("../../src/mock-model/index");
  const mockModel = await serveFetch(handleMockModel);
  const toolServer = await startToolServer(serveFetch);
  const foreign = await startRecordingUpstream(serveFetch, handleMockModel);
  const gateway = await startRecordingUpstream(serveFetch, handleMockModel, urlOf(foreign));
  project.provide("mockModelUrl", urlOf(mockModel));
  project.provide("toolServerUrl", urlOf(toolServer));
  project.provide("gatewayUrl", urlOf(gateway));
  project.provide("foreignUpstreamUrl", urlOf(foreign));
  const mcpServer = await startMcpServer(urlOf(toolServer));
  project.provide("mcpServerUrl", urlOf(mcpServer));
  const servers = [mockModel, toolServer, gateway, foreign, mcpServer];
  return async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  };
}
