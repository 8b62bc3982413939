// Throughput and latency of the local server on loopback: show a policy, list a page of 100, upload 100 KB.
// Each scenario runs a fixed number of requests over several keep-alive connections and reports requests per
// second and p50/p99 latency. Numbers only; nothing is asserted. Run after `npm run build`:
//   bash scripts/run-with-toolchain.sh node bench/server.ts [requests-per-scenario] [concurrency]
// require, not import: Node runs this file as CommonJS with its types stripped, loading the compiled server.
const { Agent, request } = require("undici") as typeof import("undici");
const { startServer } = require("../dist/server/index.js") as typeof import("../src/server/index");

const requestsPerScenario = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 16);
const organization = "bench";
const token = "bench-token.atlasv1.0123456789abcdef";

interface Scenario {
  name: string;
  method: "GET" | "PUT";
  path: string;
  body?: Buffer;
  headers?: Record<string, string>;
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
}

async function measure(origin: string, agent: InstanceType<typeof Agent>, scenario: Scenario, count: number) {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const started = performance.now();
      const response = await request(`${origin}${scenario.path}`, {
        method: scenario.method,
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, ...scenario.headers },
        body: scenario.body,
      });
      await response.body.dump();
      if (response.statusCode >= 300) throw new Error(`${scenario.name}: status ${response.statusCode}`);
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    scenario: scenario.name,
    requests: latencies.length,
    "req/s": Math.round(latencies.length / seconds),
    "p50 ms": Number(percentile(latencies, 0.5).toFixed(2)),
    "p99 ms": Number(percentile(latencies, 0.99).toFixed(2)),
  };
}

async function main() {
  const server = await startServer({
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization] }],
    },
  });
  const agent = new Agent({ connections: concurrency });
  try {
    let policyId = "";
    for (let index = 0; index < 100; index++) {
      const response = await request(`${server.url}/api/v2/organizations/${organization}/policies`, {
        method: "POST",
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
        body: JSON.stringify({
          data: { type: "policies", attributes: { name: `bench-${index}`, "enforcement-level": "advisory" } },
        }),
      });
      policyId = ((await response.body.json()) as { data: { id: string } }).data.id;
    }
    const scenarios: Scenario[] = [
      { name: "show", method: "GET", path: `/api/v2/policies/${policyId}` },
      {
        name: "list (page of 100)",
        method: "GET",
        path: `/api/v2/organizations/${organization}/policies?page%5Bsize%5D=100`,
      },
      {
        name: "upload (100 KB)",
        method: "PUT",
        path: `/api/v2/policies/${policyId}/upload`,
        body: Buffer.alloc(100 * 1024, "p"),
        headers: { "content-type": "application/octet-stream" },
      },
    ];
    const results = [];
    for (const scenario of scenarios) {
      await measure(server.url, agent, scenario, Math.ceil(requestsPerScenario / 10));
      results.push(await measure(server.url, agent, scenario, requestsPerScenario));
    }
    console.log(`tfe-governance-server on loopback, ${concurrency} connections, Node ${process.version}`);
    console.table(results);
  } finally {
    await agent.close();
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
