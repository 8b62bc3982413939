import type { FastifyRequest } from "fastify";
import { ApiError, notFound } from "./errors";
import type { Storage, TokenRecord } from "./storage";

declare module "fastify" {
  interface FastifyRequest {
    principal: TokenRecord | null;
  }
}

/** The stored token named by `Authorization: Bearer <token>`, or a 401. */
export function authenticate(storage: Storage, authorization: string | undefined): TokenRecord {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match?.[1]) {
    throw ApiError.single(401, "unauthorized", "Send the header 'Authorization: Bearer <API token>'.");
  }
  const principal = storage.token(match[1]);
  if (!principal) throw ApiError.single(401, "unauthorized", "The API token is not valid.");
  return principal;
}

export type Permission = "read" | "managePolicies" | "manageModules";

/** A 404 unless the request's token may do `permission` in `organization`: no permission looks like no resource. */
export function authorize(request: FastifyRequest, organization: string, permission: Permission): TokenRecord {
  const principal = request.principal;
  if (!principal?.organizations.includes(organization)) throw notFound();
  if (permission !== "read" && !principal[permission]) throw notFound();
  return principal;
}
