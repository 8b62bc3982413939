// Limits the service sets or, where it is silent, sane ones of ours: shared by the client, the provider checks and
// the local server so that what one accepts the others accept too.

/** Longest policy or registry module name, in characters. The service states none; 256 fits any real name. */
export const maxNameLength = 256;
/** Longest deprecation link, in characters: the length browsers and proxies reliably carry. */
export const maxLinkLength = 2048;
/** Most problems one error answer lists; the rest are counted, so a body of 20,000 bad entries stays small. */
export const maxReportedErrors = 20;

/**
 * Strict SemVer 2.0.0 (semver.org's own pattern): numbers without leading zeros, dot-separated pre-release and
 * build identifiers, e.g. 1.2.3, 1.2.3-rc.1, 1.2.3+build.5. `01.0.0` is not a version.
 */
export const semanticVersionPattern =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/**
 * Whether `link` is a web address to show users: http(s), or no scheme at all with a host-like start
 * (`www.example.com/upgrade`), because the service itself returns such links. Every other scheme (`javascript:`,
 * `data:`, `ftp:`) is refused.
 */
export function isWebLink(link: string): boolean {
  if (link.length > maxLinkLength || /\s/.test(link)) return false;
  const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(link);
  let url: URL;
  try {
    url = new URL(hasScheme ? link : `https://${link}`);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return false;
  return url.hostname === "localhost" || /^[^.]+(\.[^.]+)+$/.test(url.hostname);
}
