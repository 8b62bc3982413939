// The wire contract: what client, server and OpenAPI document agree on. It imports nothing from them.
export * from "./jsonapi";
export * from "./module-versions";
export * from "./paths";
export * from "./policies";
export * from "./policy-sets";
export * from "./registry";
export * from "./registry-modules";
export * from "./workspaces";
