import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";

/** A certificate chain and its private key, both PEM, as `https.createServer` takes them. */
export interface TlsCredentials {
  cert: string;
  key: string;
}

// Node's crypto makes keys, signs and parses certificates but cannot build one, so the few DER structures of one
// self-signed certificate are written here (X.509, RFC 5280; DER, ITU-T X.690).

function length(size: number): Buffer {
  if (size < 0x80) return Buffer.from([size]);
  const bytes: number[] = [];
  for (let rest = size; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const explicit = (tagNumber: number, content: Buffer) => tlv(0xa0 | tagNumber, content);
const octetString = (content: Buffer) => tlv(0x04, content);
const bitString = (content: Buffer) => tlv(0x03, Buffer.from([0]), content);
const utf8String = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));
const booleanTrue = tlv(0x01, Buffer.from([0xff]));

/**
 * A non-negative big-endian integer as DER writes it: the fewest bytes, with one 0x00 in front only where the top bit
 * is set. Leading zero bytes are dropped: DER refuses them ("illegal padding"), and a random serial starts with one
 * about once in 256 certificates.
 */
export function derPositiveInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const minimal = bytes.length === 0 ? Buffer.from([0]) : bytes.subarray(start);
  return tlv(0x02, (minimal[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal);
}

function objectIdentifier(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      base128.unshift(0x80 | (value & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime (YYMMDDHHMMSSZ) up to 2049, GeneralizedTime after, as RFC 5280 4.1.2.5 requires. */
function time(date: Date): Buffer {
  const text = date
    .toISOString()
    .replace(/[-:T]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(text.slice(2))) : tlv(0x18, Buffer.from(text));
}

function ipAddressBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split(".").map(Number));
  const [head = "", tail] = address.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return Buffer.from(all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]));
}

function subjectAlternativeNames(hosts: readonly string[]): Buffer {
  const names = hosts.map((host) => {
    const bare = host.replace(/^\[|\]$/g, "");
    if (isIPv4(bare) || isIPv6(bare)) return tlv(0x87, ipAddressBytes(bare));
    return tlv(0x82, Buffer.from(bare, "ascii"));
  });
  return sequence(...names);
}

const ecdsaWithSha256 = sequence(objectIdentifier("1.2.840.10045.4.3.2"));

/**
 * A self-signed certificate (ECDSA P-256, SHA-256) for `hosts` (host names and IP addresses), valid from a minute
 * ago for `days`. It is its own authority (`CA:TRUE`, as `openssl req -x509` makes them), so the one PEM file
 * is what clients trust: `NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, `curl --cacert`.
 */
export function selfSignedCertificate(hosts: readonly string[], days = 30): TlsCredentials {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const spki = publicKey.export({ type: "spki", format: "der" });
  const name = sequence(set(sequence(objectIdentifier("2.5.4.3"), utf8String("tfe-governance-server local CA"))));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const now = Date.now();
  // RFC 5280 4.2.1.2: the key identifier is the SHA-1 of the subject public key bit string.
  const publicKeyBits = spki.subarray(spki.length - 65);
  const extension = (oid: string, critical: boolean, value: Buffer) =>
    sequence(objectIdentifier(oid), ...(critical ? [booleanTrue] : []), octetString(value));
  const toBeSigned = sequence(
    explicit(0, derPositiveInteger(Buffer.from([2]))),
    derPositiveInteger(serial),
    ecdsaWithSha256,
    name,
    sequence(time(new Date(now - 60_000)), time(new Date(now + days * 86_400_000))),
    name,
    spki,
    explicit(
      3,
      sequence(
        extension("2.5.29.19", true, sequence(booleanTrue)),
        extension("2.5.29.14", false, octetString(createHash("sha1").update(publicKeyBits).digest())),
        extension("2.5.29.17", false, subjectAlternativeNames(hosts)),
      ),
    ),
  );
  const certificate = sequence(toBeSigned, ecdsaWithSha256, bitString(sign("sha256", toBeSigned, privateKey)));
  const base64Lines = certificate.toString("base64").match(/.{1,64}/g) ?? [];
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64Lines.join("\n")}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** A self-signed certificate for the names a local client may use: loopback by name and address, and `hosts`. */
export function localCertificate(hosts: readonly string[]): TlsCredentials {
  const named = hosts.filter((host) => host !== "0.0.0.0" && host !== "::");
  return selfSignedCertificate([...new Set(["localhost", "127.0.0.1", "::1", ...named])]);
}
