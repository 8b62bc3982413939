// The routes of policy set versions: a version made for an upload, and read back with its status.

import type { FastifyInstance } from "fastify";
import { type PolicySetVersionDocument, policySetVersionDocument } from "../../contract/policy-sets";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { uploadPath } from "../download-origin";
import { ApiError, notFound } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import type { PolicySetVersionRecord } from "../storage";

import { bothKindsMessage, loadPolicySet, type SetParams, send } from "./policy-set-access";

/** An upload link lasts an hour, as the service's does. */
const uploadLinkTtlMs = 60 * 60 * 1000;

export function versionDocument(
  version: PolicySetVersionRecord,
  uploadLink: string | undefined,
): PolicySetVersionDocument {
  const timestamps = Object.fromEntries(
    Object.entries(version.statusTimestamps).map(([status, at]) => [`${status}-at`, at]),
  );
  return {
    data: {
      id: version.id,
      type: "policy-set-versions",
      attributes: {
        source: version.source,
        status: version.status,
        "status-timestamps": timestamps,
        error: version.status === "errored" ? "ingress_failed" : null,
        "error-message": version.errorMessage,
        "ingress-attributes": version.ingressAttributes && {
          "commit-sha": version.ingressAttributes.commitSha,
          "commit-url": version.ingressAttributes.commitUrl,
          branch: version.ingressAttributes.branch,
          identifier: version.ingressAttributes.identifier,
          "is-pull-request": false,
          "sender-username": "tfe-governance-server",
        },
        "created-at": version.createdAt,
        "updated-at": version.updatedAt,
      },
      relationships: { "policy-set": { data: { id: version.policySetId, type: "policy-sets" } } },
      links: {
        self: `/api/v2/policy-set-versions/${version.id}`,
        ...(version.status === "pending" && uploadLink ? { upload: uploadLink } : {}),
      },
    },
  };
}

export function registerVersionRoutes(app: FastifyInstance, { storage, signer, downloadOrigin }: AppContext): void {
  const uploadLink = (versionId: string) => signer.sign(downloadOrigin(), uploadPath(versionId), uploadLinkTtlMs);

  app.post<SetParams>(
    "/api/v2/policy-sets/:policySetId/versions",
    jsonApiEndpoint({
      summary: "Create a policy set version: upload the folder's gzip'd tar to its links.upload (no token there)",
      success: { status: 201, description: "Created, pending its upload", schema: policySetVersionDocument },
      moreErrors: [422],
    }),
    async (request, reply) => {
      const policySet = loadPolicySet(storage, request, "managePolicies");
      if (policySet.policyIds.length > 0) throw ApiError.single(422, "invalid attribute", bothKindsMessage);
      if (policySet.vcsRepo) {
        throw ApiError.single(
          422,
          "invalid attribute",
          `This policy set reads from version control (${policySet.vcsRepo.identifier}): its versions come from commits, not uploads.`,
        );
      }
      const version = storage.createVersion(policySet.id);
      reply.code(201);
      return send(reply, versionDocument(version, uploadLink(version.id)));
    },
  );

  app.get<{ Params: { versionId: string } }>(
    "/api/v2/policy-set-versions/:versionId",
    jsonApiEndpoint({
      summary: "Show a policy set version: pending, ingressing, ready or errored (with error-message)",
      success: { status: 200, description: "The version", schema: policySetVersionDocument },
    }),
    async (request, reply) => {
      const version = storage.version(request.params.versionId);
      const policySet = version && storage.policySet(version.policySetId);
      if (!version || !policySet) throw notFound();
      const principal = authorize(request, policySet.organization, "read");
      // The upload link writes the set's next version: only a token that may manage policies is given one, as only
      // it may make the version. A token that may read sees the version without it.
      return send(reply, versionDocument(version, principal.managePolicies ? uploadLink(version.id) : undefined));
    },
  );
}
