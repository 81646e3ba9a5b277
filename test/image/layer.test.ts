import { expect, test } from "bun:test";
import {
  buildLayer,
  GZIP_LEVEL,
  gunzip,
  gzipFixed,
  LayerError,
  layerFromBlob,
  treeEntries,
} from "../../src/image/_layer.ts";
import { MEDIA, sha256Digest } from "../../src/image/_oci.ts";
import { readTar, type TarEntry } from "../../src/image/_tar.ts";

const enc = new TextEncoder();
const file = (path: string, text: string, mode = 0o644): TarEntry => ({
  type: "file",
  path,
  mode,
  data: enc.encode(text),
});

test("tree order: parents made explicit (0755) and directly before their children, dirs end in /", () => {
  const entries = treeEntries([
    file("usr/local/bin/aicr", "bin", 0o755),
    { type: "dir", path: "tmp", mode: 0o1777 },
    file("a-b", "sibling after a's subtree"),
    file("a/z", "z"),
    { type: "symlink", path: "a/link", target: "z" },
    file("a/b/c", "c"),
  ]);
  expect(entries.map((e) => e.path)).toEqual([
    "a/",
    "a/b/",
    "a/b/c",
    "a/link",
    "a/z",
    "a-b",
    "tmp/",
    "usr/",
    "usr/local/",
    "usr/local/bin/",
    "usr/local/bin/aicr",
  ]);
  const modes = Object.fromEntries(entries.map((e) => [e.path, e.type === "symlink" ? "link" : e.mode]));
  expect(modes["a/"]).toBe(0o755);
  expect(modes["usr/local/bin/"]).toBe(0o755);
  expect(modes["tmp/"]).toBe(0o1777);
  expect(modes["usr/local/bin/aicr"]).toBe(0o755);
});

test("refuses absolute, dotted, duplicate and file-as-parent paths", () => {
  const refused = (entries: TarEntry[]) => expect(() => treeEntries(entries)).toThrow(LayerError);
  refused([file("/etc/passwd", "x")]);
  refused([file("a/../b", "x")]);
  refused([file("a//b", "x")]);
  refused([file("./a", "x")]);
  refused([file("a", "x"), file("a", "y")]);
  refused([file("a", "x"), file("a/b", "y")]);
});

test("a layer is byte for byte reproducible, with a fixed gzip header", () => {
  const entries = [file("usr/local/bin/aicr", "#!binary\n".repeat(1000), 0o755), file("etc/x", "x")];
  const a = buildLayer(entries);
  const b = buildLayer([...entries].reverse());
  expect(Buffer.from(a.blob).equals(Buffer.from(b.blob))).toBe(true);
  expect(a.mediaType).toBe(MEDIA.layerGzip);
  expect(a.digest).toBe(sha256Digest(a.blob));
  expect(a.size).toBe(a.blob.length);
  const tar = gunzip(a.blob);
  expect(a.diffId).toBe(sha256Digest(tar));
  // magic, deflate, no flags, mtime 0, XFL 0 (level 6: neither fastest nor best), OS 255 (unknown)
  expect(GZIP_LEVEL).toBe(6);
  expect([...a.blob.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
});

test("tar headers carry nothing of the build host: owner 0:0, no names, mtime 0, ustar", () => {
  const tar = gunzip(buildLayer([file("usr/local/bin/aicr", "bin", 0o755)]).blob);
  const members = readTar(tar);
  expect(members.map((m) => [m.path, m.type, m.mode.toString(8)])).toEqual([
    ["usr/", "dir", "755"],
    ["usr/local/", "dir", "755"],
    ["usr/local/bin/", "dir", "755"],
    ["usr/local/bin/aicr", "file", "755"],
  ]);
  for (let at = 0; at < 4 * 512; at += 512) {
    const h = tar.subarray(at, at + 512);
    const text = (from: number, len: number) => new TextDecoder().decode(h.subarray(from, from + len));
    expect(text(108, 8)).toBe("0000000\0"); // uid
    expect(text(116, 8)).toBe("0000000\0"); // gid
    expect(text(136, 12)).toBe("00000000000\0"); // mtime
    expect(text(257, 6)).toBe("ustar\0");
    expect(h.subarray(265, 329).every((x) => x === 0)).toBe(true); // uname, gname
  }
});

test("a carried blob gives back the same digest and diff ID; a non-gzip blob is refused", () => {
  const built = buildLayer([file("lib/x", "x")]);
  const again = layerFromBlob(built.blob);
  expect(again).toEqual(built);
  expect(() => layerFromBlob(enc.encode("not gzip"))).toThrow(LayerError);
});

test("gzipFixed clears the timestamp and OS byte whatever zlib wrote", () => {
  const out = gzipFixed(enc.encode("hello"));
  expect(out.subarray(4, 8).every((b) => b === 0)).toBe(true);
  expect(out[9]).toBe(0xff);
  expect(new TextDecoder().decode(gunzip(out))).toBe("hello");
});
