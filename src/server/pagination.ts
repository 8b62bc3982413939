import type { FastifyRequest } from "fastify";
import { defaultPageSize, maxPageSize } from "../contract/policies";
import { badParameter } from "./errors";

export type Query = Record<string, string | undefined>;

/** The server's own origin as the client reached it (the socket, not the Host header, which a client chooses). */
export function ownOrigin(request: FastifyRequest): string {
  const { localAddress = "", localPort } = request.socket;
  const host = localAddress.includes(":") ? `[${localAddress}]` : localAddress;
  return `${request.protocol}://${host}:${localPort}`;
}

export function positiveInteger(query: Query, parameter: string, fallback: number): number {
  const text = query[parameter];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw badParameter(parameter, "must be a whole number of 1 or more");
  return value;
}

export function oneOf<T extends string>(query: Query, parameter: string, allowed: readonly T[]): T | undefined {
  const value = query[parameter];
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw badParameter(parameter, `must be one of ${allowed.map((item) => `"${item}"`).join(", ")}`);
  }
  return value as T;
}

/** The page a list request asks for: `page[number]` from 1, `page[size]` capped at the service's maximum. */
export function requestedPage(query: Query): { pageNumber: number; pageSize: number; offset: number } {
  const pageNumber = positiveInteger(query, "page[number]", 1);
  const pageSize = Math.min(maxPageSize, positiveInteger(query, "page[size]", defaultPageSize));
  return { pageNumber, pageSize, offset: (pageNumber - 1) * pageSize };
}

/** A list answer's `links` and `meta.pagination`, each link repeating the request's own query. */
export function paginationOf(
  request: FastifyRequest<{ Querystring: Query }>,
  path: string,
  page: { pageNumber: number; pageSize: number },
  totalCount: number,
) {
  const { pageNumber, pageSize } = page;
  const totalPages = Math.max(1, Math.ceil(totalCount / pageSize));
  // A page past the end has no previous page either (the service's Kaminari: nil when out of range), not one
  // that is itself past the end.
  const prevPage = pageNumber > 1 && pageNumber <= totalPages ? pageNumber - 1 : null;
  const nextPage = pageNumber < totalPages ? pageNumber + 1 : null;
  const pageLink = (number: number) => {
    const parameters = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query)) if (value !== undefined) parameters.set(name, value);
    parameters.set("page[number]", String(number));
    parameters.set("page[size]", String(pageSize));
    return `${ownOrigin(request)}${path}?${parameters}`;
  };
  return {
    links: {
      self: pageLink(pageNumber),
      first: pageLink(1),
      prev: prevPage === null ? null : pageLink(prevPage),
      next: nextPage === null ? null : pageLink(nextPage),
      last: pageLink(totalPages),
    },
    meta: {
      pagination: {
        "current-page": pageNumber,
        "page-size": pageSize,
        "prev-page": prevPage,
        "next-page": nextPage,
        "total-pages": totalPages,
        "total-count": totalCount,
      },
    },
  };
}
