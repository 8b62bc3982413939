// Policy sets, their versions and their parameters on the wire (policy-sets-api.md): vocabulary, rules and documents,
// shared by the client, the local server and its OpenAPI document.
import { z } from "zod";
import {
  includedResource,
  lenientPaginationLinks,
  lenientPaginationMeta,
  listDocument,
  resourceDocument,
  resourceIdentifier,
} from "./jsonapi";
import { maxNameLength } from "./limits";
import { policyNamePattern, policySetKinds } from "./policies";

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------------------------

/** What the service's policy set ids look like (`polset-` and letters and digits): a set's name is not one. */
export const policySetIdPattern = /^polset-[A-Za-z0-9]+$/;

/** The relationships that scope a set, each with the type of the resources it holds. */
export const scopeRelationships = {
  workspaces: "workspaces",
  "workspace-exclusions": "workspaces",
  projects: "projects",
  "project-exclusions": "projects",
} as const;
export type ScopeRelationship = keyof typeof scopeRelationships;
export const scopeRelationshipNames = Object.keys(scopeRelationships) as ScopeRelationship[];

/** Every relationship a set's policies or scope change through (`POST`/`DELETE /policy-sets/:id/relationships/x`). */
export type PolicySetRelationship = "policies" | ScopeRelationship;

/** `include` values of list and show; the service spells them with `_`, the relationships with `-`. */
export const policySetIncludes = [
  "policies",
  "workspaces",
  "projects",
  "workspace_exclusions",
  "project_exclusions",
  "current_version",
  "newest_version",
] as const;
export type PolicySetInclude = (typeof policySetIncludes)[number];

export const policySetVersionStatuses = ["pending", "ingressing", "ready", "errored"] as const;
export type PolicySetVersionStatus = (typeof policySetVersionStatuses)[number];

/**
 * Largest upload the local server takes, gzip'd, and largest folder once unpacked. The service states none; real
 * policy sets are kilobytes, and these bound what a hostile archive (a gzip bomb) can cost.
 */
export const maxPolicySetArchiveBytes = 10 * 1024 * 1024;
export const maxPolicySetUnpackedBytes = 50 * 1024 * 1024;
export const maxPolicySetFiles = 10_000;

/** What a version's archive holds, as the limits above count it: the gzip'd bytes, its files and their bytes. */
export interface PolicySetArchiveSize {
  archiveBytes: number;
  files: number;
  /** The files' own bytes, without the archive's headers. */
  unpackedBytes: number;
}

/**
 * Why an archive of this size is refused (the server answers 413 with it), or undefined when it fits. One rule for
 * the server and for `PolicySet`'s preview, so a folder that passes preview is not refused at `up`.
 */
export function policySetArchiveSizeProblem(size: PolicySetArchiveSize): string | undefined {
  const fix = "leave files out with a .terraformignore";
  if (size.files > maxPolicySetFiles) {
    return `the archive holds ${size.files} files; a version holds at most ${maxPolicySetFiles}: ${fix}`;
  }
  if (size.unpackedBytes > maxPolicySetUnpackedBytes) {
    return `the archive's files hold ${size.unpackedBytes} bytes; a version holds at most ${maxPolicySetUnpackedBytes}: ${fix}`;
  }
  if (size.archiveBytes > maxPolicySetArchiveBytes) {
    return `the archive is ${size.archiveBytes} bytes gzip'd; a version upload takes at most ${maxPolicySetArchiveBytes}: ${fix}`;
  }
  return undefined;
}

/**
 * The local server's stand-in for a VCS provider's webhook (`POST /_local/vcs-push`): a push to a seeded repository,
 * and the versions it made. Not the service's API.
 */
export const vcsPushRequest = z.strictObject({
  identifier: z.string().min(1, "is required: the repository, as the seed's vcsRepositories names it"),
  branch: z.string().min(1).optional(),
});
export const vcsPushAnswer = z.strictObject({ versions: z.array(z.string()) });

/** `category` of every policy set parameter. */
export const parameterCategory = "policy-set";

// ---------------------------------------------------------------------------------------------------------------
// Requests (validated strictly: the client before sending, the server on arrival)
// ---------------------------------------------------------------------------------------------------------------

const name = z
  .string()
  .min(1, "is required")
  .max(maxNameLength, `is longer than ${maxNameLength} characters: shorten it`)
  .regex(policyNamePattern, "may hold only letters, digits, '-' and '_'");

