// What every policy-set route shares: how it reaches the set its path names, and how it answers.

import type { FastifyReply, FastifyRequest } from "fastify";
import { jsonApiMediaType } from "../../contract/jsonapi";
import type {
  ParameterDocument,
  ParameterListDocument,
  PolicySetDocument,
  PolicySetListDocument,
  PolicySetVersionDocument,
} from "../../contract/policy-sets";
import { authorize, type Permission } from "../auth";
import { notFound } from "../errors";
import type { PolicySetRecord, Storage } from "../storage";

export type SetParams = { Params: { policySetId: string } };

/** The set named in the path, or a 404 when it is missing or the token may not `permission` it. */
export function loadPolicySet(
  storage: Storage,
  request: FastifyRequest<SetParams>,
  permission: Permission,
): PolicySetRecord {
  const policySet = storage.policySet(request.params.policySetId);
  if (!policySet) throw notFound();
  authorize(request, policySet.organization, permission);
  return policySet;
}

/** A set holds policies or versions: what a request that would mix them is told. */
export const bothKindsMessage =
  "a policy set holds individual policies or uploaded versions, never both: use another set, or remove them first";

/** Typed by the contract's documents, so the compiler holds every response to them. */
export const send = (
  reply: FastifyReply,
  body:
    | PolicySetDocument
    | PolicySetListDocument
    | PolicySetVersionDocument
    | ParameterDocument
    | ParameterListDocument,
) => reply.type(jsonApiMediaType).send(body);
