import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, createPolicy, otherToken, readOnlyToken, start } from "./helpers";

const run = promisify(execFile);
let server: RunningServer;
let counter = 0;
const newPolicy = () => createPolicy(server, `code-${++counter}`);

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

async function downloadUrl(policyId: string): Promise<string> {
  const answer = await call(server, "GET", `/api/v2/policies/${policyId}/download`);
  expect(answer.status).toBe(302);
  return answer.headers.get("location")!;
}

async function download(policyId: string): Promise<Buffer> {
  const response = await fetch(await downloadUrl(policyId));
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe("upload (spec 4.3)", () => {
  it("stores the exact bytes; afterwards the policy has updated-at, enforce and a download link", async () => {
    const policy = await newPolicy();
    const code = Buffer.from([0x69, 0x6d, 0x70, 0x6f, 0x72, 0x74, 0x00, 0xff, 0xfe, 0x0a]);
    const upload = await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: code });
    expect(upload.status).toBe(204);
    expect(await download(policy.id)).toEqual(code);
    const shown = (await call(server, "GET", `/api/v2/policies/${policy.id}`)).body.data;
    expect(shown.attributes["updated-at"]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(shown.attributes.enforce).toEqual([{ path: `${shown.attributes.name}.sentinel`, mode: "advisory" }]);
    expect(shown.links.download).toBe(`/api/v2/policies/${policy.id}/download`);
  });

  it("accepts an empty body", async () => {
    const policy = await newPolicy();
    expect((await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "" })).status).toBe(204);
    expect((await download(policy.id)).length).toBe(0);
  });

  it("answers 415 to a JSON upload and 404 to a missing policy or a token without permission", async () => {
    const policy = await newPolicy();
    const path = `/api/v2/policies/${policy.id}/upload`;
    const json = await call(server, "PUT", path, { raw: "{}", contentType: "application/json" });
    expect(json.status).toBe(415);
    expect(json.body.errors[0].detail).toContain("application/octet-stream");
    expect((await call(server, "PUT", "/api/v2/policies/pol-doesnotexist0000/upload", { raw: "x" })).status).toBe(404);
    expect((await call(server, "PUT", path, { raw: "x", auth: readOnlyToken })).status).toBe(404);
    expect((await call(server, "PUT", path, { raw: "x", auth: otherToken })).status).toBe(404);
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}/download`)).status).toBe(404);
  });

  it("refuses 11 MB with 413 while streaming, saves nothing and never buffers more than 10 MB", async () => {
    const policy = await newPolicy();
    await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "original" });
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    // Streamed without a Content-Length, so the server can only find out by counting.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 11; index++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const rssBefore = process.memoryUsage().rss;
    const response = await fetch(`${server.url}/api/v2/policies/${policy.id}/upload`, {
      method: "PUT",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/octet-stream" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { errors: { status: string }[] }).errors[0]!.status).toBe("413");
    expect(server.uploadMetrics.peakBufferedBytes).toBeLessThanOrEqual(10 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(30 * 1024 * 1024);
    expect((await download(policy.id)).toString()).toBe("original");
  });

  it("refuses a declared Content-Length over 10 MB before reading it", async () => {
    const policy = await newPolicy();
    const answer = await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, {
      raw: Buffer.alloc(10 * 1024 * 1024 + 1),
    });
    expect(answer.status).toBe(413);
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}/download`)).status).toBe(404);
  });

  it("a declared-oversize upload sent at full speed reads its 413, not a reset: 20 of 20, from another process", async () => {
    const policy = await newPolicy();
    // Node's own client in a process of its own, writing all of 10 MiB + 1 KiB as fast as the socket takes it and
    // reading the answer alongside: a server that closes the socket right after its early 413 leaves bytes in
    // flight, which the kernel answers with a reset (EPIPE for the sender) before some senders read the 413.
    const sender = `
      const http = require("node:http");
      const url = new URL(process.argv[1]);
      const body = Buffer.alloc(10 * 1024 * 1024 + 1024, 0x61);
      const one = () => new Promise((resolve) => {
        const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "PUT",
          agent: false, headers: { authorization: "Bearer " + process.argv[2],
          "content-type": "application/octet-stream", "content-length": body.length } }, (response) => {
            response.resume();
            response.on("end", () => resolve(String(response.statusCode)));
          });
        request.on("error", (error) => resolve(error.code || error.message));
        request.end(body);
      });
      (async () => {
        const results = [];
        for (let index = 0; index < 20; index++) results.push(await one());
        console.log(JSON.stringify(results));
      })();`;
    const { stdout } = await run(process.execPath, [
      "-e",
      sender,
      `${server.url}/api/v2/policies/${policy.id}/upload`,
      server.token,
    ]);
    expect(JSON.parse(stdout)).toEqual(Array(20).fill("413"));
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}/download`)).status).toBe(404);
  }, 60_000);

  it("accepts exactly 10 MB", async () => {
    const policy = await newPolicy();
    const code = Buffer.alloc(10 * 1024 * 1024, 0x62);
    expect((await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: code })).status).toBe(204);
    expect((await download(policy.id)).equals(code)).toBe(true);
  });

  it("never serves half-written code while uploads and downloads run concurrently", async () => {
    const policy = await newPolicy();
    const size = 512 * 1024;
    const versions = ["a", "b", "c", "d"].map((letter) => Buffer.alloc(size, letter));
    await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: versions[0]! });
    const url = await downloadUrl(policy.id);
    const uploads = versions.flatMap((version) =>
      [1, 2].map(() => call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: version })),
    );
    const downloads = Array.from({ length: 24 }, async () => Buffer.from(await (await fetch(url)).arrayBuffer()));
    const [uploaded, downloaded] = await Promise.all([Promise.all(uploads), Promise.all(downloads)]);
    expect(uploaded.every((answer) => answer.status === 204)).toBe(true);
    for (const bytes of downloaded) {
      expect(bytes.length).toBe(size);
      expect(versions.some((version) => version.equals(bytes))).toBe(true);
    }
  });
});

describe("download origin", () => {
  it("lives on another origin, needs no token and refuses forged and expired signatures with 403", async () => {
    const policy = await newPolicy();
    await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "code" });
    const url = new URL(await downloadUrl(policy.id));
    expect(url.origin).toBe(server.downloadOrigin);
    expect(url.origin).not.toBe(server.url);
    const forged = new URL(url);
    forged.searchParams.set("signature", `${url.searchParams.get("signature")!.slice(0, -2)}AA`);
    expect((await fetch(forged)).status).toBe(403);
    const extended = new URL(url);
    extended.searchParams.set("expires", String(Date.now() + 3_600_000));
    expect((await fetch(extended)).status).toBe(403);
    const otherPolicy = new URL(url.toString().replace(policy.id, "pol-someoneelses00"));
    expect((await fetch(otherPolicy)).status).toBe(403);
    expect(await (await fetch(url)).text()).toBe("code");
  });

  it("answers an unknown path with a JSON:API 404", async () => {
    const answer = await fetch(`${server.downloadOrigin}/elsewhere`);
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { errors: { status: string }[] }).errors[0]!.status).toBe("404");
  });

  it("refuses a URL once it has expired", async () => {
    const shortLived = await start({ downloadUrlTtlMs: 50 });
    try {
      const policy = await createPolicy(shortLived, "expiring");
      await call(shortLived, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "code" });
      const url = (await call(shortLived, "GET", `/api/v2/policies/${policy.id}/download`)).headers.get("location")!;
      await new Promise((resolve) => setTimeout(resolve, 120));
      const expired = await fetch(url);
      expect(expired.status).toBe(403);
      expect(((await expired.json()) as { errors: { detail: string }[] }).errors[0]!.detail).toContain("expired");
    } finally {
      await shortLived.close();
    }
  });
});
