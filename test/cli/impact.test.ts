import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { impactMain } from "../../src/cli/impact";
import { type RunningServer, startServer } from "../../src/server";
import { launchChromium } from "../browser";
import { docBlocks, freshEnv, script, substitute } from "../e2e/doc-recipes";
import { startSeededServer } from "../seeded-server";
import { compiledCli } from "../server/cli-process";
import { temporaryDirectory } from "../temporary-directory";

// `tfe-governance impact` against the local server's seeded runs over HTTP: the matrix of workspaces by policy as a
// table, as JSON, and as a page whose every failing run links to the service's run page.

const organization = "acme";
const token = "impact-cli-token-0123456789";
const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600 * 1000).toISOString();

const governanceCli = join(compiledCli(), "..", "..", "cli", "tfe-governance.js");

let server: RunningServer;

// What the browser test reads of the page, typed here: the project compiles without the DOM's types.
type Rendered = { innerText: string };
type Window = { getComputedStyle(element: unknown): { backgroundColor: string } };

beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    workspaces: [
      { id: "ws-CliPayments00001", name: "payments-prod" },
      { id: "ws-CliWeb0000000001", name: "web <beta>" },
    ],
    runs: [
      {
        id: "run-CliPay0001",
        workspace: "ws-CliPayments00001",
        createdAt: daysAgo(1),
        policyResults: [
          { policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" as const },
          { policySet: "baseline", policy: "restrict-regions", level: "hard-mandatory", status: "failed" as const },
        ],
      },
      { id: "run-CliPay0002", workspace: "ws-CliPayments00001", createdAt: daysAgo(60), policyResults: [] },
      {
        id: "run-CliWeb0001",
        workspace: "ws-CliWeb0000000001",
        createdAt: daysAgo(2),
        policyResults: [
          { policySet: "baseline", policy: "require-tags", level: "advisory", status: "passed" as const },
        ],
      },
    ],
  });
});
afterAll(() => server?.close());

async function impact(args: string[]) {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk) => (text += chunk));
  const logged: string[] = [];
  const code = await impactMain(args, {
    out,
    log: (line) => logged.push(line),
    env: { TFE_ADDRESS: server.url, TFE_TOKEN: token, TFE_ORGANIZATION: organization },
  });
  return { code, text, logged };
}

