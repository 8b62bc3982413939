// Client overhead per show request: TfeClient.policies.read against a raw undici request (plus JSON.parse) to the
// same local node:http server, interleaved in one run so machine noise hits both sides alike. Reports the ratio
// of medians; the target is under 1.2x. Run after `npm run build`:
//   bash scripts/run-with-toolchain.sh node bench/client-overhead.mts [iterations]
// `.mts` because the package is CommonJS and Node runs a `.ts` file with import syntax only as ESM.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";

// The built client is measured, as users run it; typed from the source so typechecking needs no build.
const distClient = "../dist/client/index.js";
const { TfeClient } = (await import(distClient)) as typeof import("../src/client/index.js");

const iterations = Number(process.argv[2] ?? 4000);
const warmup = 500;
const token = "bench-token.atlasv1.0123456789abcdef";
const target = 1.2;

// The show document of a policy as the service sends it, members the client ignores included.
const showDocument = JSON.stringify({
  data: {
    id: "pol-u3S5p2Uwk21keu1s",
    type: "policies",
    attributes: {
      name: "restrict-instance-types",
      description: "Allows only **t3** and **m5** instance types in production workspaces.",
      kind: "sentinel",
      query: null,
      "enforcement-level": "soft-mandatory",
      enforce: [{ path: "restrict-instance-types.sentinel", mode: "soft-mandatory" }],
      "policy-set-count": 2,
      "updated-at": "2026-11-20T10:00:00.000Z",
    },
    relationships: {
      organization: { data: { id: "acme", type: "organizations" } },
      "policy-sets": {
        data: [
          { id: "polset-3yVQZvHzf5j3WRJ1", type: "policy-sets" },
          { id: "polset-9kNmcbF1a8RtDpQx", type: "policy-sets" },
        ],
      },
    },
    links: {
      self: "/api/v2/policies/pol-u3S5p2Uwk21keu1s",
      upload: "/api/v2/policies/pol-u3S5p2Uwk21keu1s/upload",
      download: "/api/v2/policies/pol-u3S5p2Uwk21keu1s/download",
    },
  },
});

const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/vnd.api+json" });
  response.end(showDocument);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const client = new TfeClient({ address, token, rateLimit: false });
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 16 });
const path = "/api/v2/policies/pol-u3S5p2Uwk21keu1s";

async function raw(): Promise<unknown> {
  const { body } = await agent.request({
    origin: address,
    path,
    method: "GET",
    headers: { authorization: `Bearer ${token}`, accept: "application/vnd.api+json" },
  });
  return JSON.parse(await body.text());
}

const viaClient = () => client.policies.read("pol-u3S5p2Uwk21keu1s");

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

for (let i = 0; i < warmup; i++) {
  await raw();
  await viaClient();
}

const rawTimes: number[] = [];
const clientTimes: number[] = [];
for (let i = 0; i < iterations; i++) {
  // Alternating which side goes first cancels any advantage of running right after the other.
  if (i % 2 === 0) {
    rawTimes.push(await timed(raw));
    clientTimes.push(await timed(viaClient));
  } else {
    clientTimes.push(await timed(viaClient));
    rawTimes.push(await timed(raw));
  }
}

await client.close();
await agent.close();
server.close();

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const ratio = percentile(clientTimes, 0.5) / percentile(rawTimes, 0.5);
console.log(`show request, ${iterations} interleaved iterations after ${warmup} warm-up pairs`);
console.log(`  raw undici + JSON.parse: median ${us(percentile(rawTimes, 0.5))}, p90 ${us(percentile(rawTimes, 0.9))}`);
console.log(
  `  TfeClient.policies.read: median ${us(percentile(clientTimes, 0.5))}, p90 ${us(percentile(clientTimes, 0.9))}`,
);
console.log(`  ratio of medians: ${ratio.toFixed(3)}x (target < ${target}x) ${ratio < target ? "OK" : "OVER TARGET"}`);
process.exitCode = ratio < target ? 0 : 1;
