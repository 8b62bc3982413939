import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, checkDocumentedStatus, createPolicy, organization, start, token } from "./helpers";

let server: RunningServer;
beforeAll(async () => {
  server = await start({ bodyTimeoutMs: 1000, uploadBufferBudgetBytes: 1024 * 1024 });
});
afterAll(() => server.close());

interface RawAnswer {
  status: number;
  text: string;
}

/** Sends the head and the first `sent` bytes of a body of `declared` bytes, then stalls. */
function stalledRequest(
  method: string,
  path: string,
  declared: number,
  sent: number,
  contentType: string,
  origin = server.url,
) {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  const answer = new Promise<RawAnswer>((resolve) => {
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
    });
    const finish = () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", () => {});
  }).then(async (raw) => {
    // Raw answers are held to the OpenAPI document too, as every answer through `call` is (0: the test hung up).
    if (raw.status !== 0) await checkDocumentedStatus(server, method, path, raw.status);
    return raw;
  });
  socket.write(
    `${method} ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\n` +
      `content-type: ${contentType}\r\ncontent-length: ${declared}\r\n\r\n`,
  );
  socket.write(Buffer.alloc(sent, 0x61));
  return { socket, answer };
}

const uploadPath = (id: string) => `/api/v2/policies/${id}/upload`;

