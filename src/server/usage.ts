// The server command's help, apart from the server so that it shows even where the server cannot load.

import { packageDoc } from "../process/package-version";

export const serverUsage = `Usage: tfe-governance-server [options]

A local HCP Terraform / Terraform Enterprise API for policies and module version deprecation.

Options:
  --port N          Port of the API (default 0: a free port, printed on start).
  --host ADDRESS    Interface to listen on (default 127.0.0.1).
  --download-port N Port of the origin that serves signed policy-code downloads (default 0: a free port).
  --download-host NAME
                    Host name of the download URLs: another name for the same interface, so that Go clients (which
                    keep the token on a redirect to the same host name) do not send it there. Default: localhost
                    when listening on a loopback or wildcard address.
  --data FILE       SQLite file holding all data (default :memory:, lost on exit). Survives kill -9 and restarts.
                    Its directory is created if missing.
  --seed FILE       JSON seed: organizations, tokens, policySets, workspaces, projects, modules, vcsRepositories,
                    oauthTokens, githubAppInstallations (see ${packageDoc("local-server.md")}). Applied at every start;
                    without it an empty store gets organization "example-org" (Plus) and one random token.
                    "--seed quickstart" is the seed the package ships: what the quickstart program expects
                    (organization "acme", a token, a policy set, module acme/vpc/aws). A file named so: ./quickstart.
  --rate-limit N    Answer 429 beyond N requests per second per token, as the service does (default: no limit).
  --faults SPEC     Fault rules as inline JSON or a JSON file: [{"route":"POST /api/v2/organizations/:organization/policies",
                    "status":503,"share":0.5}] or {"seed":7,"rules":[...]}. A rule takes status (500, 502, 503, 504),
                    reset (true) and/or latencyMs, plus share (0-1, default 1), times (first N hits only) and
                    afterHandler (fail the answer after the change is made).
  --tls             Serve https with a self-signed certificate made at start for localhost, 127.0.0.1, ::1,
                    --host and --download-host. The certificate is written to a file the banner names; clients
                    trust it with NODE_EXTRA_CA_CERTS=FILE (Node), SSL_CERT_FILE=FILE (Go: terraform, go-tfe) or
                    curl --cacert FILE.
  --tls-out FILE    Where --tls writes its certificate (default: a new temporary directory).
  --tls-cert FILE   Serve https with this PEM certificate (chain) ...
  --tls-key FILE    ... and this PEM private key.
  --quiet           Do not print the request log (a line per request); the banner, with the tokens, still prints.
  --help            Show this text.

Tokens are printed on start; requests need "Authorization: Bearer <token>". The OpenAPI document is at /api/openapi.json.`;
