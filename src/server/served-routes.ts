/** One route a server serves: the origin (the API, or the download origin of signed links), method and pattern. */
export interface ServedRoute {
  origin: "api" | "downloads";
  method: string;
  url: string;
}