describe("bodies that never finish", () => {
  it("answers 408 to an upload that stops after 1 KB of 5 KB, and closes the connection", async () => {
    const policy = await createPolicy(server, "stalled-upload");
    const { answer } = stalledRequest("PUT", uploadPath(policy.id), 5 * 1024, 1024, "application/octet-stream");
    const { status, text } = await answer;
    expect(status).toBe(408);
    expect(text).toMatch(/connection: close/i);
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}`)).body.data.links.download).toBeUndefined();
  });

  it("answers 408 on the download origin too, to a policy set archive that stops halfway", async () => {
    const created = await call(server, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
      body: { data: { type: "policy-sets", attributes: { name: "stalled-archive" } } },
    });
    const version = await call(server, "POST", `/api/v2/policy-sets/${created.body.data.id}/versions`);
    const link = new URL(version.body.data.links.upload);
    const { answer } = stalledRequest(
      "PUT",
      link.pathname + link.search,
      5 * 1024,
      1024,
      "application/octet-stream",
      link.origin,
    );
    const { status, text } = await answer;
    expect(status).toBe(408);
    expect(text).toMatch(/connection: close/i);
    expect(server.uploadMetrics.bufferedBytes).toBe(0);
  });

  it("answers 408 to a JSON body that stops halfway", async () => {
    const { answer } = stalledRequest(
      "POST",
      `/api/v2/organizations/${organization}/policies`,
      200,
      20,
      "application/vnd.api+json",
    );
    expect((await answer).status).toBe(408);
  });
});

describe("buffered upload bytes are bounded in total", () => {
  it("answers 503 once stalled uploads would hold more than the budget, and never holds more", async () => {
    const first = await createPolicy(server, "budget-one");
    const second = await createPolicy(server, "budget-two");
    const sockets: Socket[] = [];
    try {
      const one = stalledRequest("PUT", uploadPath(first.id), 900 * 1024, 700 * 1024, "application/octet-stream");
      sockets.push(one.socket);
      await vi.waitFor(() => expect(server.uploadMetrics.bufferedBytes).toBe(700 * 1024), { timeout: 900 });
      const two = stalledRequest("PUT", uploadPath(second.id), 900 * 1024, 700 * 1024, "application/octet-stream");
      sockets.push(two.socket);
      const { status, text } = await two.answer;
      expect(status).toBe(503);
      expect(text).toMatch(/retry-after: \d+/i);
      expect(server.uploadMetrics.peakTotalBufferedBytes).toBeLessThanOrEqual(1024 * 1024);
      expect((await one.answer).status).toBe(408);
      expect(server.uploadMetrics.bufferedBytes).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});

describe("aborted uploads", () => {
  it("are logged as client aborts, not as server errors", async () => {
    const policy = await createPolicy(server, "aborted-upload");
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      server.requestLog.clear();
      const { socket } = stalledRequest("PUT", uploadPath(policy.id), 5 * 1024, 1024, "application/octet-stream");
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      await vi.waitFor(() => expect(server.requestLog.entries()).toHaveLength(1), { timeout: 900 });
    } finally {
      spy.mockRestore();
    }
    expect(written.join("")).not.toMatch(/aborted|ECONNRESET|server error/i);
    expect(server.requestLog.entries()[0]).toMatchObject({ status: 0, clientAborted: true });
  });
});

describe("a body no parser reads (a GET's), from a client that leaves", () => {
  // Before the body is looked at (an injected delay before the handler): the answer has closed before the body
  // timeout starts. While its answer is pending (a delay after the handler): the body's abort has no parser to go to.
  it.each([
    ["before the body is looked at", false, 100],
    ["while its answer is pending", true, 200],
  ])("%s: the connection closes, and the server lives on", async (_when, afterHandler, leaveAfterMs) => {
    const uncaught: unknown[] = [];
    const collect = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", collect);
    const listPolicies = `/api/v2/organizations/${organization}/policies`;
    const route = "GET /api/v2/organizations/:organization/policies";
    server.setFaults([{ route, latencyMs: afterHandler ? 500 : 300, afterHandler }]);
    try {
      const { socket } = stalledRequest("GET", listPolicies, 100, 1, "application/vnd.api+json");
      await new Promise((resolve) => setTimeout(resolve, leaveAfterMs));
      socket.destroy();
      // Past the delay and the 1 s body timeout.
      await new Promise((resolve) => setTimeout(resolve, 1800));
    } finally {
      server.setFaults([]);
      process.off("uncaughtException", collect);
    }
    expect(uncaught).toEqual([]);
    expect((await call(server, "GET", listPolicies)).status).toBe(200);
  });
});

describe("issue 10 item 6", () => {
  it("answers 413 to a 10 MB + 1 upload, not a connection reset, five times in a row", async () => {
    const roomy = await start({ uploadBufferBudgetBytes: 64 * 1024 * 1024 });
    try {
      const policy = await createPolicy(roomy, "too-large");
      const body = new Uint8Array(10 * 1024 * 1024 + 1);
      for (let attempt = 0; attempt < 5; attempt++) {
        expect((await call(roomy, "PUT", uploadPath(policy.id), { raw: body })).status).toBe(413);
      }
    } finally {
      await roomy.close();
    }
  });

  it("answers 413 to a streamed body four times the limit, not a reset, on both upload routes, eight times each", async () => {
    // Sent chunked, as a streaming client does: the server answered at the limit and closed while the client still
    // wrote, which gave it EPIPE instead of the answer (13 of 16 here before the server read the rest first).
    const roomy = await start({ uploadBufferBudgetBytes: 64 * 1024 * 1024 });
    try {
      const policy = await createPolicy(roomy, "far-too-large");
      const created = await call(roomy, "POST", "/api/v2/organizations/acme/policy-sets", {
        body: { data: { type: "policy-sets", attributes: { name: "far-too-large" } } },
      });
      const outcomes: string[] = [];
      for (let attempt = 0; attempt < 8; attempt++) {
        outcomes.push(
          await streamedPut(`${roomy.url}${uploadPath(policy.id)}`, { authorization: `Bearer ${roomy.token}` }),
        );
        const version = await call(roomy, "POST", `/api/v2/policy-sets/${created.body.data.id}/versions`);
        outcomes.push(await streamedPut(version.body.data.links.upload, {}));
      }
      expect(outcomes).toEqual(Array(16).fill("413"));
    } finally {
      await roomy.close();
    }
  }, 120_000);

  it("answers 404, not 414 echoing the URL, to a policy id over 100 characters", async () => {
    const id = `pol-${"x".repeat(200)}`;
    const answer = await call(server, "GET", `/api/v2/policies/${id}`);
    expect(answer.status).toBe(404);
    expect(answer.text).not.toContain(id);
  });

  it("says the body is not JSON, whatever the JSON media type", async () => {
    const answer = await call(server, "POST", `/api/v2/organizations/${organization}/policies`, {
      raw: "{not json",
      contentType: "application/vnd.api+json",
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].detail).not.toContain("'application/json'");
    expect(answer.body.errors[0].detail).toMatch(/not valid JSON/);
  });

  it("answers 409 when data.id names another policy than the path", async () => {
    const one = await createPolicy(server, "conflict-one");
    const other = await createPolicy(server, "conflict-other");
    const answer = await call(server, "PATCH", `/api/v2/policies/${one.id}`, {
      body: { data: { type: "policies", id: other.id, attributes: { description: "changed" } } },
    });
    expect(answer.status).toBe(409);
    expect(answer.body.errors[0].source).toEqual({ pointer: "/data/id" });
    const unchanged = await call(server, "GET", `/api/v2/policies/${one.id}`);
    expect(unchanged.body.data.attributes.description).toBeNull();
  });

  it("refuses text with a lone UTF-16 surrogate with 422 naming the attribute", async () => {
    const answer = await call(server, "POST", `/api/v2/organizations/${organization}/policies`, {
      body: {
        data: {
          type: "policies",
          attributes: { name: "surrogate", description: "a\uD800b", "enforcement-level": "advisory" },
        },
      },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors[0].source).toEqual({ pointer: "/data/attributes/description" });
    expect(answer.body.errors[0].detail).toMatch(/^description /);
  });

  it("builds pagination links from the server's own address, not the Host header", async () => {
    // fetch may not set Host, so the request goes over a socket of its own.
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    socket.write(
      `GET /api/v2/organizations/${organization}/policies HTTP/1.1\r\nhost: evil.example\r\n` +
        `authorization: Bearer ${token}\r\nconnection: close\r\n\r\n`,
    );
    let text = "";
    for await (const chunk of socket) text += String(chunk);
    const links = (JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { links: Record<string, string | null> })
      .links;
    expect(links.self).toMatch(new RegExp(`^${server.url}/api/v2/`));
    expect(JSON.stringify(links)).not.toContain("evil.example");
  });
});

/** PUTs 40 MB chunked, 256 KB a write, each once the last drained: the answer's status, or the socket's error. */
function streamedPut(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((done) => {
    const target = new URL(url);
    const put = httpRequest({
      host: target.hostname,
      port: target.port,
      path: `${target.pathname}${target.search}`,
      method: "PUT",
      headers: { ...headers, "content-type": "application/octet-stream" },
    });
    let settled = false;
    const settle = (outcome: string) => {
      if (settled) return;
      settled = true;
      done(outcome);
    };
    put.on("response", (response) => {
      response.resume();
      response.on("end", () => settle(String(response.statusCode)));
    });
    put.on("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
    const chunk = Buffer.alloc(256 * 1024);
    let sent = 0;
    const write = () => {
      while (sent < 40 * 1024 * 1024) {
        sent += chunk.length;
        if (!put.write(chunk)) {
          put.once("drain", write);
          return;
        }
      }
      put.end();
    };
    write();
  });
}

/**
 * The status of an answer that comes while the client still holds the connection open, sending nothing more (within
 * 2 s, far below the server's own body timeout); 0 where none came.
 */
async function answeredWhileWaiting({ socket, answer }: ReturnType<typeof stalledRequest>): Promise<number> {
  let answered = false;
  socket.once("data", () => {
    answered = true;
  });
  for (let waited = 0; waited < 200 && !answered; waited++) await new Promise((done) => setTimeout(done, 10));
  socket.destroy();
  return answered ? (await answer).status : 0;
}

describe("a declared length over the limit", () => {
  // The server's own body timeout, not the short one of the tests above: the answer must not wait for it.
  let patient: RunningServer;
  beforeAll(async () => {
    patient = await start({ uploadBufferBudgetBytes: 64 * 1024 * 1024 });
  });
  afterAll(() => patient?.close());

  it("answers 413 at once from the header, to a client that sends 10 bytes of a declared 11 MiB and waits", async () => {
    const policy = await createPolicy(patient, "declared-too-large");
    const stalled = stalledRequest(
      "PUT",
      uploadPath(policy.id),
      11 * 1024 * 1024,
      10,
      "application/octet-stream",
      patient.url,
    );
    expect(await answeredWhileWaiting(stalled)).toBe(413);
  });

  it("answers 413 at once on the download origin too, to a version archive declared over the limit", async () => {
    const created = await call(patient, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
      body: { data: { type: "policy-sets", attributes: { name: "declared-too-large" } } },
    });
    const version = await call(patient, "POST", `/api/v2/policy-sets/${created.body.data.id}/versions`);
    const link = new URL(version.body.data.links.upload);
    const stalled = stalledRequest(
      "PUT",
      link.pathname + link.search,
      64 * 1024 * 1024,
      10,
      "application/octet-stream",
      link.origin,
    );
    expect(await answeredWhileWaiting(stalled)).toBe(413);
  });
});