// Not strict: go-tfe sends whole documents where an identifier would do (attributes and relationships beside id
// and type), and the service reads only the identifiers. This library's client sends the identifiers alone.
function identifiers<Type extends string>(type: Type) {
  return z.array(z.object({ id: z.string().min(1), type: z.literal(type) }));
}

/** Body of `POST` and `DELETE /policy-sets/:id/relationships/:relationship`. Both answer 204 with no body. */
export function relationshipRequest(relationship: PolicySetRelationship) {
  const type = relationship === "policies" ? "policies" : scopeRelationships[relationship];
  return z.object({ data: identifiers(type).min(1) });
}
export const policySetPoliciesRequest = relationshipRequest("policies");
export type RelationshipRequest = { data: { id: string; type: string }[] };

/**
 * `vcs-repo` of a set read from version control, as requests send it: the repository (`org/repo`), its branch
 * (default: the repository's default), whether submodules are ingested, and one credential, an OAuth token or a
 * GitHub App installation. go-tfe sends `tags-regex` among them, which sets ignore.
 */
export const vcsRepoRequest = z
  .strictObject({
    identifier: z.string().min(1, "is required: the repository, e.g. acme/policy-library"),
    branch: z.string().nullable().optional(),
    "ingress-submodules": z.boolean().nullable().optional(),
    "oauth-token-id": z.string().min(1).nullable().optional(),
    "github-app-installation-id": z.string().min(1).nullable().optional(),
    "tags-regex": z.string().nullable().optional(),
  })
  .refine((repo) => (repo["oauth-token-id"] ? 1 : 0) + (repo["github-app-installation-id"] ? 1 : 0) === 1, {
    message: "needs exactly one of oauth-token-id and github-app-installation-id",
  });

const settableAttributes = {
  description: z.string().nullable().optional(),
  global: z.boolean().optional(),
  overridable: z.boolean().nullable().optional(),
  "agent-enabled": z.boolean().optional(),
  "policy-tool-version": z.string().min(1).optional(),
  /** Version control: null turns a set back into one that takes uploads. */
  "vcs-repo": vcsRepoRequest.nullable().optional(),
  /** The folder of the repository that holds the set (`sentinel.hcl` / `policies.hcl`). */
  "policies-path": z.string().nullable().optional(),
  /** Path globs whose changes make a new version. */
  "policy-update-patterns": z.array(z.string().min(1)).optional(),
};

const createRelationships = z
  .strictObject({
    policies: z.strictObject({ data: identifiers("policies") }).optional(),
    workspaces: z.strictObject({ data: identifiers("workspaces") }).optional(),
    "workspace-exclusions": z.strictObject({ data: identifiers("workspaces") }).optional(),
    projects: z.strictObject({ data: identifiers("projects") }).optional(),
    "project-exclusions": z.strictObject({ data: identifiers("projects") }).optional(),
  })
  .optional();

/** Body of `POST /organizations/:org/policy-sets`. */
export const createPolicySetRequest = z.strictObject({
  data: z.strictObject({
    type: z.literal("policy-sets"),
    attributes: z.strictObject({ name, kind: z.enum(policySetKinds).optional(), ...settableAttributes }),
    relationships: createRelationships,
  }),
});
export type CreatePolicySetRequest = z.infer<typeof createPolicySetRequest>;

/** Body of `PATCH /policy-sets/:id`: attributes left out keep their value; `kind` cannot change. */
export const updatePolicySetRequest = z.strictObject({
  data: z.strictObject({
    type: z.literal("policy-sets"),
    id: z.string().min(1).optional(),
    attributes: z.strictObject({ name: name.optional(), ...settableAttributes }).default({}),
  }),
});
export type UpdatePolicySetRequest = z.infer<typeof updatePolicySetRequest>;

const parameterKey = z.string().min(1, "is required").max(maxNameLength);

/** Body of `POST /policy-sets/:id/parameters`. */
export const createParameterRequest = z.strictObject({
  data: z.strictObject({
    type: z.literal("vars"),
    attributes: z.strictObject({
      key: parameterKey,
      value: z.string().optional(),
      category: z.literal(parameterCategory),
      sensitive: z.boolean().optional(),
    }),
  }),
});
export type CreateParameterRequest = z.infer<typeof createParameterRequest>;

