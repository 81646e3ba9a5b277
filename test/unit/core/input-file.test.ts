import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import {
  decodeUtf8,
  firstInvalidUtf8,
  INPUT_LIMITS,
  type InputSpec,
  jsonErrorAt,
  readInputBytes,
  readInputText,
  readStdinText,
  yamlErrorAt,
} from "../../../src/core/input-file.ts";
import { TEMPLATE_MAX_BYTES } from "../../../src/snapshot/_template.ts";
import { thrown } from "../../support/reject.ts";

const SPEC: InputSpec = { flag: "--recipe", what: "a recipe file", maxBytes: 1024 };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-input-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (path: string, spec: InputSpec = SPEC) => {
  const err = thrown(() => readInputText(path, spec));
  expect(err.code).toBe("INVALID_REQUEST");
  expect(err.message.startsWith(`--recipe ${JSON.stringify(path)}: `)).toBe(true);
  return err.message;
};

describe("readInputText", () => {
  test("a regular file, and a symlink to one, read whole; a BOM dropped", () => {
    writeFileSync(join(dir, "r.yaml"), "\uFEFFa: 1\n");
    symlinkSync(join(dir, "r.yaml"), join(dir, "link.yaml"));
    expect(readInputText(join(dir, "r.yaml"), SPEC)).toBe("a: 1\n");
    expect(readInputText(join(dir, "link.yaml"), SPEC)).toBe("a: 1\n");
  });

  test("exactly the cap is read; one byte more is refused, naming the size and the cap", () => {
    writeFileSync(join(dir, "exact"), "x".repeat(1024));
    expect(readInputText(join(dir, "exact"), SPEC).length).toBe(1024);
    writeFileSync(join(dir, "over"), "x".repeat(1025));
    expect(refusal(join(dir, "over"))).toContain("1025 bytes, above the 1 KiB limit of a recipe file");
  });

  test("a sparse file of 3 GiB is refused from its stat, without reading it", () => {
    const path = join(dir, "sparse");
    writeFileSync(path, "");
    truncateSync(path, 3 * 1024 ** 3);
    expect(refusal(path, { ...SPEC, maxBytes: 64 * 1024 * 1024 })).toContain(
      "3221225472 bytes, above the 64 MiB limit",
    );
  });

  test("special files are refused without being opened: /dev/zero, a FIFO, a directory, a socket", () => {
    expect(refusal("/dev/zero")).toContain("a character device, not a regular file");
    const fifo = join(dir, "fifo");
    spawnSync("mkfifo", [fifo]);
    // opening a FIFO for reading blocks until a writer comes: this returns, so it was never opened
    expect(refusal(fifo)).toContain("a named pipe, not a regular file");
    mkdirSync(join(dir, "d"));
    expect(refusal(join(dir, "d"))).toContain("a directory, not a regular file");
    const sock = Bun.listen({ unix: join(dir, "s.sock"), socket: { data() {} } });
    try {
      expect(refusal(join(dir, "s.sock"))).toContain("a socket, not a regular file");
    } finally {
      sock.stop(true);
    }
  });

  test("missing, empty path, NUL, a symlink loop", () => {
    expect(refusal(join(dir, "none"))).toContain("no such file");
    expect(refusal("")).toContain("an empty path");
    expect(refusal("a\0b")).toContain("NUL byte");
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    expect(refusal(join(dir, "loop-a"))).toContain("a loop of symbolic links");
  });

  test("invalid UTF-8 is refused with the offset of its first bad byte, never replaced", () => {
    writeFileSync(join(dir, "bad"), Buffer.from([0x61, 0x3a, 0x20, 0xc3, 0x28]));
    expect(refusal(join(dir, "bad"))).toContain("not UTF-8 text (an invalid byte at offset 3)");
  });

  test("no message holds a byte of the file", () => {
    const secret = "token: sk-0123456789abcdef\xff";
    writeFileSync(
      join(dir, "secret"),
      Buffer.concat([Buffer.from(secret, "latin1"), Buffer.alloc(2000, 0x41)]),
    );
    const err = thrown(() => readInputText(join(dir, "secret"), SPEC));
    expect(`${err.message} ${err.remedy}`).not.toContain("sk-0123");
  });

  test("the deadline is read between chunks: a read past it is refused", () => {
    writeFileSync(join(dir, "big"), Buffer.alloc(9 * 1024 * 1024, 0x61));
    let t = 0;
    const err = thrown(() =>
      readInputBytes(join(dir, "big"), { ...SPEC, maxBytes: 16 * 1024 * 1024 }, () => (t += 40_000)),
    );
    expect(err.message).toContain("not read within 60 s");
  });
});

