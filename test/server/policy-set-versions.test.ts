import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Header } from "tar";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { collectFolder, packFiles } from "../../src/policy-code/archive";
import { type RunningServer, startServer } from "../../src/server";
import { ingressErrorMessage } from "../../src/server/policy-set-ingress";
import { Storage } from "../../src/server/storage";
import { call, createPolicy, organization, seed, settledVersion, start } from "./helpers";

let server: RunningServer;

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const text = (value: string) => Buffer.from(value, "utf8");

/** A Sentinel folder in the shapes real sets use: a module, a static import, a parameter, a remote source. */
const sentinelFolder = new Map<string, Uint8Array>([
  [
    "sentinel.hcl",
    text(`module "tfplan-functions" {
  source = "./modules/tfplan-functions.sentinel"
}
import "static" "allowed" {
  source = "./data/allowed.json"
  format = "json"
}
param "limit" {
  value = 5
}
policy "use-recent-versions.sentinel" {
  source            = "./use-recent-versions.sentinel"
  enforcement_level = "hard-mandatory"
}
policy "remote" {
  source            = "https://raw.githubusercontent.com/hashicorp/policy-library/main/remote.sentinel"
  enforcement_level = "advisory"
}
`),
  ],
  ["modules/tfplan-functions.sentinel", text("find_all = func() { return [] }\n")],
  ["data/allowed.json", text('{"regions": ["eu-west-1"]}\n')],
  [
    "use-recent-versions.sentinel",
    text(
      'import "tfplan-functions" as plan\nimport "allowed"\nimport "strings"\nparam limit\nmain = rule { length(plan.find_all()) < limit }\n',
    ),
  ],
]);

async function newSet(name: string, kind = "sentinel") {
  const answer = await call(server, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
    body: { data: { type: "policy-sets", attributes: { name, kind } } },
  });
  if (answer.status !== 201) throw new Error(answer.text);
  return answer.body.data.id as string;
}

async function newVersion(setId: string) {
  const answer = await call(server, "POST", `/api/v2/policy-sets/${setId}/versions`);
  expect(answer.status).toBe(201);
  expect(answer.body.data.attributes.status).toBe("pending");
  return { id: answer.body.data.id as string, upload: answer.body.data.links.upload as string };
}

/** PUTs to the link as go-tfe does: no Authorization header. */
function upload(link: string, archive: Uint8Array) {
  return fetch(link, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: archive });
}

const settled = (versionId: string) => settledVersion(server, versionId);

