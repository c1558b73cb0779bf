// A deterministic ZIP writer and a strict reader, enough for the store packages
// (scripts/pack.mjs) and the tests that open them: entries in the order given, one fixed
// timestamp, no extra fields, deflated unless deflating does not make an entry smaller.
// Same entries, same bytes (given node's bundled zlib).
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** 1980-01-01 00:00:00, the earliest DOS time: no build time leaks into a package. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const STORED = 0;
const DEFLATED = 8;
/** Made by "Unix", ZIP 2.0: the external attributes carry a plain file's mode (0644). */
const MADE_BY = (3 << 8) | 20;
const VERSION_NEEDED = 20;
const FILE_MODE = 0o100644;
const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO 3309) of `bytes`. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** `entries`: `[{name, data: Buffer}]`, written in that order. Returns the archive. */
export function writeZip(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  const seen = new Set();
  for (const { name, data } of entries) {
    if (seen.has(name)) throw new Error(`zip: ${name} twice`);
    seen.add(name);
    if (!/^[\x21-\x7e][\x20-\x7e]*$/.test(name) || name.startsWith('/') || name.split('/').includes('..')) {
      throw new Error(`zip: refusing the entry name ${JSON.stringify(name)}`);
    }
    const nameBytes = Buffer.from(name, 'ascii');
    const deflated = deflateRawSync(data, { level: 9 });
    const method = deflated.length < data.length ? DEFLATED : STORED;
    const body = method === DEFLATED ? deflated : data;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(VERSION_NEEDED, 4);
    local.writeUInt16LE(0, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_HEADER, 0);
    central.writeUInt16LE(MADE_BY, 4);
    central.writeUInt16LE(VERSION_NEEDED, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE((FILE_MODE << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const centralSize = centrals.reduce((sum, b) => sum + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20);
  if (offset > 0xffffffff || entries.length > 0xffff) throw new Error('zip: too big for a ZIP without ZIP64');
  return Buffer.concat([...locals, ...centrals, end]);
}

/**
 * Reads an archive `writeZip` could have written: `[{name, data}]` in the central
 * directory's order. Throws on anything else (no comment, no extra fields, no data
 * descriptors or encryption, the fixed timestamp, local and central headers agreeing,
 * CRCs and sizes right, nothing between or after the entries).
 */
export function readZip(zip) {
  const fail = (why) => { throw new Error(`zip: ${why}`); };
  if (zip.length < 22) fail('too short');
  const endAt = zip.length - 22;
  if (zip.readUInt32LE(endAt) !== END_OF_CENTRAL) fail('no end of central directory (or a comment)');
  const count = zip.readUInt16LE(endAt + 10);
  const centralSize = zip.readUInt32LE(endAt + 12);
  const centralAt = zip.readUInt32LE(endAt + 16);
  if (centralAt + centralSize !== endAt) fail('the central directory does not end where the end record begins');
  const entries = [];
  let at = centralAt;
  let expectedLocal = 0;
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_HEADER) fail(`central header ${i} missing`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const size = zip.readUInt32LE(at + 20);
    const rawSize = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    if (flags !== 0) fail(`entry ${i}: flags ${flags}`);
    // The literal 1980-01-01 00:00 (not DOS_TIME/DOS_DATE): a writer taking the clock fails here.
    if (zip.readUInt16LE(at + 12) !== 0 || zip.readUInt16LE(at + 14) !== 0x21) fail(`entry ${i}: a timestamp other than 1980-01-01 00:00`);
    if (zip.readUInt16LE(at + 30) || zip.readUInt16LE(at + 32)) fail(`entry ${i}: extra field or comment`);
    const localAt = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('ascii');
    at += 46 + nameLength;
    if (localAt !== expectedLocal) fail(`${name}: not right after the previous entry`);
    if (zip.readUInt32LE(localAt) !== LOCAL_HEADER) fail(`${name}: local header missing`);
    const local = zip.subarray(localAt, localAt + 30);
    const central = zip.subarray(at - 46 - nameLength);
    if (!local.subarray(8, 26).equals(central.subarray(10, 28))) fail(`${name}: local and central headers differ`);
    if (local.readUInt16LE(26) !== nameLength || local.readUInt16LE(28) !== 0) fail(`${name}: local name or extra field differs`);
    if (zip.subarray(localAt + 30, localAt + 30 + nameLength).toString('ascii') !== name) fail(`${name}: local name differs`);
    const bodyAt = localAt + 30 + nameLength;
    const body = zip.subarray(bodyAt, bodyAt + size);
    const data = method === DEFLATED ? inflateRawSync(body) : method === STORED ? Buffer.from(body) : fail(`${name}: method ${method}`);
    if (data.length !== rawSize) fail(`${name}: size ${data.length}, header says ${rawSize}`);
    if (crc32(data) !== crc) fail(`${name}: CRC mismatch`);
    entries.push({ name, data });
    expectedLocal = bodyAt + size;
  }
  if (expectedLocal !== centralAt) fail('bytes between the last entry and the central directory');
  if (at !== endAt) fail('the central directory holds more than its entries');
  return entries;
}