describe("UTF-8", () => {
  test("firstInvalidUtf8 agrees with the strict decoder on every edge", () => {
    const cases: [number[], number][] = [
      [[0x61, 0x62], 2],
      [[0xc0, 0x80], 0], // overlong
      [[0xe0, 0x80, 0x80], 0], // overlong
      [[0xed, 0xa0, 0x80], 0], // surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0xe2, 0x82], 1], // truncated
      [[0xf0, 0x9f, 0x98, 0x80, 0xff], 4],
    ];
    for (const [bytes, at] of cases) {
      const b = new Uint8Array(bytes);
      expect(firstInvalidUtf8(b)).toBe(at);
      const decoded = decodeUtf8(b);
      expect("text" in decoded).toBe(at === b.length);
    }
  });
});

describe("readStdinText", () => {
  const stream = (...chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
        c.close();
      },
    });
  const pw: InputSpec = { flag: "--password-stdin", what: "a password", maxBytes: 8 };

  test("reads to the end within the cap; more is refused", async () => {
    expect(await readStdinText(pw, stream("hun", "ter2\n"))).toBe("hunter2\n");
    const err = await readStdinText(pw, stream("12345", "67890")).catch((e: unknown) => e as Error);
    expect((err as Error).message).toContain("more than 8 bytes on standard input");
    expect((err as Error).message).not.toContain("12345");
  });

  test("an endless stdin stops at the cap", async () => {
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new Uint8Array(4).fill(0x61));
      },
    });
    await expect(readStdinText(pw, endless)).rejects.toThrow("more than 8 bytes");
  });
});

describe("yamlErrorAt", () => {
  test("line, column and code — never the text around the error", () => {
    let caught: unknown;
    try {
      parse('users:\n- name: u\n  user:\n    token: "s3cr3t-token\n', { prettyErrors: true });
    } catch (err) {
      caught = err;
    }
    expect((caught as Error).message).toContain("s3cr3t");
    const at = yamlErrorAt(caught);
    expect(at).toMatch(/^at line \d+, column \d+ \([A-Z_]+\)$/);
    expect(at).not.toContain("s3cr3t");
    expect(yamlErrorAt({ mark: { line: 3, column: 0 } })).toBe("at line 4, column 1");
    expect(yamlErrorAt(new Error("x"))).toBe("(no position given)");
  });
});

describe("jsonErrorAt", () => {
  test("the position of the first character JSON cannot take, never the text", () => {
    expect(jsonErrorAt('{\n  "auths": {\n    "r": {"auth": "c2VjcmV0"}}\n  } }')).toBe("at line 4, column 5");
    expect(jsonErrorAt('{"auth": "unterminated')).toBe("at line 1, column 23 (the text ends early)");
    expect(jsonErrorAt('{"a": 1;}')).toBe("at line 1, column 8");
    expect(jsonErrorAt('{"a": nul}')).toBe("at line 1, column 7");
    expect(jsonErrorAt("{not json")).toBe("at line 1, column 2");
    expect(jsonErrorAt('{"a": [1, -2.5e3, true]}')).toBe("(no position given)");
  });
});

describe("README states the caps the reader applies", () => {
  test("every row of the Security section's table is INPUT_LIMITS' value", async () => {
    const readme = await Bun.file(join(import.meta.dir, "../../../README.md")).text();
    const section = readme.slice(readme.indexOf("## Security"), readme.indexOf("## Exit codes"));
    const rows = new Map(
      [...section.matchAll(/^ {2}\| (.+?) +\| (\d+) (KiB|MiB|GiB) +\|$/gm)].map((m) => [
        m[1] as string,
        Number(m[2]) * 1024 ** (["KiB", "MiB", "GiB"].indexOf(m[3] as string) + 1),
      ]),
    );
    const expected: [string, number][] = [
      ["kubeconfig", INPUT_LIMITS.kubeconfig],
      ["a CA, certificate or key file (kubeconfig, --ca-file)", INPUT_LIMITS.pem],
      ["--recipe", INPUT_LIMITS.recipe],
      ["--snapshot, diff -b/--target, one snapshot of --fleet", INPUT_LIMITS.snapshot],
      ["--fleet (all files, or one multi-document file)", INPUT_LIMITS.fleet],
      ["--config, --cluster-config, provider dumps", INPUT_LIMITS.config],
      ["--template", INPUT_LIMITS.template],
      ["Docker config.json", INPUT_LIMITS.dockerConfig],
      ["image push / sign / verify archive", INPUT_LIMITS.archive],
      ["image sign --key, image verify --key", INPUT_LIMITS.pem],
      ["--password-stdin", INPUT_LIMITS.password],
      ["a kubeconfig user's token-file", INPUT_LIMITS.token],
    ];
    expect([...rows.entries()]).toEqual(expected);
    expect(INPUT_LIMITS.clusterConfig).toBe(INPUT_LIMITS.config);
    expect(INPUT_LIMITS.providerDump).toBe(INPUT_LIMITS.config);
    expect(TEMPLATE_MAX_BYTES).toBe(INPUT_LIMITS.template);
  });
});