/** A tar of raw entries, as a hostile or broken client could write it. */
function rawTar(entries: { path: string; type: string; body?: string; linkpath?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? "");
    const block = Buffer.alloc(512);
    new Header({
      path: entry.path,
      type: entry.type as "File",
      size: body.length,
      mode: 0o644,
      mtime: new Date(0),
      ...(entry.linkpath ? { linkpath: entry.linkpath } : {}),
    }).encode(block);
    blocks.push(block, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

describe("policy set versions: an uploaded folder", () => {
  it("goes pending, then ready once uploaded to its link without a token, and becomes the set's current version", async () => {
    const setId = await newSet("versioned-sentinel");
    const version = await newVersion(setId);
    expect(new URL(version.upload).origin).toBe(server.downloadOrigin);
    const answer = await upload(version.upload, packFiles(sentinelFolder));
    expect(answer.status).toBe(200);
    const ready = await settled(version.id);
    expect(ready.attributes).toMatchObject({ status: "ready", "error-message": null, source: "tfe-api" });
    expect(Object.keys(ready.attributes["status-timestamps"]).sort()).toEqual([
      "ingressing-at",
      "pending-at",
      "ready-at",
    ]);
    expect(ready.links.upload).toBeUndefined();
    const set = await call(server, "GET", `/api/v2/policy-sets/${setId}?include=current_version`);
    expect(set.body.data.attributes.versioned).toBe(true);
    expect(set.body.data.relationships["current-version"].data.id).toBe(version.id);
    expect(set.body.included[0].attributes.status).toBe("ready");
    // The link is spent: a second upload to it is refused.
    expect((await upload(version.upload, packFiles(sentinelFolder))).status).toBe(409);
  });

  it("errors a folder the service could not read, naming the file, and keeps the last ready version current", async () => {
    const setId = await newSet("versioned-broken");
    const good = await newVersion(setId);
    await upload(good.upload, packFiles(sentinelFolder));
    await settled(good.id);
    const cases: [Map<string, Uint8Array>, RegExp][] = [
      [new Map([["policy.sentinel", text("main = rule { true }\n")]]), /no sentinel\.hcl at the root/],
      [new Map([["policies.hcl", text("")]]), /it has policies\.hcl, the file of an OPA set: set kind to "opa"/],
      [new Map([["sentinel.hcl", text('policy "x" {\n  source = \n')]]), /sentinel\.hcl:\d+/],
      [
        new Map([["sentinel.hcl", text('module "m" {\n  source = "./missing.sentinel"\n}\n')]]),
        /sentinel\.hcl:2: module "m": \.\/missing\.sentinel is not in the folder/,
      ],
      [
        new Map([
          ["sentinel.hcl", text('policy "p" {\n  source = "./p.sentinel"\n}\n')],
          ["p.sentinel", text('import "tfplan-funcs"\nmain = rule { true }\n')],
        ]),
        /p\.sentinel:1 imports "tfplan-funcs", which is no Sentinel import/,
      ],
    ];
    for (const [files, message] of cases) {
      const version = await newVersion(setId);
      expect((await upload(version.upload, packFiles(files))).status).toBe(200);
      const errored = await settled(version.id);
      expect(errored.attributes.status).toBe("errored");
      expect(errored.attributes["error-message"]).toMatch(message);
    }
    const set = await call(server, "GET", `/api/v2/policy-sets/${setId}`);
    expect(set.body.data.relationships["current-version"].data.id).toBe(good.id);
    expect(set.body.data.relationships["newest-version"].data.id).not.toBe(good.id);
  });

  it("reads an OPA folder whose Rego is shared across files", async () => {
    const setId = await newSet("versioned-opa", "opa");
    const version = await newVersion(setId);
    const folder = new Map([
      [
        "policies.hcl",
        text('policy "deny-public" {\n  query = "data.terraform.deny"\n  enforcement_level = "mandatory"\n}\n'),
      ],
      ["deny.rego", text("package terraform\nimport data.utils\ndeny contains msg if { utils.public[msg] }\n")],
      ["lib/utils.rego", text('package utils\npublic contains "x" if { false }\n')],
    ]);
    await upload(version.upload, packFiles(folder));
    expect((await settled(version.id)).attributes.status).toBe("ready");
  });

  it("reads a Terraform policy folder: ready with policy files; errored without one, or with one that does not parse", async () => {
    const setId = await newSet("versioned-tfpolicy", "tfpolicy");
    const shown = await call(server, "GET", `/api/v2/policy-sets/${setId}`);
    expect(shown.body.data.attributes).toMatchObject({ kind: "tfpolicy", overridable: null });
    const example = collectFolder(
      join(__dirname, "..", "..", "examples", "quickstart", "policy-sets", "terraform-policy"),
    );
    const ready = await newVersion(setId);
    await upload(ready.upload, packFiles(example.files));
    expect((await settled(ready.id)).attributes.status).toBe("ready");

    const empty = await newVersion(setId);
    await upload(empty.upload, packFiles(new Map([["README.md", text("policies elsewhere\n")]])));
    expect((await settled(empty.id)).attributes).toMatchObject({
      status: "errored",
      "error-message": expect.stringMatching(/no \.policy\.hcl file at the root of the folder/),
    });
    const broken = await newVersion(setId);
    await upload(broken.upload, packFiles(new Map([["a.policy.hcl", text('resource_policy "x" "y" {\n')]])));
    expect((await settled(broken.id)).attributes).toMatchObject({
      status: "errored",
      "error-message": expect.stringMatching(/^a\.policy\.hcl:\d+,\d+/),
    });
    expect(
      (await call(server, "GET", `/api/v2/policy-sets/${setId}`)).body.data.relationships["current-version"].data.id,
    ).toBe(ready.id);
    const listed = await call(
      server,
      "GET",
      `/api/v2/organizations/${organization}/policy-sets?filter%5Bkind%5D=tfpolicy`,
    );
    expect(listed.body.data.map((set: { id: string }) => set.id)).toEqual([setId]);
  });

  it("refuses a Terraform policy on the Policies API, saying where its code lives", async () => {
    const answer = await call(server, "POST", `/api/v2/organizations/${organization}/policies`, {
      body: {
        data: { type: "policies", attributes: { name: "tf", kind: "tfpolicy", "enforcement-level": "mandatory" } },
      },
    });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain("its code lives in a policy set's versions");
  });

  it("refuses hostile archives with 422 naming the entry, and errors the version", async () => {
    const setId = await newSet("versioned-hostile");
    const cases: [Buffer, RegExp][] = [
      [rawTar([{ path: "../escape.sentinel", type: "File", body: "x" }]), /"\.\.\/escape\.sentinel" leaves the folder/],
      [rawTar([{ path: "/etc/passwd", type: "File", body: "x" }]), /"\/etc\/passwd" leaves the folder/],
      [
        rawTar([{ path: "link", type: "SymbolicLink", linkpath: "../../etc/passwd" }]),
        /link links to \.\.\/\.\.\/etc\/passwd, outside/,
      ],
      [rawTar([{ path: "tty", type: "CharacterDevice" }]), /tty is a CharacterDevice/],
      [Buffer.from("not gzip at all"), /not gzip'd/],
    ];
    for (const [archive, message] of cases) {
      const version = await newVersion(setId);
      const answer = await upload(version.upload, archive);
      expect(answer.status).toBe(422);
      expect(((await answer.json()) as { errors: { detail: string }[] }).errors[0]?.detail).toMatch(message);
      const errored = await settled(version.id);
      expect(errored.attributes["error-message"]).toMatch(message);
    }
  });

  it("counts what links read as, not the archive's entries: 400 files and 400 links to their folder answer 413 at once", async () => {
    const setId = await newSet("versioned-links");
    const version = await newVersion(setId);
    const entries = [
      ...Array.from({ length: 400 }, (_, index) => ({ path: `files/f${index}.txt`, type: "File", body: "x" })),
      ...Array.from({ length: 400 }, (_, index) => ({
        path: `links/l${index}`,
        type: "SymbolicLink",
        linkpath: "../files",
      })),
    ];
    const archive = rawTar(entries);
    expect(archive.length).toBeLessThan(64 * 1024);
    const started = performance.now();
    const answer = await upload(version.upload, archive);
    const took = performance.now() - started;
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { errors: { detail: string }[] }).errors[0]?.detail).toMatch(
      /the archive its links read as more than 10000 files/,
    );
    // It answered without reading 160,400 entries: the server took other requests meanwhile.
    expect((await call(server, "GET", "/api/v2/ping")).status).toBe(204);
    console.log(`400 files and 400 links to their folder: 413 in ${Math.round(took)} ms`);
  });

  it("answers 413 to an archive that unpacks past the limit (a gzip bomb) and keeps the version waiting", async () => {
    const setId = await newSet("versioned-bomb");
    const version = await newVersion(setId);
    const bomb = rawTar([{ path: "zeros", type: "File", body: "\0".repeat(60 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect((await upload(version.upload, bomb)).status).toBe(413);
    const pending = await call(server, "GET", `/api/v2/policy-set-versions/${version.id}`);
    expect(pending.body.data.attributes.status).toBe("pending");
    expect((await upload(version.upload, Buffer.alloc(11 * 1024 * 1024))).status).toBe(413);
  });

  it("moves a version forward once: a second upload that arrived while it waited, and fails late, leaves it ready", async () => {
    const setId = await newSet("versioned-once");
    const version = await newVersion(setId);
    // The late upload is let in while the version waits, and sends its (broken) body only after the first settled.
    const target = new URL(version.upload);
    let release: () => void = () => {};
    const late = new Promise<{ status: number; body: string }>((done, fail) => {
      const request = httpRequest(
        target,
        { method: "PUT", headers: { "content-type": "application/octet-stream", "content-length": "64" } },
        (response) => {
          let body = "";
          response
            .on("data", (chunk) => (body += chunk))
            .on("end", () => done({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on("error", fail);
      request.write(Buffer.alloc(32, 1));
      release = () => request.end(Buffer.alloc(32, 2));
    });
    await new Promise((done) => setTimeout(done, 100));
    expect((await upload(version.upload, packFiles(sentinelFolder))).status).toBe(200);
    expect((await settled(version.id)).attributes.status).toBe("ready");
    release();
    const answer = await late;
    expect(answer.status).toBe(409);
    expect((await settled(version.id)).attributes).toMatchObject({ status: "ready", "error-message": null });
  });

  it("refuses a forged or tampered link with 403, and a link sent with a token changes nothing about that", async () => {
    const setId = await newSet("versioned-forged");
    const version = await newVersion(setId);
    const tampered = version.upload.replace(/signature=[^&]+/, "signature=forged");
    expect((await upload(tampered, packFiles(sentinelFolder))).status).toBe(403);
  });

  it("keeps sets of policies and sets of versions apart (422)", async () => {
    const policy = await createPolicy(server, "loose-policy");
    const policiesSet = await newSet("holds-policies");
    await call(server, "POST", `/api/v2/policy-sets/${policiesSet}/relationships/policies`, {
      body: { data: [{ type: "policies", id: policy.id }] },
    });
    expect((await call(server, "POST", `/api/v2/policy-sets/${policiesSet}/versions`)).status).toBe(422);
    const versionedSet = await newSet("holds-versions");
    const version = await newVersion(versionedSet);
    const joining = await call(server, "POST", `/api/v2/policy-sets/${versionedSet}/relationships/policies`, {
      body: { data: [{ type: "policies", id: policy.id }] },
    });
    expect(joining.status).toBe(422);
    expect(version.id).toMatch(/^polsetver-/);
  });
});

describe("policy set version uploads and the server's upload budget", () => {
  it("holds archives within the budget code uploads share: past it, 503 with Retry-After, and the version waits", async () => {
    const tight = await start({ uploadBufferBudgetBytes: 1024 * 1024 });
    try {
      const created = await call(tight, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
        body: { data: { type: "policy-sets", attributes: { name: "budgeted" } } },
      });
      const version = await call(tight, "POST", `/api/v2/policy-sets/${created.body.data.id}/versions`);
      const answer = await upload(version.body.data.links.upload, Buffer.alloc(2 * 1024 * 1024));
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(tight.uploadMetrics.peakTotalBufferedBytes).toBeLessThanOrEqual(1024 * 1024);
      const waiting = await call(tight, "GET", `/api/v2/policy-set-versions/${version.body.data.id}`);
      expect(waiting.body.data.attributes.status).toBe("pending");
    } finally {
      await tight.close();
    }
  });
});

describe("policy set versions across a server kill", () => {
  it("reads again at start a version whose archive was stored before the kill", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ingress-"));
    const file = join(directory, "data.db");
    try {
      const first = await startServer({ seed, data: file });
      await first.close();
      const storage = new Storage(file);
      const created = storage.createPolicySet({
        organization,
        name: "interrupted",
        description: null,
        kind: "sentinel",
        vcsRepo: null,
        policiesPath: null,
        policyUpdatePatterns: [],
        global: false,
        overridable: null,
        agentEnabled: false,
        policyToolVersion: "latest",
        policyIds: [],
        scope: { workspaces: [], projects: [], "workspace-exclusions": [], "project-exclusions": [] },
      });
      if (created === "name-taken") throw new Error("taken");
      const version = storage.createVersion(created.id);
      expect(storage.storeArchive(version.id, packFiles(sentinelFolder))).toBe(true);
      storage.close();
      const second = await startServer({ seed, data: file });
      try {
        const answer = await fetch(`${second.url}/api/v2/policy-set-versions/${version.id}`, {
          headers: { authorization: `Bearer ${second.token}` },
        });
        expect(((await answer.json()) as { data: { attributes: { status: string } } }).data.attributes.status).toBe(
          "ready",
        );
      } finally {
        await second.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe("work the server does after its answer", () => {
  it.each([
    ["an Error", new Error("database is locked"), "database is locked"],
    ["something else thrown", "database is locked", "database is locked"],
    ["undefined", undefined, "undefined"],
  ])(
    "says a failure it did not settle itself (%s), rather than end the process with an unhandled rejection",
    async (_kind, thrown, said) => {
      const storage = new Storage(":memory:");
      const unhandled: unknown[] = [];
      const collect = (reason: unknown) => unhandled.push(reason);
      process.on("unhandledRejection", collect);
      const written: string[] = [];
      const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      });
      try {
        storage.inBackground(() => Promise.reject(thrown));
        await storage.settle();
        // An unhandled rejection is reported after the microtasks that could have handled it.
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        spy.mockRestore();
        process.off("unhandledRejection", collect);
        storage.close();
      }
      expect(unhandled).toEqual([]);
      expect(written.join("")).toContain(`background work failed: ${said}`);
    },
  );
});

describe("what an errored version says", () => {
  it("says what failed, whatever was thrown", () => {
    expect(ingressErrorMessage(new Error("disk full"))).toBe("Failed to ingress: disk full");
    expect(ingressErrorMessage("tar: unexpected end of file")).toBe("Failed to ingress: tar: unexpected end of file");
    expect(ingressErrorMessage(undefined)).toBe("Failed to ingress: undefined");
  });
});
