// The store packages (scripts/pack.mjs): the manifest's icons exist at the sizes it
// declares, `npm run pack` is deterministic (same files, same bytes), each package holds
// exactly the shipped files and its own browser's manifest, and the Firefox id stays put.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { EXTENSION_DIR, pack, packageEntries, shippedFiles } from '../../scripts/pack.mjs';
import { readZip, writeZip } from '../../scripts/zip.mjs';
import { ICON_SIZES, iconPath } from '../../scripts/icons.mjs';

const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, 'manifest.json'), 'utf8'));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Changing it orphans every installed copy (a new add-on to Firefox and AMO). */
const GECKO_ID = 'executor@orchestrator.invalid';

/** A PNG's width and height from its IHDR chunk, which must come first. */
function pngSize(bytes) {
  assert.ok(bytes.subarray(0, 8).equals(PNG_SIGNATURE), 'a PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('ascii'), 'IHDR', 'IHDR first');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The alpha channel of an 8-bit RGBA, non-interlaced PNG (what icons.mjs writes), row by row. */
function pngAlpha(bytes) {
  const { width, height } = pngSize(bytes);
  assert.deepEqual([...bytes.subarray(24, 29)], [8, 6, 0, 0, 0], '8-bit RGBA, not interlaced');
  const idat = [];
  for (let at = 8; at < bytes.length;) {
    const length = bytes.readUInt32BE(at);
    if (bytes.subarray(at + 4, at + 8).toString('ascii') === 'IDAT') idat.push(bytes.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  let prior = Buffer.alloc(stride);
  const alpha = [];
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= 4 ? row[i - 4] : 0;
      const b = prior[i];
      const c = i >= 4 ? prior[i - 4] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      row[i] = (row[i] + [0, a, b, (a + b) >> 1, paeth][filter]) & 0xff;
    }
    alpha.push([...row].filter((_, i) => i % 4 === 3));
    prior = row;
  }
  return alpha;
}

function withTempDir(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'orc-pack-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every icon the manifest names exists, a PNG of the size it is declared at', () => {
  const declared = [...Object.entries(manifest.icons), ...Object.entries(manifest.action.default_icon)];
  assert.deepEqual(Object.keys(manifest.icons).map(Number), ICON_SIZES, 'the stores\' sizes: 16, 32, 48, 96, 128');
  for (const [size, path] of declared) {
    const { width, height } = pngSize(readFileSync(join(EXTENSION_DIR, path)));
    assert.deepEqual({ path, width, height }, { path, width: Number(size), height: Number(size) });
  }
  for (const size of ICON_SIZES) assert.equal(manifest.icons[size], iconPath(size));
});

test('the 128 is a 96-pixel icon with 16 transparent pixels a side (the Chrome Web Store\'s rule)', () => {
  const alpha = pngAlpha(readFileSync(join(EXTENSION_DIR, iconPath(128))));
  const inBorder = (x, y) => x < 16 || y < 16 || x >= 112 || y >= 112;
  const border = alpha.flatMap((row, y) => row.filter((_, x) => inBorder(x, y)));
  assert.ok(border.every((a) => a === 0), 'the padding is transparent');
  assert.equal(alpha[64][64], 255, 'the middle is opaque');
  assert.equal(alpha[64][20], 255, 'the tile reaches close to the padding');
});

test('npm run pack: same files, same bytes, the fixed timestamp in every entry', () => {
  withTempDir((dir) => {
    const first = pack(join(dir, 'a'));
    const second = pack(join(dir, 'b'));
    for (const browser of ['chrome', 'firefox']) {
      const a = readFileSync(first[browser]);
      assert.ok(a.equals(readFileSync(second[browser])), `${browser}: two packs, one byte sequence`);
      readZip(a); // strict: 1980-01-01 00:00 everywhere, CRCs right, nothing else in the file
    }
    assert.match(first.chrome, /orchestrator-0\.1\.0-chrome\.zip$/);
    assert.match(first.firefox, /orchestrator-0\.1\.0-firefox\.xpi$/);
  });
});

test('each package holds the manifest, src/ and the icons\' PNGs, byte for byte, nothing else', () => {
  const files = shippedFiles();
  assert.ok(files.includes('src/platform/background.js') && files.includes('src/ui/popup.html') && files.includes('icons/icon-128.png'));
  for (const script of manifest.content_scripts.flatMap((c) => c.js)) assert.ok(files.includes(script), script);
  for (const path of files) {
    assert.match(path, /^(src\/.+|icons\/icon-\d+\.png)$/, `${path} ships`);
    assert.doesNotMatch(path, /\.map$|(^|\/)\.|test-config\.json/, `${path} ships`);
  }
  withTempDir((dir) => {
    const paths = pack(dir);
    for (const browser of ['chrome', 'firefox']) {
      const entries = readZip(readFileSync(paths[browser]));
      assert.deepEqual(entries.map((e) => e.name), ['manifest.json', ...files], `${browser}: the manifest first, then sorted`);
      for (const { name, data } of entries.slice(1)) {
        assert.ok(data.equals(readFileSync(join(EXTENSION_DIR, name))), `${browser}: ${name} as in the repository`);
      }
    }
  });
});

test('each browser gets its own manifest keys, everything else as in the repository', () => {
  const [chromeManifest, firefoxManifest] = ['chrome', 'firefox']
    .map((browser) => JSON.parse(packageEntries(browser)[0].data.toString('utf8')));
  assert.equal(chromeManifest.browser_specific_settings, undefined);
  assert.equal(chromeManifest.background.scripts, undefined);
  assert.equal(chromeManifest.background.service_worker, 'src/platform/background.js');
  assert.equal(firefoxManifest.background.service_worker, undefined);
  assert.equal(firefoxManifest.minimum_chrome_version, undefined);
  assert.deepEqual(firefoxManifest.background.scripts, ['src/platform/background.js']);
  assert.equal(firefoxManifest.browser_specific_settings.gecko.id, GECKO_ID);
  // What reaches the daemon from a page (its state, notices, the end of the latest answer):
  // website content, declared as AMO's policies ask (extension/README.md, "Packing").
  assert.deepEqual(firefoxManifest.browser_specific_settings.gecko.data_collection_permissions, { required: ['websiteContent'] });
  for (const shaped of [chromeManifest, firefoxManifest]) {
    const { browser_specific_settings: _b, minimum_chrome_version: _m, background: _g, ...rest } = manifest;
    const { browser_specific_settings: _b2, minimum_chrome_version: _m2, background: _g2, ...shapedRest } = shaped;
    assert.deepEqual(shapedRest, rest);
  }
  const npmPackage = JSON.parse(readFileSync(join(EXTENSION_DIR, 'package.json'), 'utf8'));
  assert.equal(npmPackage.version, manifest.version, 'package.json and the manifest name one version');
});

test('the manifest\'s name and description fit the stores\' limits', () => {
  // Chrome Web Store: the description is the listing's summary, at most 132 characters (longer
  // is refused at upload); the name at most 75; Chromium shows a short_name of 12 at most.
  assert.ok(manifest.description.length <= 132, `description: ${manifest.description.length} characters`);
  assert.ok(manifest.name.length <= 75, `name: ${manifest.name.length} characters`);
  assert.ok(manifest.short_name.length <= 12, `short_name: ${manifest.short_name.length} characters`);
});

test('the ZIP reader refuses a flipped byte, and the writer a name that climbs out', () => {
  const zip = writeZip([{ name: 'a.txt', data: Buffer.from('hello hello hello hello') }]);
  assert.deepEqual(readZip(zip).map((e) => e.data.toString()), ['hello hello hello hello']);
  const stored = writeZip([{ name: 'a.txt', data: Buffer.from('hi') }]);
  const flipped = Buffer.from(stored);
  flipped[30 + 'a.txt'.length] ^= 0x01; // the first byte of the stored data
  assert.throws(() => readZip(flipped), /zip: a\.txt: CRC mismatch/);
  assert.throws(() => writeZip([{ name: '../x', data: Buffer.alloc(1) }]), /refusing/);
  assert.throws(() => writeZip([{ name: 'x', data: Buffer.alloc(1) }, { name: 'x', data: Buffer.alloc(1) }]), /twice/);
});