/** Body of `PATCH /policy-sets/:id/parameters/:parameterId`. */
export const updateParameterRequest = z.strictObject({
  data: z.strictObject({
    type: z.literal("vars"),
    id: z.string().min(1).optional(),
    attributes: z
      .strictObject({ key: parameterKey.optional(), value: z.string().optional(), sensitive: z.boolean().optional() })
      .default({}),
  }),
});
export type UpdateParameterRequest = z.infer<typeof updateParameterRequest>;

// ---------------------------------------------------------------------------------------------------------------
// Responses: strict (what the local server sends) and lenient (what the client accepts from any service)
// ---------------------------------------------------------------------------------------------------------------

const identifier = <Type extends string>(type: Type) =>
  z.strictObject({ id: z.string().min(1), type: z.literal(type) });
const toMany = <Type extends string>(type: Type) => z.strictObject({ data: z.array(identifier(type)) });
const toOne = <Type extends string>(type: Type) => z.strictObject({ data: identifier(type).nullable() });

export const policySetResource = z.strictObject({
  id: z.string().regex(policySetIdPattern),
  type: z.literal("policy-sets"),
  attributes: z.strictObject({
    name: z.string().regex(policyNamePattern),
    description: z.string().nullable(),
    kind: z.enum(policySetKinds),
    global: z.boolean(),
    /** Null on Sentinel sets that do not run in the agent: there is nothing to override. */
    overridable: z.boolean().nullable(),
    "agent-enabled": z.boolean(),
    "policy-tool-version": z.string().min(1),
    "policies-path": z.string().nullable(),
    "policy-update-patterns": z.array(z.string()),
    "vcs-repo": z
      .strictObject({
        identifier: z.string().min(1),
        "display-identifier": z.string().min(1),
        branch: z.string(),
        "ingress-submodules": z.boolean(),
        "oauth-token-id": z.string().nullable(),
        "github-app-installation-id": z.string().nullable(),
        "repository-http-url": z.string(),
        "service-provider": z.string(),
      })
      .nullable(),
    versioned: z.boolean(),
    "policy-count": z.number().int().nonnegative(),
    "workspace-count": z.number().int().nonnegative(),
    "project-count": z.number().int().nonnegative(),
    "created-at": z.iso.datetime(),
    "updated-at": z.iso.datetime(),
  }),
  relationships: z.strictObject({
    organization: z.strictObject({ data: identifier("organizations") }),
    policies: toMany("policies"),
    /** Left out on a global set, as the service does. */
    workspaces: toMany("workspaces").optional(),
    projects: toMany("projects").optional(),
    "workspace-exclusions": toMany("workspaces"),
    "project-exclusions": toMany("projects"),
    "current-version": toOne("policy-set-versions"),
    "newest-version": toOne("policy-set-versions"),
  }),
  links: z.strictObject({ self: z.string().min(1) }),
});
export type PolicySetResource = z.infer<typeof policySetResource>;

const timestamp = z.iso.datetime();

export const policySetVersionResource = z.strictObject({
  id: z.string().regex(/^polsetver-[A-Za-z0-9]+$/),
  type: z.literal("policy-set-versions"),
  attributes: z.strictObject({
    /** `tfe-api` for uploads; the provider's name (`github`, `gitlab`, ...) for a version read from version control. */
    source: z.string().min(1),
    status: z.enum(policySetVersionStatuses),
    "status-timestamps": z.strictObject({
      "pending-at": timestamp.optional(),
      "ingressing-at": timestamp.optional(),
      "ready-at": timestamp.optional(),
      "errored-at": timestamp.optional(),
    }),
    error: z.string().nullable(),
    "error-message": z.string().nullable(),
    /** Null for uploads; the commit a version-control version was read from. */
    "ingress-attributes": z
      .strictObject({
        "commit-sha": z.string(),
        "commit-url": z.string(),
        branch: z.string(),
        identifier: z.string(),
        "is-pull-request": z.boolean(),
        "sender-username": z.string(),
      })
      .nullable(),
    "created-at": timestamp,
    "updated-at": timestamp,
  }),
  relationships: z.strictObject({ "policy-set": z.strictObject({ data: identifier("policy-sets") }) }),
  /** `upload` while the version waits for its archive. */
  links: z.strictObject({ self: z.string().min(1), upload: z.string().min(1).optional() }),
});
export type PolicySetVersionResource = z.infer<typeof policySetVersionResource>;

