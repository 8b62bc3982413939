// What the packaging changes in a Node binary before and after the SEA injection, and what the tests read back, in
// the three executable formats the plugin ships: no I/O, a Buffer in, a Buffer (or a finding) out.
//
// - Mach-O (macOS): a signed binary whose bytes change is killed at start, so the signature Node's build carries is
//   removed before the injection (as `codesign --remove-signature` does) and a new one made after (rcodesign).
// - PE (Windows): the Authenticode signature is removed before the injection (as `osslsigncode remove-signature`
//   does): left in, it would be a signature that no longer matches, not an unsigned file. The checksum is made
//   right once the file is final.
// - Any format: the SEA blob the executable carries, and whether its fuse is flipped.

/** The fuse Node looks for: `:1` once a blob is injected. */
export const seaFuse = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** The Mach-O segment Node looks in for its blob (`--macho-segment-name` of Node's SEA docs). */
export const machOSeaSegment = "NODE_SEA";

const machO64Magic = 0xfeedfacf;
const loadSegment64 = 0x19;
const loadCodeSignature = 0x1d;
const cpuTypeArm64 = 0x0100000c;

interface LoadCommand {
  cmd: number;
  offset: number;
  size: number;
}

function loadCommands(file: Buffer): LoadCommand[] {
  if (file.readUInt32LE(0) !== machO64Magic) throw new Error("not a 64-bit little-endian Mach-O file");
  const commands: LoadCommand[] = [];
  let offset = 32;
  for (let index = 0; index < file.readUInt32LE(16); index++) {
    const size = file.readUInt32LE(offset + 4);
    commands.push({ cmd: file.readUInt32LE(offset), offset, size });
    offset += size;
  }
  return commands;
}

const name16 = (file: Buffer, offset: number) =>
  file
    .subarray(offset, offset + 16)
    .toString("latin1")
    .replace(/\0+$/, "");

function segment(file: Buffer, name: string): LoadCommand | undefined {
  return loadCommands(file).find(
    (command) => command.cmd === loadSegment64 && name16(file, command.offset + 8) === name,
  );
}

/** The code signature's place in the file (LC_CODE_SIGNATURE), or undefined for an unsigned file. */
export function machOSignature(file: Buffer): { offset: number; size: number } | undefined {
  const command = loadCommands(file).find((each) => each.cmd === loadCodeSignature);
  return command && { offset: file.readUInt32LE(command.offset + 8), size: file.readUInt32LE(command.offset + 12) };
}

/**
 * `file` without its code signature: the load command taken out, the signature's bytes (the end of __LINKEDIT, and
 * of the file) cut off, __LINKEDIT shortened to what is left.
 */
export function removeMachOSignature(file: Buffer): Buffer {
  const commands = loadCommands(file);
  const command = commands.find((each) => each.cmd === loadCodeSignature);
  if (!command) return file;
  const dataOffset = file.readUInt32LE(command.offset + 8);
  const linkEdit = segment(file, "__LINKEDIT");
  if (!linkEdit) throw new Error("a signed Mach-O file with no __LINKEDIT segment");
  const linkEditOffset = Number(file.readBigUInt64LE(linkEdit.offset + 40));
  const linkEditEnd = linkEditOffset + Number(file.readBigUInt64LE(linkEdit.offset + 48));
  if (linkEditEnd !== file.length || dataOffset < linkEditOffset) {
    throw new Error("the code signature is not the end of __LINKEDIT and of the file: not a layout this removes");
  }
  const unsigned = Buffer.from(file.subarray(0, dataOffset));
  const pageSize = unsigned.readUInt32LE(4) === cpuTypeArm64 ? 0x4000 : 0x1000;
  const fileSize = dataOffset - linkEditOffset;
  unsigned.writeBigUInt64LE(BigInt(fileSize), linkEdit.offset + 48);
  unsigned.writeBigUInt64LE(BigInt(Math.ceil(fileSize / pageSize) * pageSize), linkEdit.offset + 32);
  const commandsEnd = 32 + unsigned.readUInt32LE(20);
  unsigned.copy(unsigned, command.offset, command.offset + command.size, commandsEnd);
  unsigned.fill(0, commandsEnd - command.size, commandsEnd);
  unsigned.writeUInt32LE(unsigned.readUInt32LE(16) - 1, 16);
  unsigned.writeUInt32LE(unsigned.readUInt32LE(20) - command.size, 20);
  return unsigned;
}

/** The bytes of section `sectionName` of segment `segmentName`, or undefined where there is none. */
export function machOSection(file: Buffer, segmentName: string, sectionName: string): Buffer | undefined {
  const command = segment(file, segmentName);
  if (!command) return undefined;
  for (let index = 0; index < file.readUInt32LE(command.offset + 64); index++) {
    const section = command.offset + 72 + index * 80;
    if (name16(file, section) !== sectionName) continue;
    const offset = file.readUInt32LE(section + 48);
    return file.subarray(offset, offset + Number(file.readBigUInt64LE(section + 40)));
  }
  return undefined;
}

/** The PE's certificate table (the Authenticode signature): its file offset and size, both 0 when unsigned. */
export function peCertificateTable(file: Buffer): { entry: number; offset: number; size: number } {
  const header = file.readUInt32LE(0x3c);
  if (file.toString("latin1", header, header + 4) !== "PE\0\0") throw new Error("not a PE file");
  const optional = header + 24;
  const magic = file.readUInt16LE(optional);
  if (magic !== 0x20b && magic !== 0x10b) throw new Error(`not a PE32 or PE32+ optional header (${magic})`);
  // The data directories follow the optional header's fixed part; the certificate table is the fifth.
  const entry = optional + (magic === 0x20b ? 112 : 96) + 4 * 8;
  return { entry, offset: file.readUInt32LE(entry), size: file.readUInt32LE(entry + 4) };
}

/** `file` without its Authenticode signature: the certificate table's entry zeroed, its bytes (the file's end) cut. */
export function removePeSignature(file: Buffer): Buffer {
  const { entry, offset, size } = peCertificateTable(file);
  if (size === 0) return file;
  if (offset + size !== file.length) throw new Error("the certificate table is not the end of the file");
  const unsigned = Buffer.from(file.subarray(0, offset));
  unsigned.writeUInt32LE(0, entry);
  unsigned.writeUInt32LE(0, entry + 4);
  return unsigned;
}

/** Where the PE's CheckSum lies: the optional header's 64th byte. */
const peChecksumAt = (file: Buffer) => file.readUInt32LE(0x3c) + 24 + 64;

/** The PE checksum of `file` as Windows' image loader and signing tools compute it: its 16-bit words and length. */
export function peChecksum(file: Buffer): number {
  const skipped = peChecksumAt(file);
  // The words added up at once (55 million words stay far below 2^53), the carries folded back in at the end: the
  // same as folding after each word.
  let sum = 0;
  for (let at = 0; at + 1 < file.length; at += 2) sum += file.readUInt16LE(at);
  if (file.length % 2 === 1) sum += file[file.length - 1] as number;
  sum -= file.readUInt16LE(skipped) + file.readUInt16LE(skipped + 2);
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return (sum + file.length) >>> 0;
}

/**
 * `file` with its CheckSum made right again: Node's is for the file as Node built it, and the signature's removal
 * and the injection change the file. Left stale, tools that read the file (osslsigncode) call it invalid.
 */
export function withPeChecksum(file: Buffer): Buffer {
  file.writeUInt32LE(peChecksum(file), peChecksumAt(file));
  return file;
}

/** Whether the SEA fuse is flipped (`:1`): Node then runs the injected blob instead of acting as `node`. */
export function seaFuseFlipped(file: Buffer): boolean {
  return file.includes(`${seaFuse}:1`) && !file.includes(`${seaFuse}:0`);
}

/**
 * The main script of the SEA blob an executable carries, as `node --experimental-sea-config` writes one with
 * `main: "sea-main.js"`: the blob's magic and flags, its kind, the script's path and then its code, each length a
 * 64-bit little-endian count. Undefined where the file carries no such blob.
 */
export function seaMainScript(file: Buffer): Buffer | undefined {
  const path = Buffer.from("sea-main.js");
  const pathLength = Buffer.alloc(8);
  pathLength.writeBigUInt64LE(BigInt(path.length));
  const magic = Buffer.alloc(4);
  magic.writeUInt32LE(0x0143da20);
  for (let at = file.indexOf(magic); at !== -1; at = file.indexOf(magic, at + 1)) {
    const pathAt = at + 9;
    if (!file.subarray(pathAt, pathAt + 8).equals(pathLength)) continue;
    if (!file.subarray(pathAt + 8, pathAt + 8 + path.length).equals(path)) continue;
    const codeAt = pathAt + 8 + path.length;
    const length = Number(file.readBigUInt64LE(codeAt));
    return file.subarray(codeAt + 8, codeAt + 8 + length);
  }
  return undefined;
}
