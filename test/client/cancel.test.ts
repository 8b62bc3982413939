import { describe, expect, it } from "vitest";
import { TfeCancelledError } from "../../src/client/index";
import { empty, hang, type Reply, rejection, sequence, showPolicy, startFaultServer, testClient } from "./helpers";

// A run cancelled (the engine's Cancel, Ctrl-C) stops the client's work: waits between retries and reads in flight end
// at once, nothing is sent after it, and a write already sent is let finish, so that what it made is known. Each
// wait below is a minute long: a cancellation that did not cut it would time the test out.

const minuteRetry = { baseDelayMs: 60_000, maxDelayMs: 60_000, maxRetries: 3, maxElapsedMs: 600_000 };

/** Calls `reply` once the request is in, after `then` ran (the test's cancel), so the order is the test's. */
function onArrival(then: () => void, reply: Reply): Reply {
  return (request, response, index) => {
    then();
    reply(request, response, index);
  };
}

describe("cancelling a client's work", () => {
  it("ends a wait between retries at once, sending nothing more", async () => {
    const controller = new AbortController();
    const server = await startFaultServer(empty(503));
    const client = testClient(server.url, { retry: minuteRetry, signal: controller.signal });
    const read = rejection(() => client.policies.read("pol-1"));
    await new Promise((answered) => setTimeout(answered, 200));
    controller.abort();
    const error = await read;
    expect(error).toBeInstanceOf(TfeCancelledError);
    expect((error as Error).message).toBe("GET /api/v2/policies/pol-1 stopped: the run was cancelled");
    expect(server.requests).toHaveLength(1);
  });

  it("cuts off a read in flight", async () => {
    const controller = new AbortController();
    const server = await startFaultServer(onArrival(() => controller.abort(), hang));
    const client = testClient(server.url, { retry: minuteRetry, timeoutMs: 60_000, signal: controller.signal });
    expect(await rejection(() => client.policies.read("pol-1"))).toBeInstanceOf(TfeCancelledError);
    expect(server.requests).toHaveLength(1);
  });

  it("lets a write in flight finish and sends nothing after it", async () => {
    const controller = new AbortController();
    const answerLater: Reply = (request, response, index) =>
      setTimeout(() => showPolicy("pol-made")(request, response, index), 300);
    const server = await startFaultServer(sequence(onArrival(() => controller.abort(), answerLater)));
    const client = testClient(server.url, { retry: minuteRetry, signal: controller.signal });
    const made = await client.policies.create("acme", { name: "restrict", enforcementLevel: "advisory" });
    expect(made.id).toBe("pol-made");
    expect(await rejection(() => client.policies.upload(made.id, "main = rule { true }"))).toBeInstanceOf(
      TfeCancelledError,
    );
    expect(server.requests.map((request) => request.method)).toEqual(["POST"]);
  });

  it("sends nothing once cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const server = await startFaultServer(showPolicy());
    const client = testClient(server.url, { signal: controller.signal });
    expect(await rejection(() => client.policies.read("pol-1"))).toBeInstanceOf(TfeCancelledError);
    expect(server.requests).toEqual([]);
  });
});