export const parameterResource = z.strictObject({
  id: z.string().regex(/^var-[A-Za-z0-9]+$/),
  type: z.literal("vars"),
  attributes: z.strictObject({
    key: z.string().min(1),
    /** Empty for a sensitive parameter: its value is write-only. */
    value: z.string(),
    category: z.literal(parameterCategory),
    sensitive: z.boolean(),
  }),
  relationships: z.strictObject({ configurable: z.strictObject({ data: identifier("policy-sets") }) }),
});
export type ParameterResource = z.infer<typeof parameterResource>;

const includedAnything = includedResource(z.string().min(1));

export const policySetDocument = resourceDocument(policySetResource, includedAnything);
export const policySetListDocument = listDocument(policySetResource, includedAnything);
export const policySetVersionDocument = z.strictObject({ data: policySetVersionResource });
export const parameterDocument = z.strictObject({ data: parameterResource });
export const parameterListDocument = listDocument(parameterResource, z.never());
export type PolicySetDocument = z.infer<typeof policySetDocument>;
export type PolicySetListDocument = z.infer<typeof policySetListDocument>;
export type PolicySetVersionDocument = z.infer<typeof policySetVersionDocument>;
export type ParameterDocument = z.infer<typeof parameterDocument>;
export type ParameterListDocument = z.infer<typeof parameterListDocument>;

const lenientToMany = z.object({ data: z.array(resourceIdentifier).nullish() }).optional();
const lenientToOne = z.object({ data: resourceIdentifier.nullish() }).optional();

export const lenientPolicySetResource = z.object({
  id: z.string(),
  type: z.literal("policy-sets"),
  attributes: z.object({
    name: z.string(),
    description: z.string().nullish(),
    kind: z.string().nullish(),
    global: z.boolean().nullish(),
    overridable: z.boolean().nullish(),
    "agent-enabled": z.boolean().nullish(),
    "policy-tool-version": z.string().nullish(),
    "policies-path": z.string().nullish(),
    "policy-update-patterns": z.array(z.string()).nullish(),
    "vcs-repo": z
      .object({
        identifier: z.string(),
        branch: z.string().nullish(),
        "ingress-submodules": z.boolean().nullish(),
        "oauth-token-id": z.string().nullish(),
        "github-app-installation-id": z.string().nullish(),
        "service-provider": z.string().nullish(),
      })
      .nullish(),
    versioned: z.boolean().nullish(),
    "policy-count": z.number().nullish(),
    "workspace-count": z.number().nullish(),
    "project-count": z.number().nullish(),
    "updated-at": z.string().nullish(),
  }),
  relationships: z
    .object({
      organization: lenientToOne,
      policies: lenientToMany,
      workspaces: lenientToMany,
      projects: lenientToMany,
      "workspace-exclusions": lenientToMany,
      "project-exclusions": lenientToMany,
      "current-version": lenientToOne,
      "newest-version": lenientToOne,
    })
    .optional(),
});
export type LenientPolicySetResource = z.infer<typeof lenientPolicySetResource>;

export const lenientPolicySetDocument = z.object({ data: lenientPolicySetResource });
export const lenientPolicySetListDocument = z.object({
  data: z.array(lenientPolicySetResource),
  meta: z.object({ pagination: lenientPaginationMeta.optional() }).passthrough().optional(),
  links: lenientPaginationLinks.optional(),
});

export const lenientPolicySetVersionDocument = z.object({
  data: z.object({
    id: z.string(),
    type: z.literal("policy-set-versions"),
    attributes: z.object({
      status: z.string(),
      source: z.string().nullish(),
      "error-message": z.string().nullish(),
      "created-at": z.string().nullish(),
      "ingress-attributes": z
        .object({ "commit-sha": z.string().nullish(), branch: z.string().nullish(), identifier: z.string().nullish() })
        .nullish(),
    }),
    links: z.object({ upload: z.string().nullish() }).partial().optional(),
  }),
});

const lenientParameterResource = z.object({
  id: z.string(),
  type: z.literal("vars"),
  attributes: z.object({ key: z.string(), value: z.string().nullish(), sensitive: z.boolean().nullish() }),
});
export const lenientParameterDocument = z.object({ data: lenientParameterResource });
export const lenientParameterListDocument = z.object({
  data: z.array(lenientParameterResource),
  meta: z.object({ pagination: lenientPaginationMeta.optional() }).passthrough().optional(),
  links: lenientPaginationLinks.optional(),
});