describe("tfe-governance impact", () => {
  it("prints each workspace's results by policy, what a raise would block, and the answer preview gives", async () => {
    const { code, text } = await impact(["--policy", "require-tags", "--level", "hard-mandatory"]);
    expect(code).toBe(0);
    const lines = text.split("\n");
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      "workspace",
      "policy (set)",
      "passed",
      "failed, advisory",
      "failed, blocking",
      "would block at hard-mandatory",
      "last failure",
    ]);
    expect(lines.slice(2, 4).map((line) => line.split(/\s{2,}/))).toEqual([
      ["payments-prod", "require-tags (baseline)", "0", "1", "0", "1", expect.stringMatching(/^run-CliPay0001 \d{4}-/)],
      ["web <beta>", "require-tags (baseline)", "1", "0", "0", "0"],
    ]);
    expect(lines[4]).toMatch(
      /^policy "require-tags" at hard-mandatory would have blocked 1 run in 1 of 2 workspaces in the last 30 days: payments-prod \(run-CliPay0001, \d{4}-\d\d-\d\d, failed at advisory\) \(2 of 2 workspaces read whole\)$/,
    );
  });

  it("prints – where no level was asked, never a count that reads as safe to raise", async () => {
    const { text } = await impact(["--policy", "require-tags"]);
    expect(text.split("\n")[2]?.split(/\s{2,}/)[5]).toBe("–");
  });

  it("takes --address as import does, over the environment's", async () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk) => (text += chunk));
    const code = await impactMain(["--address", server.url, "--organization", organization, "--json"], {
      out,
      log: () => {},
      env: { TFE_ADDRESS: "https://127.0.0.1:1", TFE_TOKEN: token },
    });
    expect(code).toBe(0);
    expect(JSON.parse(text).address).toBe(server.url);
  });

  it('runs as "Making governance stricter" writes it, the address and token given as every command takes them', async () => {
    const [block] = docBlocks("docs/reviewing-governance-changes.md", "## Making governance stricter", "sh");
    const dir = temporaryDirectory("impact-doc-");
    let line = substitute(block as string, "TFE_TOKEN=...", `TFE_TOKEN=${token}`);
    line = substitute(line, "npx tfe-governance", `"${process.execPath}" "${governanceCli}"`);
    line = substitute(line, "https://app.terraform.io", server.url);
    const said = await script(line, dir, { ...freshEnv({}), TFE_TOKEN: undefined });
    expect(said).toContain("wrote impact.html");
    const page = readFileSync(join(dir, "impact.html"), "utf8");
    expect(page).toContain("would block at hard-mandatory");
    expect(page).toContain(`href="${server.url}/app/acme/workspaces/payments-prod/runs/run-CliPay0001"`);
  });

  it("answers the matrix as JSON", async () => {
    const { text } = await impact(["--json"]);
    const report = JSON.parse(text);
    expect(report.policies).toEqual(["require-tags (baseline)", "restrict-regions (baseline)"]);
    expect(
      report.workspaces.map((workspace: { name: string; runs: number }) => [workspace.name, workspace.runs]),
    ).toEqual([
      ["payments-prod", 1],
      ["web <beta>", 1],
    ]);
    expect(report.workspaces[0].cells["restrict-regions (baseline)"]).toMatchObject({ failedBlocking: 1 });
  });

  it("writes a page that needs nothing else, each failing run linked to its page on the service", async () => {
    const file = join(temporaryDirectory("impact-html-"), "impact.html");
    const { logged } = await impact(["--html", file]);
    expect(logged).toContain(`wrote ${file}`);
    const page = readFileSync(file, "utf8");
    expect(page).not.toMatch(/<script|<link|src=/);
    expect(page).toContain('<th scope="row">web &#60;beta&#62;</th>');
    expect(page).toContain(`href="${server.url}/app/acme/workspaces/payments-prod/runs/run-CliPay0001"`);
    expect([...page.matchAll(/data-result="(\w+)"/g)].map((match) => match[1])).toEqual([
      "advisory",
      "blocked",
      "passed",
      "none",
    ]);
  });

  it("opens in a real headless browser: the matrix, a colour per result, nothing fetched, a run's link to its page", async () => {
    const file = join(temporaryDirectory("impact-browser-"), "impact.html");
    await impact(["--html", file]);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      // Self-contained: every request the page makes is recorded and refused, the page's own file aside.
      const fetched: string[] = [];
      await page.route("**/*", (route) => {
        const url = route.request().url();
        if (url === pathToFileURL(file).href) return route.continue();
        fetched.push(url);
        return route.abort();
      });
      await page.goto(pathToFileURL(file).href);
      expect(await page.title()).toBe("Policy results of acme");
      const matrix = await page
        .locator("table tr")
        .evaluateAll((rows) =>
          rows.map((row) =>
            [...row.children].map((cell) => (cell as unknown as Rendered).innerText.replace(/\s+/g, " ")),
          ),
        );
      const day = (await impact(["--json"])).text.match(/"createdAt": "(\d{4}-\d\d-\d\d)/)?.[1] as string;
      expect(matrix).toEqual([
        ["workspace", "require-tags (baseline)", "restrict-regions (baseline)"],
        ["payments-prod", `0 passed, 1 failed run-CliPay0001 ${day}`, `0 passed, 1 failed run-CliPay0001 ${day}`],
        ["web <beta>", "1 passed, 0 failed", "–"],
      ]);
      const colour = (result: string) =>
        page
          .locator(`td[data-result="${result}"]`)
          .evaluate((cell) => (globalThis as unknown as Window).getComputedStyle(cell).backgroundColor);
      const colours = {
        advisory: await colour("advisory"),
        blocked: await colour("blocked"),
        passed: await colour("passed"),
      };
      expect(colours).toEqual({
        advisory: "rgb(255, 232, 179)",
        blocked: "rgb(245, 183, 177)",
        passed: "rgb(217, 242, 217)",
      });
      expect(fetched).toEqual([]);
      // Following a failing run's link asks the service for that run's page.
      const navigation = page.waitForRequest((request) => request.url().startsWith(server.url));
      await page.locator('td[data-result="advisory"] a').click();
      expect((await navigation).url()).toBe(`${server.url}/app/acme/workspaces/payments-prod/runs/run-CliPay0001`);

      // With --level, the page answers the question it was asked: a column of what the raise would block in each
      // workspace, and the answer preview gives above the matrix. Its links lead to the local server's run page.
      const raised = join(temporaryDirectory("impact-level-"), "impact.html");
      await impact(["--policy", "require-tags", "--level", "hard-mandatory", "--html", raised]);
      const levelPage = await browser.newPage();
      await levelPage.goto(pathToFileURL(raised).href);
      const levelMatrix = await levelPage
        .locator("table tr")
        .evaluateAll((rows) =>
          rows.map((row) =>
            [...row.children].map((cell) => (cell as unknown as Rendered).innerText.replace(/\s+/g, " ")),
          ),
        );
      expect(levelMatrix).toEqual([
        ["workspace", "require-tags (baseline)", "would block at hard-mandatory"],
        ["payments-prod", `0 passed, 1 failed run-CliPay0001 ${day}`, "1"],
        ["web <beta>", "1 passed, 0 failed", "0"],
      ]);
      expect(await levelPage.locator("p.answer").innerText()).toMatch(
        /^policy "require-tags" at hard-mandatory would have blocked 1 run in 1 of 2 workspaces/,
      );
      await levelPage.locator('td[data-result="advisory"] a').click();
      await levelPage.waitForURL(`${server.url}/app/acme/workspaces/payments-prod/runs/run-CliPay0001`);
      expect(await levelPage.title()).toBe("run-CliPay0001 of payments-prod");
      expect(await levelPage.locator("table").innerText()).toContain("require-tags");
    } finally {
      await browser.close();
    }
  });

  it("shows the quickstart seed's recent failures of require-tags, as docs/local-server.md says", async () => {
    const quickstart = await startServer({ seed: join(__dirname, "..", "..", "examples", "quickstart", "seed.json") });
    try {
      const out = new PassThrough();
      let text = "";
      out.on("data", (chunk) => (text += chunk));
      const env = { TFE_ADDRESS: quickstart.url, TFE_TOKEN: "quickstart-token-not-a-secret" };
      expect(await impactMain(["--organization", "acme", "--json"], { out, log: () => {}, env })).toBe(0);
      const production = JSON.parse(text).workspaces.find(
        (workspace: { name: string }) => workspace.name === "production",
      );
      expect(production.cells["require-tags (baseline)"]).toMatchObject({ passed: 1, failedAdvisory: 2 });
    } finally {
      await quickstart.close();
    }
  });

  it("names the organization and how it is given where the service does not know it", async () => {
    const wrong = await impact(["--organization", "acmee"]);
    expect(wrong.code).toBe(2);
    expect(wrong.logged).toEqual([
      'tfe-governance impact: GET /api/v2/organizations/acmee/workspaces: organization "acmee" does not exist, or this token has no access to ' +
        "it (404): check --organization (or TFE_ORGANIZATION) and the token",
    ]);
  });

  // Review of issue 52: a command line's failures say which command they are, an unknown option where the options
  // are, and a refused token the ways this command takes one (a program's tfe:token is no setting of it).
  it("says its failures as tfe-governance impact, pointing to --help and to the token's ways", async () => {
    const typo = await impact(["--organisation", "acme"]);
    expect([typo.code, typo.logged]).toEqual([
      2,
      ["tfe-governance impact: Unknown option '--organisation'; see tfe-governance impact --help"],
    ]);
    const logged: string[] = [];
    const refused = await impactMain([], {
      out: new PassThrough(),
      log: (line) => logged.push(line),
      env: { TFE_ADDRESS: server.url, TFE_TOKEN: "not-a-token-of-this-server-0123", TFE_ORGANIZATION: organization },
    });
    expect([refused, logged]).toEqual([
      2,
      [
        "tfe-governance impact: GET /api/v2/organizations/acme/workspaces: the token was not accepted (401): the " +
          "token came from TFE_TOKEN, which is read before any credentials file: set a valid API token there, or " +
          `unset it and run "terraform login ${new URL(server.url).host}"`,
      ],
    ]);
  });

  it("names what it needs when it lacks it, and a level its kind does not have", async () => {
    expect((await impact(["--level", "hard-mandatory"])).logged).toEqual([
      "tfe-governance impact: --level says what a raise of one policy would block: give --policy NAME too",
    ]);
    expect((await impact(["--days", "0"])).logged).toEqual([
      "tfe-governance impact: --days 0: give a whole number above 0",
    ]);
    const typo = await impact(["--policy", "require-tags", "--level", "hard-mandatroy"]);
    expect([typo.code, typo.logged]).toEqual([
      2,
      [
        "tfe-governance impact: --level hard-mandatroy is no level of a sentinel policy: use advisory, soft-mandatory, hard-mandatory (--kind names the kind)",
      ],
    ]);
    const otherKind = await impact(["--policy", "require-tags", "--level", "mandatory", "--kind", "tfpolicy"]);
    expect(otherKind.code).toBe(0);
    const wrongKind = await impact(["--policy", "require-tags", "--level", "mandatory"]);
    expect(wrongKind.logged[0]).toMatch(/^tfe-governance impact: --level mandatory is no level of a sentinel policy/);
    expect((await impact(["--policy", "require-tags", "--level", "advisory"])).logged).toEqual([
      "tfe-governance impact: --level advisory blocks no run: give a level that does (soft-mandatory, hard-mandatory)",
    ]);
  });
});
