import { z } from "zod";

/**
 * Terraform's remote service discovery (`/.well-known/terraform.json`): the tfe provider reads it (always over
 * https) and takes the `tfe.v2.2` URL as the API's address. The service lists more (`modules.v1`, `state.v2`,
 * `login.v1`, `motd.v1`, ...); the local server lists only what it implements.
 */
export const serviceDiscoveryDocument = z
  .object({ "tfe.v2": z.string(), "tfe.v2.1": z.string(), "tfe.v2.2": z.string() })
  .strict();
export type ServiceDiscoveryDocument = z.infer<typeof serviceDiscoveryDocument>;
